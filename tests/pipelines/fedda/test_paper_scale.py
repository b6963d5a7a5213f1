"""The paper-scale path: a CLIP from a local folder and a user's domain folders, on a tiny random CLIP
saved by transformers and a few generated images (no download, milliseconds to a few seconds)."""

from __future__ import annotations

import string

import numpy as np
import pytest
import torch
from kedro.io import DatasetError
from PIL import Image

from paper_pipelines.datasets import ClipFolderDataset
from paper_pipelines.pipelines.fedda import clip_towers, data, nodes
from paper_pipelines.pipelines.fedda.parameters import (
    AdapterParams,
    BackboneParams,
    DataParams,
    FLParams,
    PromptParams,
    RuntimeParams,
    StudyParams,
    check_across_blocks,
)
from paper_pipelines.pipelines.fedda.towers import encode_sentences


@pytest.fixture(scope="module")
def clip_folder(tmp_path_factory):
    """A 2-layer random CLIP (text and vision) and a character-level CLIP tokenizer, saved to disk."""
    from transformers import CLIPConfig, CLIPModel, CLIPTokenizer

    folder = tmp_path_factory.mktemp("clip")
    vocab = {"<|startoftext|>": 0, "<|endoftext|>": 1}
    for c in string.ascii_lowercase:
        vocab[c] = len(vocab)
        vocab[c + "</w>"] = len(vocab)
    tokenizer = CLIPTokenizer(vocab=vocab, merges=[])
    small = dict(hidden_size=16, intermediate_size=32, num_hidden_layers=2, num_attention_heads=2)
    config = CLIPConfig(
        text_config=dict(
            vocab_size=len(vocab), max_position_embeddings=40, bos_token_id=0, eos_token_id=1,
            pad_token_id=1, **small,
        ),
        vision_config=dict(image_size=32, patch_size=8, **small),
        projection_dim=8,
    )  # fmt: skip
    torch.manual_seed(0)
    CLIPModel(config).eval().save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def bundle(clip_folder):
    return ClipFolderDataset(path=str(clip_folder)).load()


def test_clip_folder_dataset_loads_frozen_and_refuses_what_it_cannot_do(bundle, tmp_path):
    model = bundle["model"]
    assert not model.training and not any(p.requires_grad for p in model.parameters())
    assert bundle["tokenizer"].eos_token_id == 1
    with pytest.raises(DatasetError, match="no config.json"):
        ClipFolderDataset(path=str(tmp_path)).load()
    with pytest.raises(DatasetError, match="dtype"):
        ClipFolderDataset(path=str(tmp_path), dtype="int8")
    with pytest.raises(DatasetError, match="needs path"):
        ClipFolderDataset(path="")
    with pytest.raises(DatasetError, match="read-only"):
        ClipFolderDataset(path=str(tmp_path)).save({"model": None})


def test_clip_folder_dataset_casts_to_the_requested_dtype(clip_folder):
    model = ClipFolderDataset(path=str(clip_folder), dtype="bfloat16").load()["model"]
    assert {p.dtype for p in model.parameters()} == {torch.bfloat16}


def test_causal_mask_blocks_exactly_the_future():
    mask = clip_towers.causal_mask(3, torch.float32, torch.device("cpu"))
    assert mask.shape == (1, 1, 3, 3)
    blocked = mask[0, 0] < -1e30
    assert blocked.tolist() == [[False, True, True], [False, False, True], [False, False, False]]
    assert (mask[0, 0][~blocked] == 0).all()


def test_hf_clip_text_on_embeddings_equals_clips_own_text_features(bundle):
    """The soft-token path, fed the tokens' own embeddings, is CLIP's get_text_features exactly."""
    text, _ = clip_towers.clip_towers(bundle)
    tok = bundle["tokenizer"]
    ids = torch.tensor([[0, *tok("a cat", add_special_tokens=False)["input_ids"], 1]])
    ref = bundle["model"].get_text_features(input_ids=ids).pooler_output
    ours = text(text.embed(ids), torch.ones_like(ids), torch.tensor([ids.shape[1] - 1]))
    torch.testing.assert_close(ours, ref, rtol=0, atol=1e-6)
    assert (text.width, text.dim, text.context_length) == (16, 8, 40)
    assert (text.bos_id, text.eos_id, text.pad_id) == (0, 1, 1)
    assert text.logit_scale == pytest.approx(float(bundle["model"].logit_scale.exp()))


