"""The frozen towers and the mini-CLIP's contrastive pretraining, on tiny random models."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from paper_pipelines.pipelines.fedda import mini_clip
from paper_pipelines.pipelines.fedda.towers import (
    ImageTower,
    MiniLMText,
    OpenAIClipText,
    encode_images,
    encode_sentences,
)


def test_minilm_text_mean_pools_over_real_tokens_only(tiny_text):
    ids = torch.tensor([[1, 4, 2, 0, 0], [1, 4, 5, 6, 2]])
    mask = (ids != 0).long()
    out = tiny_text(tiny_text.embed(ids), mask, mask.sum(1) - 1)
    hidden = tiny_text.bert(input_ids=ids, attention_mask=mask).last_hidden_state
    assert torch.allclose(out[0], hidden[0, :3].mean(0), atol=1e-6)
    assert torch.allclose(out[1], hidden[1].mean(0), atol=1e-6)


def test_minilm_text_keeps_the_first_layers_frozen(tiny_bert, tokenizer):
    import copy

    text = MiniLMText(copy.deepcopy(tiny_bert), tokenizer, layers=1)
    assert len(text.bert.encoder.layer) == 1
    assert not any(p.requires_grad for p in text.parameters())
    assert (text.bos_id, text.eos_id, text.pad_id) == (1, 2, 0)
    assert text.width == 8 and text.dim == 8
    with pytest.raises(ValueError, match="text_layers must be in 1..3, got 4"):
        MiniLMText(copy.deepcopy(tiny_bert), tokenizer, layers=4)
    with pytest.raises(ValueError, match="got 0"):
        MiniLMText(copy.deepcopy(tiny_bert), tokenizer, layers=0)


def test_encode_sentences_are_unit_norm_and_tokenised_with_specials(tiny_text):
    feats = encode_sentences(tiny_text, ["the digit seven", "one"])
    assert feats.shape == (2, 8)
    assert torch.allclose(feats.norm(dim=1), torch.ones(2))
    ids = torch.tensor([[1, 19, 20, 11, 2]])
    direct = tiny_text(tiny_text.embed(ids), torch.ones_like(ids), torch.tensor([4]))
    assert torch.allclose(feats[0], F.normalize(direct, dim=-1)[0], atol=1e-6)


class _ToyClip(torch.nn.Module):
    """OpenAI CLIP's text attribute names around an identity transformer (sequence-first)."""

    def __init__(self):
        super().__init__()
        self.token_embedding = torch.nn.Embedding(10, 4)
        self.positional_embedding = torch.nn.Parameter(torch.arange(24.0).reshape(6, 4) / 10)
        self.transformer = torch.nn.Identity()
        self.ln_final = torch.nn.LayerNorm(4, elementwise_affine=True)
        self.text_projection = torch.nn.Parameter(torch.eye(4)[:, :3])


def test_openai_text_reads_the_eot_state_times_the_projection():
    clip = _ToyClip()
    text = OpenAIClipText(clip, lambda s: [3] * len(s.split()), sot_id=8, eot_id=9)
    assert (text.width, text.dim, text.context_length) == (4, 3, 6)
    assert text.tokens("a b") == [3, 3]
    ids = torch.tensor([[8, 3, 9, 0, 0, 0]])
    embeds = text.embed(ids)
    out = text(embeds, torch.ones_like(ids), torch.tensor([2]))
    expected = clip.ln_final(embeds + clip.positional_embedding)[0, 2] @ clip.text_projection
    assert torch.allclose(out[0], expected, atol=1e-6)


def test_image_tower_output_and_chunked_encoding():
    torch.manual_seed(0)
    tower = ImageTower([4, 6], 5)
    images = torch.rand(7, 3, 8, 8)
    feats = encode_images(tower, images, chunk=3)
    assert feats.shape == (7, 5)
    assert torch.allclose(feats, tower.eval()(images), atol=1e-6)


def test_clip_logits_are_scaled_cosines():
    v = torch.tensor([[2.0, 0.0], [1.0, 1.0]])
    t = torch.tensor([[1.0, 0.0], [0.0, 3.0]])
    s = 0.5**0.5
    assert torch.allclose(
        mini_clip.clip_logits(v, t, 10.0), torch.tensor([[10.0, 0.0], [10 * s, 10 * s]])
    )


def test_symmetric_infonce_with_distinct_and_shared_classes():
    logits = torch.tensor([[2.0, 0.0], [1.0, 3.0]])
    distinct = mini_clip.symmetric_infonce(logits, torch.tensor([0, 1]))
    target = torch.tensor([0, 1])
    expected = 0.5 * (F.cross_entropy(logits, target) + F.cross_entropy(logits.T, target))
    assert torch.allclose(distinct, expected)
    same = mini_clip.symmetric_infonce(logits, torch.tensor([4, 4]))
    soft = torch.full((2, 2), 0.5)
    expected = 0.5 * (F.cross_entropy(logits, soft) + F.cross_entropy(logits.T, soft))
    assert torch.allclose(same, expected)


def test_zero_shot_accuracy_counts_nearest_class_prompts():
    feats = torch.tensor([[1.0, 0.1], [0.1, 1.0], [1.0, 0.0]])
    classes = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    assert mini_clip.zero_shot_accuracy(feats, torch.tensor([0, 1, 1]), classes) == pytest.approx(
        2 / 3
    )
    assert np.isnan(mini_clip.zero_shot_accuracy(feats[:0], torch.tensor([]), classes))


def test_pretraining_moves_image_features_towards_their_captions():
    gen = torch.Generator().manual_seed(0)
    labels = torch.arange(40) % 2
    images = torch.rand(40, 3, 8, 8, generator=gen) * 0.2
    images[labels == 1, 0] += 0.8  # class 1 is red
    captions = F.normalize(torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]]), dim=-1)
    tower = mini_clip.pretrain_image_tower(images, labels, captions, [2], 12, 16, 0.05, 10.0, 0)
    feats = encode_images(tower, images)
    assert mini_clip.zero_shot_accuracy(feats, labels, captions[0]) == 1.0
    assert not any(p.requires_grad for p in tower.parameters())
    assert mini_clip.as_tensor(np.full((1, 3, 2, 2), 255, np.uint8)).max() == 1.0


def test_caption_embeddings_stack_one_row_of_classes_per_template(tiny_text):
    templates = ["the digit {}", "a photo of the digit {}"]
    caps = mini_clip.caption_embeddings(tiny_text, ["one", "two"], templates)
    assert caps.shape == (2, 2, 8)
    assert torch.allclose(
        caps[1],
        encode_sentences(tiny_text, ["a photo of the digit one", "a photo of the digit two"]),
    )
    assert not torch.allclose(caps[0], caps[1])
