"""Textual Prior Decoupling: the prompt layouts token by token, and the assembly of context vectors."""

import pytest
import torch

from paper_pipelines.pipelines.fedda.prompts import (
    BLOCKS,
    assemble,
    build_bank,
    combine_passes,
    sentence_segments,
    text_features,
)
from paper_pipelines.pipelines.fedda.towers import pad_sequences

CLASSES = ("seven", "golden retriever")


def render(bank, tokenizer, row):
    """The row's tokens with G / P / C written where a context block's vectors go."""
    names = {b: b[0].upper() if b != "ctx" else "C" for b in bank.slots}
    words = [tokenizer.words[int(i)] for i in bank.ids[row, : int(bank.mask[row].sum())]]
    for block, (rows, cols) in bank.slots.items():
        for r, c in zip(rows.tolist(), cols.tolist(), strict=True):
            if r == row:
                words[c] = names[block]
    return " ".join(words)


def test_fedda_prompt_is_global_class_link_personal_in_one_sentence(tiny_text, tokenizer):
    # the released PromptLearner with CLASS_TOKEN_POSITION = "middle" decodes to exactly this
    bank = build_bank(tiny_text, CLASSES, "middle_link", {"global_ctx": 2, "personal_ctx": 2})
    assert render(bank, tokenizer, 0) == "[CLS] G G seven with a style of P P . [SEP]"
    assert render(bank, tokenizer, 1) == "[CLS] G G golden retriever with a style of P P . [SEP]"
    assert not bank.two_pass and bank.n_classes == 2
    assert bank.eot.tolist() == [11, 12]  # the [SEP] position of each row


def test_no_tpd_concatenates_both_blocks_before_the_class(tiny_text, tokenizer):
    bank = build_bank(tiny_text, CLASSES, "front_concat", {"global_ctx": 2, "personal_ctx": 1})
    assert render(bank, tokenizer, 0) == "[CLS] G G P seven . [SEP]"
    assert render(bank, tokenizer, 1) == "[CLS] G G P golden retriever . [SEP]"


def test_coop_has_one_block_before_the_class(tiny_text, tokenizer):
    bank = build_bank(tiny_text, CLASSES, "front", {"ctx": 3})
    assert render(bank, tokenizer, 1) == "[CLS] C C C golden retriever . [SEP]"
    assert set(bank.slots) == {"ctx"}


def test_dual_prompt_is_two_passes_ordered_pass_major(tiny_text, tokenizer):
    bank = build_bank(tiny_text, CLASSES, "dual_separate", {"global_ctx": 1, "personal_ctx": 2})
    assert bank.two_pass and bank.ids.shape[0] == 4
    assert render(bank, tokenizer, 0) == "[CLS] G seven . [SEP]"
    assert render(bank, tokenizer, 1) == "[CLS] G golden retriever . [SEP]"
    assert render(bank, tokenizer, 2) == "[CLS] P P seven . [SEP]"
    assert render(bank, tokenizer, 3) == "[CLS] P P golden retriever . [SEP]"


def test_hand_prompt_is_the_template(tiny_text, tokenizer):
    bank = build_bank(tiny_text, ("seven",), "hand", {}, template="a photo of the digit {}")
    assert render(bank, tokenizer, 0) == "[CLS] a photo of the digit seven [SEP]"
    assert bank.slots == {} and bank.eot.tolist() == [7]


def test_unknown_layout_is_refused():
    with pytest.raises(ValueError, match="unknown prompt layout 'end'"):
        sentence_segments("end", [1], [1, 2], [3])
    assert set(BLOCKS["middle_link"]) == {"global_ctx", "personal_ctx"}


def test_assemble_writes_each_block_in_its_slots_only(tiny_text):
    bank = build_bank(tiny_text, CLASSES, "middle_link", {"global_ctx": 2, "personal_ctx": 2})
    base = torch.zeros(*bank.ids.shape, 3)
    g = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    p = torch.tensor([[-1.0, -2.0, -3.0], [-4.0, -5.0, -6.0]])
    out = assemble(bank, base, {"global_ctx": g, "personal_ctx": p})
    for row in range(2):
        assert torch.equal(out[row, 1:3], g.detach())
    assert torch.equal(out[0, 8:10], p)  # after "seven with a style of"
    assert torch.equal(out[1, 9:11], p)  # after "golden retriever with a style of"
    written = torch.zeros(bank.ids.shape, dtype=torch.bool)
    for rows, cols in bank.slots.values():
        written[rows, cols] = True
    assert (out[~written] == 0).all()
    out.sum().backward()
    assert torch.equal(g.grad, torch.full((2, 3), 2.0))  # each vector used once per class
    assert base.grad is None


def test_combine_passes_averages_the_normalised_features():
    feats = torch.tensor([[3.0, 0.0], [0.0, 2.0], [0.0, 5.0], [0.0, 1.0]])
    out = combine_passes(feats, 2)
    s = 0.5**0.5
    assert torch.allclose(out, torch.tensor([[s, s], [0.0, 1.0]]))


def test_text_features_are_unit_norm_and_depend_on_the_context(tiny_text):
    bank = build_bank(tiny_text, CLASSES, "middle_link", {"global_ctx": 2, "personal_ctx": 2})
    embeds = tiny_text.embed(bank.ids)
    ctx = {"global_ctx": torch.randn(2, 8), "personal_ctx": torch.randn(2, 8)}
    t = text_features(tiny_text, bank, embeds, ctx)
    assert t.shape == (2, 8)
    assert torch.allclose(t.norm(dim=1), torch.ones(2))
    # (a constant shift would vanish in BERT's embedding LayerNorm: move P at random instead)
    nudged = ctx["personal_ctx"] + torch.randn(2, 8)
    moved = text_features(tiny_text, bank, embeds, {**ctx, "personal_ctx": nudged})
    assert not torch.allclose(t, moved, atol=1e-4)


def test_text_features_of_two_pass_prompts_combine_the_passes(tiny_text):
    bank = build_bank(tiny_text, CLASSES, "dual_separate", {"global_ctx": 1, "personal_ctx": 1})
    embeds = tiny_text.embed(bank.ids)
    ctx = {"global_ctx": torch.randn(1, 8), "personal_ctx": torch.randn(1, 8)}
    raw = tiny_text(assemble(bank, embeds, ctx), bank.mask, bank.eot)
    assert torch.allclose(text_features(tiny_text, bank, embeds, ctx), combine_passes(raw, 2))


def test_pad_sequences_pads_right_and_masks():
    ids, mask = pad_sequences([[5, 6, 7], [8]], pad_id=0)
    assert ids.tolist() == [[5, 6, 7], [8, 0, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 0, 0]]
    ids, _ = pad_sequences([[5]], pad_id=9, length=3)
    assert ids.tolist() == [[5, 9, 9]]
    with pytest.raises(ValueError, match="more than 2 tokens"):
        pad_sequences([[1, 2, 3]], 0, length=2)
