"""The paper-scale CLIP towers' own contracts on a tiny random CLIP built in memory (no folder, no
tokenizer files): frozen, the tokenizer's ids without specials, the pad fallback, CLIP's input."""

from __future__ import annotations

import copy
import math
import re
from types import SimpleNamespace

import pytest
import torch
import torch.nn.functional as F

from paper_pipelines.pipelines.fedda import clip_towers


@pytest.fixture(scope="module")
def clip():
    from transformers import CLIPConfig, CLIPModel

    small = dict(hidden_size=8, intermediate_size=16, num_hidden_layers=1, num_attention_heads=2)
    config = CLIPConfig(
        text_config=dict(
            vocab_size=12,
            max_position_embeddings=10,
            bos_token_id=0,
            eos_token_id=1,
            pad_token_id=1,
            **small,
        ),
        vision_config=dict(image_size=16, patch_size=8, **small),
        projection_dim=4,
    )
    torch.manual_seed(0)
    model = CLIPModel(config)
    with torch.no_grad():
        model.logit_scale.fill_(math.log(50.0))
    return model


class _Tokenizer:
    """Letters as ids 2..; like a Hugging Face tokenizer, start (0) and end (1) are added by default."""

    bos_token_id, eos_token_id = 0, 1

    def __init__(self, pad_token_id):
        self.pad_token_id = pad_token_id

    def __call__(self, text, add_special_tokens=True):
        ids = [2 + ord(c) - ord("a") for c in text if c.isalpha()]
        return {"input_ids": [0, *ids, 1] if add_special_tokens else ids}


def test_the_towers_freeze_every_parameter(clip):
    text = clip_towers.HFClipText(clip, _Tokenizer(None))
    image = clip_towers.HFClipImage(clip)
    assert not any(p.requires_grad for p in text.parameters())
    assert not any(p.requires_grad for p in image.parameters())
    assert not text.text.training and not image.vision.training


def test_text_tower_reads_ids_without_specials_and_pads_with_eos_when_the_tokenizer_has_no_pad(
    clip,
):
    text = clip_towers.HFClipText(clip, _Tokenizer(None))
    assert text.tokens("a cab") == [2, 4, 2, 3]
    assert (text.bos_id, text.eos_id, text.pad_id) == (0, 1, 1)
    assert clip_towers.HFClipText(clip, _Tokenizer(7)).pad_id == 7
    assert text.logit_scale == pytest.approx(50.0)  # exp of CLIP's learned log-scale
    assert (text.width, text.dim, text.context_length) == (8, 4, 10)


def test_image_input_is_clamped_bicubic_resized_and_normalised(clip):
    image = clip_towers.HFClipImage(clip)
    mean = torch.tensor(clip_towers.CLIP_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(clip_towers.CLIP_STD).view(1, 3, 1, 1)
    gen = torch.Generator().manual_seed(0)
    native = torch.rand(2, 3, 16, 16, generator=gen) * 1.4 - 0.2  # some values outside [0, 1]
    torch.testing.assert_close(
        image.pixel_values(native), (native.clamp(0, 1) - mean) / std, rtol=0, atol=1e-6
    )
    for shape in ((1, 3, 10, 10), (1, 3, 16, 10), (1, 3, 10, 16)):
        small = torch.rand(*shape, generator=gen)
        resized = F.interpolate(small, size=(16, 16), mode="bicubic", align_corners=False)
        want = (resized.clamp(0, 1) - mean) / std
        torch.testing.assert_close(image.pixel_values(small), want, rtol=0, atol=1e-6)
    out = image(native)
    assert out.shape == (2, 4) and out.dtype == torch.float32


def test_clip_towers_refuse_a_bundle_without_a_model():
    message = (
        "fedda.backbone.type is clip_folder but the catalog entry fedda.clip_model is empty: point it"
        " at a local CLIP folder (type paper_pipelines.datasets.ClipFolderDataset, see"
        " conf/paper/catalog/fedda.yml)"
    )
    for bundle in (None, {}, {"tokenizer": SimpleNamespace()}):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            clip_towers.clip_towers(bundle)


def test_causal_mask_is_made_in_the_requested_dtype_and_on_the_requested_device():
    mask = clip_towers.causal_mask(3, torch.float16, torch.device("meta"))  # meta: any accelerator
    assert (mask.shape, mask.dtype, mask.device.type) == ((1, 1, 3, 3), torch.float16, "meta")
    half = clip_towers.causal_mask(2, torch.bfloat16, torch.device("cpu"))
    assert half.dtype == torch.bfloat16
    assert half[0, 0].tolist() == [[0.0, torch.finfo(torch.bfloat16).min], [0.0, 0.0]]


def test_text_tower_runs_in_the_dtype_and_on_the_device_of_its_weights(clip):
    ids = torch.tensor([[0, 2, 3, 1]])
    half = clip_towers.HFClipText(copy.deepcopy(clip).to(torch.bfloat16), _Tokenizer(None))
    soft = half.embed(ids).float()  # context vectors are trained in float32
    assert half(soft, torch.ones_like(ids), torch.tensor([3])).dtype == torch.bfloat16
    meta = clip_towers.HFClipText(copy.deepcopy(clip), _Tokenizer(None)).to("meta")
    out = meta(torch.zeros(1, 4, 8, device="meta"), torch.ones(1, 4), torch.tensor([3]))
    assert out.device.type == "meta" and out.shape == (1, 4)


def test_image_input_goes_to_the_towers_device_as_float32(clip):
    image = clip_towers.HFClipImage(clip)
    assert image.pixel_values(torch.rand(1, 3, 16, 16, dtype=torch.float64)).dtype == torch.float32
    meta = clip_towers.HFClipImage(copy.deepcopy(clip)).to("meta")
    assert meta.pixel_values(torch.rand(1, 3, 16, 16)).device.type == "meta"


def test_image_tower_feeds_its_weights_dtype_and_keeps_only_clips_weights(clip):
    half = clip_towers.HFClipImage(copy.deepcopy(clip).to(torch.bfloat16))
    out = half(torch.rand(2, 3, 16, 16))  # stored images are float32
    assert out.shape == (2, 4) and out.dtype == torch.float32
    saved = clip_towers.HFClipImage(clip).state_dict()
    assert "mean" not in saved and "std" not in saved  # CLIP's pixel statistics are constants
