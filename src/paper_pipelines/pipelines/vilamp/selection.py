"""Differential keyframe selection (DKS), ViLAMP's frame-level half of differential distillation.

A frame is worth a full-resolution slot when it is relevant to the query (R_f) and distinct from the
keyframes already chosen (T_f). Greedy walk of paper Algorithm 1, as the released SeqFrameSelector runs
it, then the released budget filling (distribute_frames) and the straight-through weighting that lets
the language-model loss reach the selector. Plain torch / NumPy, no Kedro.
"""

from __future__ import annotations

import math

import numpy as np
import torch
import torch.nn.functional as F


def frame_relevance(frame_emb: torch.Tensor, query_emb: torch.Tensor) -> torch.Tensor:
    """R_f(f_n, Q) = cos(e_n, q), shape (N,) from (N, D) frames and a (D,) query."""
    return F.cosine_similarity(frame_emb, query_emb.reshape(1, -1), dim=-1)


def temporal_distinctiveness(frame_emb: torch.Tensor, keyframes: list[int]) -> torch.Tensor:
    """T_f(f_n, K) = max_{k in K} cos(e_n, e_k), shape (N,); -1 for an empty keyframe set."""
    if not keyframes:
        return frame_emb.new_full((frame_emb.shape[0],), -1.0)
    unit = F.normalize(frame_emb, dim=-1)
    return (unit @ unit[keyframes].T).max(dim=1).values


def greedy_keyframes(
    frame_emb: torch.Tensor,
    relevance: torch.Tensor,
    max_keyframes: int,
    tau: float,
    relevance_floor: float = -1.0,
) -> list[int]:
    """Algorithm 1: walk frames by falling R_f, keep f if |K| < K_max and T_f(f, K) <= tau.

    As in the released code the tau test is non-maximum suppression: taking a frame marks every frame
    whose cosine to it exceeds tau (strict >) as visited; the walk stops at the first frame whose
    relevance is below ``relevance_floor``. Only K x N cosines are formed, never the N x N matrix.
    """
    if max_keyframes < 1:
        raise ValueError(f"the keyframe budget K must be >= 1, got {max_keyframes}")
    if not -1.0 <= tau <= 1.0:
        raise ValueError(f"tau is a cosine threshold in [-1, 1], got {tau}")
    unit = F.normalize(frame_emb, dim=-1)
    order = torch.argsort(relevance, descending=True, stable=True).tolist()
    scores = relevance.float().tolist()
    # The cosines are formed on the embeddings' device; only the K suppression masks come back to the
    # host, so the walk over N frames never waits on the GPU frame by frame.
    visited = np.zeros(len(order), dtype=bool)
    chosen: list[int] = []
    for frame in order:
        if len(chosen) >= max_keyframes or scores[frame] < relevance_floor:
            break
        if visited[frame]:
            continue
        chosen.append(frame)
        visited[frame] = True
        visited |= ((unit @ unit[frame]) > tau).cpu().numpy()
    return sorted(chosen)


def gaps_between(selected: list[int], n_frames: int) -> list[tuple[int, int]]:
    """The runs [start, end] of unselected frames before, between and after the keyframes."""
    bounds = [-1, *sorted(selected), n_frames]
    return [(a + 1, b - 1) for a, b in zip(bounds[:-1], bounds[1:], strict=True) if b - a > 1]


def insertions_needed(gaps: list[tuple[int, int]], spacing: int) -> int:
    """Sum over gaps of ceil(len / D) - 1: frames needed so no gap has a run longer than D."""
    return sum(math.ceil((end - start + 1) / spacing) - 1 for start, end in gaps)


def smallest_spacing(gaps: list[tuple[int, int]], budget: int, n_frames: int) -> int:
    """Binary search of the smallest D in [1, N] with insertions_needed(gaps, D) <= budget."""
    low, high = 1, max(1, n_frames)
    while low < high:
        mid = (low + high) // 2
        if insertions_needed(gaps, mid) <= budget:
            high = mid
        else:
            low = mid + 1
    return low


def fill_budget(selected: list[int], n_frames: int, max_keyframes: int) -> list[int]:
    """distribute_frames: spend the budget suppression left on temporal coverage.

    Each gap of length L gets k = ceil(L / D) - 1 frames at start + i * ceil(L / (k + 1)) (capped at
    the gap's end), D the smallest spacing that fits; slots still left are taken walking the gaps from
    the end of the video backwards.
    """
    chosen = set(selected)
    budget = max_keyframes - len(chosen)
    if budget <= 0:
        return sorted(chosen)
    gaps = gaps_between(sorted(chosen), n_frames)
    spacing = smallest_spacing(gaps, budget, n_frames)
    used = 0
    for start, end in gaps:
        length = end - start + 1
        k = math.ceil(length / spacing) - 1
        step = math.ceil(length / (k + 1))
        for i in range(1, k + 1):
            chosen.add(min(start + step * i, end))
        used += max(k, 0)
    left = budget - used
    for start, end in reversed(gaps):
        for frame in range(end, start - 1, -1):
            if left <= 0:
                break
            if frame not in chosen:
                chosen.add(frame)
                left -= 1
    return sorted(chosen)


def linspace_keyframes(n_frames: int, max_keyframes: int) -> list[int]:
    """The fallback when nothing was kept (and the uniform baseline): linspace(0, N - 1, K) truncated."""
    return sorted(set(torch.linspace(0, n_frames - 1, max_keyframes).long().tolist()))


def differential_keyframe_selection(
    frame_emb: torch.Tensor,
    query_emb: torch.Tensor,
    max_keyframes: int,
    tau: float,
    relevance_floor: float = -1.0,
    fill: bool = True,
) -> tuple[list[int], torch.Tensor]:
    """DKS end to end: (sorted keyframe indices, R_f). The released selector's forward pass."""
    n = frame_emb.shape[0]
    if n < 1:
        raise ValueError("a video with no frames has no keyframes (N = 0)")
    relevance = frame_relevance(frame_emb, query_emb)
    chosen = greedy_keyframes(frame_emb, relevance, max_keyframes, tau, relevance_floor)
    if fill:
        chosen = fill_budget(chosen, n, max_keyframes)
    if not chosen:
        chosen = linspace_keyframes(n, max_keyframes)
    return chosen, relevance


def straight_through_weights(relevance: torch.Tensor) -> torch.Tensor:
    """1 - stopgrad(p) + p with p = softmax_n(R_f): value exactly 1, gradient p's (to the selector)."""
    p = torch.softmax(relevance, dim=0)
    return 1.0 - p.detach() + p


def relevance_topk(relevance: torch.Tensor, max_keyframes: int) -> list[int]:
    """Baseline: the K most relevant frames, no distinctiveness test (DKS with tau = 1, no filling)."""
    k = min(max_keyframes, relevance.shape[0])
    return sorted(torch.topk(relevance, k).indices.tolist())


def naive_greedy_keyframes(
    frame_emb: np.ndarray, relevance: np.ndarray, max_keyframes: int, tau: float
) -> list[int]:
    """The same walk on a materialised N x N cosine matrix (the benchmark's reference, O(N^2) memory)."""
    unit = frame_emb / np.linalg.norm(frame_emb, axis=1, keepdims=True)
    sims = unit @ unit.T
    visited = np.zeros(len(relevance), bool)
    chosen: list[int] = []
    for frame in np.argsort(-relevance, kind="stable"):
        if len(chosen) >= max_keyframes:
            break
        if not visited[frame]:
            chosen.append(int(frame))
            visited |= sims[frame] > tau
            visited[frame] = True
    return sorted(chosen)