def test_right_padding_never_changes_a_clip_text_feature(bundle):
    """Causal attention: pad tokens after the EOT cannot reach it (the towers' padding contract)."""
    text, _ = clip_towers.clip_towers(bundle)
    one = encode_sentences(text, ["a cat"])
    both = encode_sentences(text, ["a cat", "a much longer sentence"])
    torch.testing.assert_close(both[0], one[0], rtol=0, atol=1e-6)


def test_hf_clip_image_normalises_resizes_and_projects(bundle):
    _, image = clip_towers.clip_towers(bundle)
    x = torch.rand(2, 3, 32, 32)
    mean = torch.tensor(clip_towers.CLIP_MEAN).view(1, 3, 1, 1)
    std = torch.tensor(clip_towers.CLIP_STD).view(1, 3, 1, 1)
    ref = bundle["model"].get_image_features(pixel_values=(x - mean) / std).pooler_output
    torch.testing.assert_close(image(x), ref, rtol=0, atol=1e-6)
    small = torch.rand(1, 3, 20, 20)
    assert image.pixel_values(small).shape == (1, 3, 32, 32)
    assert image(small).shape == (1, 8)


def test_clip_towers_need_a_loaded_folder():
    with pytest.raises(ValueError, match="fedda.clip_model is empty"):
        clip_towers.clip_towers(None)


def _folders(counts: dict[str, dict[str, int]], size: int = 12) -> dict[str, Image.Image]:
    rng = np.random.default_rng(0)
    return {
        f"{domain}/{cls}/{i:03d}": Image.fromarray(
            rng.integers(0, 255, (size, size + 2, 3), dtype=np.uint8)
        )
        for domain, classes in counts.items()
        for cls, n in classes.items()
        for i in range(n)
    }


def test_domain_folders_read_every_requested_domain_over_the_sorted_classes():
    parts = _folders(
        {"photo": {"dog": 2, "Alarm_Clock": 1}, "sketch": {"dog": 1}, "extra": {"x": 1}}
    )
    loaders = {k: (lambda im=im: im) for k, im in parts.items()}  # PartitionedDataset hands loaders
    out = data.load_domain_folders(loaders, ["sketch", "photo"], 8)
    assert out["class_names"] == ("alarm clock", "dog")
    assert list(out["domains"]) == ["sketch", "photo"]
    photo = out["domains"]["photo"]
    assert photo["images"].shape == (3, 3, 8, 8) and photo["images"].dtype == np.uint8
    assert photo["labels"].tolist() == [0, 1, 1]
    assert out["domains"]["sketch"]["labels"].tolist() == [1]
    expected = np.asarray(parts["sketch/dog/000"].resize((8, 8), Image.BICUBIC)).transpose(2, 0, 1)
    np.testing.assert_array_equal(out["domains"]["sketch"]["images"][0], expected)


def test_domain_folders_name_what_is_wrong():
    parts = _folders({"photo": {"dog": 1}})
    with pytest.raises(ValueError, match=r"names \['cartoon'\].*found: \['photo'\]"):
        data.load_domain_folders(parts, ["photo", "cartoon"], 8)
    with pytest.raises(ValueError, match="not <domain>/<class>/<image>"):
        data.load_domain_folders({"photo/dog.jpg": parts["photo/dog/000"]}, ["photo"], 8)


