"""Hierarchical differential distillation end to end: one video's visual sequence under each method.

ViLAMP = DKS keyframes at full resolution + DFM tokens for the rest; the baselines change one part
(the keyframe choice, or what a non-keyframe becomes) on the same encodings.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from .assembly import assemble_sequence
from .merging import distinctiveness_pool, mean_pool, reference_keyframes
from .selection import (
    differential_keyframe_selection,
    linspace_keyframes,
    relevance_topk,
    straight_through_weights,
)

METHODS = (
    "uniform",
    "relevance_topk",
    "dks_drop",
    "dks_meanpool",
    "dks_respool",
    "vilamp",
    "dense",
)
USES_DKS = ("dks_drop", "dks_meanpool", "dks_respool", "vilamp")


@dataclass
class Encoded:
    """One video through the towers: projected patch tokens, selector frame and query embeddings."""

    patches: torch.Tensor  # (N, M, d) vision tower + projector output
    frame_emb: torch.Tensor  # (N, Ds) selector image embeddings
    query_emb: torch.Tensor  # (Ds,) selector text embedding of the question


def choose_keyframes(
    method: str, enc: Encoded, k: int, dks, cache: dict | None = None
) -> list[int]:
    """The keyframe indices each method keeps at full resolution (DKS is computed once per video)."""
    n = enc.frame_emb.shape[0]
    if method == "dense":
        return list(range(n))
    if method == "uniform":
        return linspace_keyframes(n, k)
    if method == "relevance_topk":
        relevance = torch.nn.functional.cosine_similarity(
            enc.frame_emb, enc.query_emb[None], dim=-1
        )
        return relevance_topk(relevance, k)
    if method in USES_DKS:
        if cache is not None and "dks" in cache:
            return cache["dks"]
        chosen, _ = differential_keyframe_selection(
            enc.frame_emb, enc.query_emb, k, dks.tau, dks.relevance_floor, dks.fill_budget
        )
        if cache is not None:
            cache["dks"] = chosen
        return chosen
    raise ValueError(f"unknown method {method!r}: use one of {', '.join(METHODS)}")


def visual_sequence(
    method: str, enc: Encoded, keyframes: list[int], reader, dfm
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(tokens, time n/N, kind) of the reader's visual input under ``method``."""
    n = enc.patches.shape[0]
    patches = enc.patches
    if method in USES_DKS:
        relevance = torch.nn.functional.cosine_similarity(
            enc.frame_emb, enc.query_emb[None], dim=-1
        )
        # value 1; carries the LM loss to the selector when it is trainable (frozen here, as released)
        weights = straight_through_weights(relevance.float()).to(patches)
        patches = patches * weights.reshape(-1, 1, 1)
    is_key = torch.zeros(n, dtype=torch.bool, device=patches.device)
    is_key[keyframes] = True
    rest = patches[~is_key]
    merged = None
    if method in ("dks_meanpool", "dks_respool", "vilamp") and len(rest):
        reference = reference_keyframes(keyframes, n, dfm.reference_keyframe, patches.device)
        ref = patches[reference][~is_key]
        if method == "dks_meanpool":
            merged = mean_pool(rest)
        elif method == "dks_respool":
            merged = distinctiveness_pool(rest, ref)
        else:
            merged = reader.merging(rest, ref, enc.query_emb, dfm.max_dense_length)
    tokens, frame_of = assemble_sequence(patches, keyframes, merged, reader.newline)
    kind = torch.where(is_key[frame_of.clamp(max=n - 1)], 1, 2)
    kind[-1] = 2
    return tokens, frame_of.float() / n, kind
