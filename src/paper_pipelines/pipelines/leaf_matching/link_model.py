"""The degree-aware (Fermi-Dirac-like) link model on CT space and the likelihood leaf matching minimises.

p_ij = 1 / (1 + ((D(i, j) + eps) / ln((k_i + 1)(k_j + 1)))^gamma / alpha), with k the degree in the
observed graph; the same formula trains the leaves and scores the test pairs (official ``p`` / ``p_test``).
"""

from __future__ import annotations

import torch


def popularity_radius(k_i: torch.Tensor, k_j: torch.Tensor) -> torch.Tensor:
    """Radius ln((k_i + 1)(k_j + 1)): high-degree pairs link over larger tree distances."""
    return torch.log((k_i.to(torch.float32) + 1) * (k_j.to(torch.float32) + 1))


def link_probability(
    distance: torch.Tensor, radius: torch.Tensor, alpha: float, gamma: float, eps: float
) -> torch.Tensor:
    """p = 1 / (1 + ((D + eps) / radius)^gamma / alpha) (distance and radius broadcast)."""
    return 1.0 / (1.0 + ((distance + eps) / radius) ** gamma / alpha)


def positive_loss(p: torch.Tensor) -> torch.Tensor:
    """-ln p_ij for an observed link."""
    return -torch.log(p)


def negative_loss(p: torch.Tensor, eps: float) -> torch.Tensor:
    """-ln(1 + eps - p_ij') for a uniformly drawn node (eps keeps the log finite at p = 1)."""
    return -torch.log(1.0 + eps - p)


def node_likelihood_loss(
    p_pos: torch.Tensor, p_neg: torch.Tensor, pos_ratio: float, eps: float
) -> torch.Tensor:
    """L_i = (w_pos sum_{N_b(i)} -ln p + sum_{Neg(i)} -ln(1 + eps - p)) / |N_b(i)| over the last axis."""
    n_used = p_pos.shape[-1]
    pos = positive_loss(p_pos).sum(-1)
    neg = negative_loss(p_neg, eps).sum(-1)
    return (pos_ratio * pos + neg) / n_used


def score_pairs(
    leaves: torch.Tensor,
    degree: torch.Tensor,
    pairs: torch.Tensor,
    table: torch.Tensor,
    alpha: float,
    gamma: float,
    eps: float,
    chunk: int = 1 << 18,
) -> torch.Tensor:
    """Link probability of every pair (shape (P, 2), observed-graph node ids), chunked for memory."""
    from .ct_space import node_distance

    out = []
    for start in range(0, len(pairs), chunk):
        a, b = pairs[start : start + chunk, 0], pairs[start : start + chunk, 1]
        dist = node_distance(leaves[a], leaves[b], table)
        out.append(
            link_probability(dist, popularity_radius(degree[a], degree[b]), alpha, gamma, eps)
        )
    return torch.cat(out) if out else torch.empty(0)