def test_domain_clients_split_each_folder_disjointly():
    folders = {
        "a": {"images": np.arange(10)[:, None], "labels": np.array([0, 1] * 5)},
        "b": {"images": np.arange(10, 15)[:, None], "labels": np.zeros(5, np.int64)},
    }
    clients = data.split_domain_clients(folders, 0.8, 0.0, np.random.default_rng(0))
    a = clients["a"]
    assert len(a["train_labels"]) == 8 and len(a["test_labels"]) == 2
    seen = np.concatenate([a["train_images"][:, 0], a["test_images"][:, 0]])
    assert sorted(seen.tolist()) == list(range(10))
    np.testing.assert_array_equal(
        a["train_labels"], folders["a"]["labels"][a["train_images"][:, 0]]
    )
    assert len(clients["b"]["train_labels"]) == 4 and len(clients["b"]["test_labels"]) == 1
    with pytest.raises(ValueError, match="client 'b' would get 1 training"):
        data.split_domain_clients({"b": folders["b"]}, 0.2, 0.0, np.random.default_rng(0))


def test_class_folder_names_read_as_prompt_words():
    assert data.prompt_name("Alarm_Clock") == "alarm clock"
    assert data.prompt_name("art_painting ") == "art painting"


def test_parameter_rules_of_the_paper_scale_path():
    with pytest.raises(ValueError, match="cannot be rendered"):
        DataParams(domains=["art_painting"])
    folders = DataParams(source="domain_folders", domains=["art_painting", "photo"])
    with pytest.raises(ValueError, match="set fedda.backbone.type: clip_folder"):
        check_across_blocks({"data": folders, "backbone": BackboneParams()})
    check_across_blocks({"data": folders, "backbone": BackboneParams(type="clip_folder")})
    with pytest.raises(ValueError, match="logit_scale: null"):
        check_across_blocks({"backbone": BackboneParams(logit_scale=None)})
    check_across_blocks({"backbone": BackboneParams(type="clip_folder", logit_scale=None)})


def test_the_nodes_run_fedda_on_clip_and_domain_folders(bundle):
    """Ingest to training on the CLIP path: folders -> clients -> CLIP features -> FedDDA rounds."""
    data_params = DataParams(source="domain_folders", domains=["photo", "sketch"], image_size=16)
    study = StudyParams(
        methods=["zero_shot", "fedda"], repeats=1, official_optimizer_repeats=0,
        label_skew_beta=None, label_skew_repeats=0,
    )  # fmt: skip
    backbone = BackboneParams(type="clip_folder", logit_scale=None)
    runtime = RuntimeParams(device="cpu")
    parts = _folders({"photo": {"cat": 4, "dog": 4}, "sketch": {"cat": 4, "dog": 4}})
    with pytest.raises(ValueError, match="fedda.domain_images is empty"):
        nodes.load_images(data_params, None)
    raw, info = nodes.load_images(data_params, parts)
    assert info == {
        "source": "domain_folders",
        "class_names": ["cat", "dog"],
        "domains": ["photo", "sketch"],
    }
    assert nodes.render_source_domain(raw, data_params, 0)["train_images"].shape == (0, 3, 16, 16)
    clients = nodes.render_client_domains(raw, data_params, study, 0)
    assert list(clients) == ["main_0"] and list(clients["main_0"]) == ["photo", "sketch"]
    stats = nodes.summarise_partitions(clients, info)
    assert set(stats["class"]) == {"cat", "dog"} and stats["count"].sum() == 16
    state, report = nodes.pretrain_mini_clip({}, None, backbone, None, runtime, 0)
    assert state == {} and report["steps"] == 0
    tower, pretrained = nodes.load_towers(backbone, runtime, bundle)
    # one load, both towers of the same CLIP (no second read of the folder)
    assert pretrained["vision"].vision is bundle["model"].vision_model
    assert tower.text is bundle["model"].text_model
    features = nodes.precompute_client_features(state, clients, backbone, pretrained, runtime)
    photo = features["main_0"]["photo"]
    assert photo["train_x"].shape == (len(photo["train_y"]), 8)
    assert nodes.logit_scale(backbone, tower) == pytest.approx(tower.logit_scale)
    runs, states = nodes.train_methods(
        features, tower, info, PromptParams(n_ctx=2, zero_shot_template="a photo of a {}"),
        AdapterParams(), FLParams(rounds=2, local_steps=1, batch=4), study, backbone, 0,
    )  # fmt: skip
    assert set(runs["method"]) == {"zero_shot", "fedda"}
    assert runs["accuracy"].between(0, 1).all()
    assert any(k.startswith("fedda") for k in states)
