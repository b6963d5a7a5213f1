"""Textual Prior Decoupling (TPD): where the learnable context blocks sit in the sentence.

FedDDA's prompt for class c is one sentence, encoded in one pass of the frozen text tower
(``trainers/FEDDDA.py``, ``CLASS_TOKEN_POSITION = "middle"``, two context blocks):

    [SOS] g_1 .. g_L  <class c> with a style of  p_1 .. p_L  . [EOS]

G (global, aggregated) and P (personal, local) are L vectors each, shared by all classes; the words
between them are frozen token embeddings, so the language model composes the shared and the personal
context as one coherent description. The baselines place their contexts differently (``LAYOUTS``).
A :class:`PromptBank` holds the token ids with placeholders where context vectors go; ``assemble``
writes the vectors in (differentiably) and :func:`text_features` runs the tower.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from .towers import TextTower, pad_sequences

# layout -> what it is (the method specs in methods.py pick one)
LAYOUTS = {
    "middle_link": "[SOS] G <class> <link> P . [EOS] (FedDDA, one pass)",
    "front_concat": "[SOS] G P <class> . [EOS] (FedDDA without TPD, one pass)",
    "front": "[SOS] ctx <class> . [EOS] (CoOp / PromptFL, one block of 2L)",
    "dual_separate": "[SOS] G <class> . [EOS] and [SOS] P <class> . [EOS] (two passes, averaged)",
    "hand": "[SOS] <template with class> [EOS] (zero-shot, no context)",
}
# the context blocks each layout reads
BLOCKS = {
    "middle_link": ("global_ctx", "personal_ctx"),
    "front_concat": ("global_ctx", "personal_ctx"),
    "front": ("ctx",),
    "dual_separate": ("global_ctx", "personal_ctx"),
    "hand": (),
}


@dataclass
class PromptBank:
    """Token ids (S, T) with placeholders, attention mask, EOT index per sequence, and for every context
    block the (row, column) positions its L vectors fill, row-major: row r holds vectors 0..L-1."""

    ids: torch.Tensor
    mask: torch.Tensor
    eot: torch.Tensor
    slots: dict[str, tuple[torch.Tensor, torch.Tensor]]
    n_classes: int
    two_pass: bool


Segment = list[int] | str


def sentence_segments(
    layout: str, class_ids: list[int], class_link_ids: list[int], period_ids: list[int]
) -> list[list[Segment]]:
    """The sentence(s) of one class as segments: frozen token ids (lists) or a context block's name.

    ``class_link_ids`` are the ids of "<class> <link phrase>" tokenised together, as the released code
    tokenises ``name + " with a style of"``; [SOS] / [EOS] are added by :func:`build_bank`.
    """
    if layout == "middle_link":
        return [["global_ctx", class_link_ids, "personal_ctx", period_ids]]
    if layout == "front_concat":
        return [["global_ctx", "personal_ctx", class_ids, period_ids]]
    if layout == "front":
        return [["ctx", class_ids, period_ids]]
    if layout == "dual_separate":
        return [["global_ctx", class_ids, period_ids], ["personal_ctx", class_ids, period_ids]]
    raise ValueError(f"unknown prompt layout {layout!r}; choose one of {sorted(LAYOUTS)}")


def build_bank(
    tower: TextTower,
    class_names: Sequence[str],
    layout: str,
    block_lengths: dict[str, int],
    link_phrase: str = "with a style of",
    template: str = "a photo of the digit {}",
) -> PromptBank:
    """Token ids of every class's prompt with placeholder slots for the context blocks.

    Sequences are ordered pass-major: for ``dual_separate`` rows 0..C-1 are the G pass and C..2C-1
    the P pass; every other layout has one row per class.
    """
    if layout == "hand":
        sequences = [
            [tower.bos_id, *tower.tokens(template.format(c)), tower.eos_id] for c in class_names
        ]
        ids, mask = pad_sequences(sequences, tower.pad_id, tower.context_length)
        return PromptBank(ids, mask, mask.sum(1) - 1, {}, len(class_names), False)
    period = tower.tokens(".")
    per_class = [
        sentence_segments(layout, tower.tokens(c), tower.tokens(f"{c} {link_phrase}"), period)
        for c in class_names
    ]
    n_pass = len(per_class[0])
    sequences: list[list[int]] = []
    slots: dict[str, tuple[list[int], list[int]]] = {b: ([], []) for b in BLOCKS[layout]}
    for p in range(n_pass):
        for sentence in per_class:
            row, seq = len(sequences), [tower.bos_id]
            for seg in sentence[p]:
                if isinstance(seg, str):
                    n = block_lengths[seg]
                    slots[seg][0].extend([row] * n)
                    slots[seg][1].extend(range(len(seq), len(seq) + n))
                    seq.extend([tower.pad_id] * n)  # placeholder, overwritten by assemble
                else:
                    seq.extend(seg)
            sequences.append([*seq, tower.eos_id])
    ids, mask = pad_sequences(sequences, tower.pad_id, tower.context_length)
    eot = torch.tensor([len(s) - 1 for s in sequences])
    tensors = {b: (torch.tensor(r), torch.tensor(c)) for b, (r, c) in slots.items()}
    return PromptBank(ids, mask, eot, tensors, len(class_names), n_pass == 2)


def assemble(
    bank: PromptBank, token_embeds: torch.Tensor, ctx: dict[str, torch.Tensor]
) -> torch.Tensor:
    """The prompts' input embeddings (S, T, width): frozen word embeddings with every context block's
    L vectors written into its slots (differentiable in the context vectors)."""
    embeds = token_embeds
    for block, (rows, cols) in bank.slots.items():
        vectors = ctx[block]
        n_rows = len(rows) // vectors.shape[0]
        values = vectors.to(embeds.dtype).repeat(n_rows, 1)
        embeds = embeds.index_put((rows, cols), values)
    return embeds


def combine_passes(features: torch.Tensor, n_classes: int) -> torch.Tensor:
    """Feature-level dual prompt: t_c = normalise(1/2 t_c^G + 1/2 t_c^P), each pass normalised first."""
    g = F.normalize(features[:n_classes], dim=-1)
    p = F.normalize(features[n_classes:], dim=-1)
    return F.normalize(0.5 * g + 0.5 * p, dim=-1)


def text_features(
    tower: TextTower, bank: PromptBank, token_embeds: torch.Tensor, ctx: dict[str, torch.Tensor]
) -> torch.Tensor:
    """Unit-norm class text features t_c (C, dim): one pass of the frozen tower over the prompts."""
    features = tower(assemble(bank, token_embeds, ctx), bank.mask, bank.eot).float()
    if bank.two_pass:
        return combine_passes(features, bank.n_classes)
    return F.normalize(features, dim=-1)
