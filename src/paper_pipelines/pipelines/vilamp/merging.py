"""Differential feature merging (DFM), ViLAMP's patch-level half of differential distillation.

Every non-keyframe is squeezed to one token: the softmax over its patches of (query relevance minus
redundancy with the reference keyframe's patch at the same position) over a learnable temperature
weights the frame's own (projector-output) patches. Released as ``SigPooling`` (composer
``sig_pooling``); the two pooling ablations of the same code path are here too.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn


def reference_keyframes(
    keyframes: list[int],
    n_frames: int,
    mode: Literal["paper", "official_code"] = "paper",
    device: torch.device | str | None = None,
) -> torch.Tensor:
    """r(n) for every frame: the index of the frame whose patches are its redundancy reference.

    ``paper``: the closest keyframe at or before n (the keyframe that opens n's segment); frames before
    the first keyframe use themselves. ``official_code``: the released loop appends ``img_embs[i]``
    for segment i instead of ``img_embs[keyframes[i]]``, so segment i is compared with frame i.
    """
    if not keyframes:
        raise ValueError("reference keyframes need at least one keyframe")
    ref = torch.arange(n_frames, device=device)
    bounds = [*sorted(keyframes), n_frames]
    for i in range(len(bounds) - 1):
        source = bounds[i] if mode == "paper" else i
        ref[bounds[i] : bounds[i + 1]] = source
    return ref


class DifferentialFeatureMerging(nn.Module):
    """SigPooling: W_iq, W_ik, W_k (d -> d), W_q (query dim -> d), temperature tau_m (init 0.01)."""

    def __init__(self, dim: int, query_dim: int, temperature_init: float = 0.01) -> None:
        super().__init__()
        self.linear_iq = nn.Linear(dim, dim)
        self.linear_ik = nn.Linear(dim, dim)
        self.linear_q = nn.Linear(query_dim, dim)
        self.linear_k = nn.Linear(dim, dim)
        self.tau = nn.Parameter(torch.tensor(float(temperature_init)))
        for layer in (self.linear_iq, self.linear_ik, self.linear_q, self.linear_k):
            nn.init.normal_(layer.weight, std=0.02)  # the LLaVA initialiser (initializer_range)
            nn.init.zeros_(layer.bias)

    def patch_relevance(self, patches: torch.Tensor, query: torch.Tensor) -> torch.Tensor:
        """r_{n,j} = cos(W_q q, W_iq p_{n,j}), shape (n, M)."""
        q = self.linear_q(query).reshape(1, 1, -1)
        return F.cosine_similarity(q, self.linear_iq(patches), dim=-1)

    def patch_redundancy(self, patches: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
        """t_{n,j} = cos(W_k k_{n,j}, W_ik p_{n,j}) against the reference keyframe's patch j, (n, M)."""
        return F.cosine_similarity(self.linear_k(reference), self.linear_ik(patches), dim=-1)

    def differential_scores(
        self, patches: torch.Tensor, reference: torch.Tensor, query: torch.Tensor
    ) -> torch.Tensor:
        """s_{n,j} = (r_{n,j} - t_{n,j}) / tau_m."""
        relevance = self.patch_relevance(patches, query)
        return (relevance - self.patch_redundancy(patches, reference)) / self.tau

    def forward(
        self,
        patches: torch.Tensor,
        reference: torch.Tensor,
        query: torch.Tensor,
        max_dense_length: int | None = None,
    ) -> torch.Tensor:
        """m_n = sum_j softmax_j(s_{n,.}) p_{n,j}: (n, M, d) patches -> (n, d) merged tokens.

        Above ``max_dense_length`` frames the scores are formed chunk by chunk (the released memory
        saving); the result is the same.
        """
        # the inputs follow the merging weights' device and dtype (bf16 towers into fp32 weights)
        weight = self.linear_iq.weight
        patches, reference, query = patches.to(weight), reference.to(weight), query.to(weight)
        if patches.shape[0] == 0:
            return patches.new_zeros((0, patches.shape[-1]))
        step = max_dense_length or patches.shape[0]
        merged = []
        for lo in range(0, patches.shape[0], step):
            p, k = patches[lo : lo + step], reference[lo : lo + step]
            alpha = torch.softmax(self.differential_scores(p, k, query), dim=-1)
            merged.append((alpha.unsqueeze(-1) * p).sum(dim=1))
        return torch.cat(merged)


def mean_pool(patches: torch.Tensor) -> torch.Tensor:
    """Baseline ``average_pooling``: each non-keyframe = the mean of its patches, (n, M, d) -> (n, d)."""
    return patches.mean(dim=1)


def distinctiveness_pool(patches: torch.Tensor, reference: torch.Tensor) -> torch.Tensor:
    """Baseline ``average_pooling_res``: weights softmax_j(1 - (0.5 + 0.5 cos(k_{n,j}, p_{n,j}))), no query."""
    weight = 1.0 - (0.5 + 0.5 * F.cosine_similarity(reference, patches, dim=-1))
    return (torch.softmax(weight, dim=-1).unsqueeze(-1) * patches).sum(dim=1)
