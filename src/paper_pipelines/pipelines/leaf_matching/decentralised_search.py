"""Leaf matching's optimiser: greedy decentralised search over CT space, no gradients (paper Algorithm 1).

Per node of a batch and per coordinate t, c*h candidate leaves are drawn in each sibling subtree (one level
per tree height, so a leaf at distance l is proposed with probability proportional to 2^-l, Kleinberg's
harmonic contacts on a tree), scored by the node's loss if only coordinate t moved there, and the argmin is
taken; the current leaf is a candidate, so for fixed samples the loss never increases. All coordinates of a
node and all nodes of a batch are written at once. Batches are a flat list of (start, other) pairs whose
per-pair losses are summed back per start node (``index_add_``): the official code pads every start node to
the batch's largest degree, which gives the same loss at the cost of hubs (``candidate_losses_padded``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from .ct_space import check_height, distance_table, uniform_leaves
from .link_model import link_probability, negative_loss, popularity_radius, positive_loss

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchSettings:
    """The official hyper-parameters (main.py arguments), one field each."""

    height: int = 12  # h
    trees: int = 16  # T (tp)
    c: int = 1  # k = c*h candidates per sibling subtree
    alpha: float = 8.0
    gamma: float = 3.0
    eps: float = 1e-5
    epochs: int = 50
    batch_size: int = 256
    pos_ratio: float = 1.0
    convergence: float = 0.8
    single_neighbour_prob: float = 0.2
    pair_chunk: int = 4096  # pairs scored at once (memory bound: pair_chunk * (h*k+1) * T floats)

    @property
    def per_subtree(self) -> int:
        return int(self.c * self.height)

    @property
    def n_candidates(self) -> int:
        """M = h*k + 1: k leaves in each of the h sibling subtrees, plus the current leaf."""
        return self.height * self.per_subtree + 1


def candidate_leaves(
    current: torch.Tensor, height: int, per_subtree: int, generator: torch.Generator
) -> torch.Tensor:
    """Candidates (B, h*k + 1, T): for each level l, flip bit l and XOR a uniform integer in [0, 2^l).

    The flip jumps to the sibling subtree of height l + 1 (distance exactly l + 1 from the current leaf);
    the XOR picks a uniform leaf inside it. The current leaf comes last.
    """
    b, t = current.shape
    levels = torch.arange(height, device=current.device)
    flips = (1 << levels).view(1, height, 1, 1)
    draws = torch.randint(0, 2**height, (b, height, per_subtree, t), generator=generator)
    offsets = draws.to(current.device) % flips  # uniform in [0, 2^l) since 2^l divides 2^h
    moved = (current.view(b, 1, 1, t) ^ flips) ^ offsets
    return torch.cat([moved.reshape(b, height * per_subtree, t), current.view(b, 1, t)], dim=1)


def use_all_neighbours(epoch: int, epochs: int, convergence: float) -> bool:
    """Annealing schedule: after the first ``convergence`` fraction of epochs every neighbour is used."""
    return epoch > convergence * epochs


def sample_batch_pairs(
    starts: torch.Tensor,
    indptr: torch.Tensor,
    indices: torch.Tensor,
    n_nodes: int,
    all_neighbours: bool,
    single_prob: float,
    generator: torch.Generator,
) -> dict[str, torch.Tensor]:
    """The flat (start, other) pairs of one batch: used neighbours N_b(i), and as many uniform negatives.

    Before convergence each start node keeps, with probability ``single_prob``, only one random
    neighbour. Negatives are uniform over all nodes and not filtered against edges (official code).
    """
    b = len(starts)
    lo, deg = indptr[starts], indptr[starts + 1] - indptr[starts]
    if all_neighbours:
        single = torch.zeros(b, dtype=torch.bool)
    else:
        single = torch.rand(b, generator=generator) <= single_prob
    used = torch.where(single, torch.ones_like(deg), deg)
    pair_start = torch.repeat_interleave(torch.arange(b), used)
    first = torch.cumsum(used, 0) - used
    within = torch.arange(int(used.sum())) - first[pair_start]
    pick = (torch.rand(b, generator=generator) * deg).long().clamp(max=deg - 1)
    within = torch.where(single[pair_start], pick[pair_start], within)
    positives = indices[lo[pair_start] + within]
    negatives = torch.randint(0, n_nodes, (len(pair_start),), generator=generator)
    return {"pair_start": pair_start, "positive": positives, "negative": negatives, "used": used}


def _pair_candidate_loss(
    leaves: torch.Tensor,
    start_leaves: torch.Tensor,
    candidates: torch.Tensor,
    start_degree: torch.Tensor,
    other: torch.Tensor,
    degree: torch.Tensor,
    table: torch.Tensor,
    settings: SearchSettings,
    positive: bool,
) -> torch.Tensor:
    """Per pair, candidate and coordinate (P, M, T): the pair's loss if only that coordinate moved.

    D'(i, j) = D(i, j) + (d(cand, z_j[t]) - d(z_i[t], z_j[t])) / T.
    """
    z_j = leaves[other]  # (P, T)
    current = table[start_leaves ^ z_j].to(torch.float32)  # (P, T)
    total = current.sum(-1)  # (P,)
    moved = table[candidates ^ z_j[:, None, :]].to(torch.float32)  # (P, M, T)
    dist = (total[:, None, None] - current[:, None, :] + moved) / settings.trees
    radius = popularity_radius(start_degree, degree[other])[:, None, None]
    p = link_probability(dist, radius, settings.alpha, settings.gamma, settings.eps)
    if positive:
        return settings.pos_ratio * positive_loss(p)
    return negative_loss(p, settings.eps)


def candidate_losses_flat(
    leaves: torch.Tensor,
    starts: torch.Tensor,
    candidates: torch.Tensor,
    pairs: dict[str, torch.Tensor],
    degree: torch.Tensor,
    table: torch.Tensor,
    settings: SearchSettings,
) -> torch.Tensor:
    """L_i for every start node, candidate and coordinate, (B, M, T), from the flat pair list."""
    b, m, t = candidates.shape
    out = torch.zeros((b, m, t), dtype=torch.float32, device=leaves.device)
    pair_start = pairs["pair_start"]
    for lo in range(0, len(pair_start), settings.pair_chunk):
        sl = slice(lo, lo + settings.pair_chunk)
        ps = pair_start[sl]
        args = (leaves, leaves[starts[ps]], candidates[ps], degree[starts[ps]])
        for key, positive in (("positive", True), ("negative", False)):
            loss = _pair_candidate_loss(*args, pairs[key][sl], degree, table, settings, positive)
            out.index_add_(0, ps, loss)
    return out / pairs["used"].to(torch.float32)[:, None, None]


def candidate_losses_padded(
    leaves: torch.Tensor,
    starts: torch.Tensor,
    candidates: torch.Tensor,
    pairs: dict[str, torch.Tensor],
    degree: torch.Tensor,
    table: torch.Tensor,
    settings: SearchSettings,
) -> torch.Tensor:
    """The same (B, M, T) losses with every start node padded to the batch's largest used degree.

    This is the official layout ([B, max_deg, M, T] tensors with a mask); kept as the reference the flat
    layout is tested and benchmarked against.
    """
    b, m, t = candidates.shape
    used = pairs["used"]
    width = int(used.max())
    mask = torch.arange(width)[None, :] < used[:, None]  # (B, W)
    out = torch.zeros((b, m, t), dtype=torch.float32)
    for key, positive in (("positive", True), ("negative", False)):
        padded = torch.zeros((b, width), dtype=torch.long)
        padded[mask] = pairs[
            key
        ]  # pairs are grouped by start in order, as the mask fills row-major
        z_j = leaves[padded]  # (B, W, T)
        current = table[leaves[starts][:, None, :] ^ z_j].to(torch.float32)  # (B, W, T)
        total = current.sum(-1)
        moved = table[candidates[:, None, :, :] ^ z_j[:, :, None, :]].to(torch.float32)
        dist = (total[:, :, None, None] - current[:, :, None, :] + moved) / settings.trees
        radius = popularity_radius(degree[starts][:, None], degree[padded])[:, :, None, None]
        p = link_probability(dist, radius, settings.alpha, settings.gamma, settings.eps)
        loss = settings.pos_ratio * positive_loss(p) if positive else negative_loss(p, settings.eps)
        out += torch.where(mask[:, :, None, None], loss, 0.0).sum(1)
    return out / used.to(torch.float32)[:, None, None]


def greedy_move(
    candidates: torch.Tensor, losses: torch.Tensor, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per node and coordinate, the candidate of least loss; ties broken uniformly at random.

    The official code shuffles the candidate axis before ``argmin``; a random permutation does the same.
    Returns the new leaves (B, T) and the chosen losses (B, T).
    """
    order = torch.randperm(candidates.shape[1], generator=generator)
    best = losses[:, order, :].argmin(dim=1)  # (B, T)
    chosen = order[best]
    new = torch.gather(candidates, 1, chosen[:, None, :]).squeeze(1)
    return new, torch.gather(losses, 1, chosen[:, None, :]).squeeze(1)


def adjacency(edges: np.ndarray, n_nodes: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """CSR of the undirected observed graph: (indptr, indices, degree)."""
    both = np.concatenate([edges, edges[:, ::-1]])
    order = np.lexsort((both[:, 1], both[:, 0]))
    both = both[order]
    degree = np.bincount(both[:, 0], minlength=n_nodes)
    indptr = np.concatenate([[0], np.cumsum(degree)])
    return (
        torch.as_tensor(indptr, dtype=torch.long),
        torch.as_tensor(both[:, 1].copy(), dtype=torch.long),
        torch.as_tensor(degree, dtype=torch.long),
    )


def fit_leaf_matching(
    edges: np.ndarray,
    n_nodes: int,
    settings: SearchSettings,
    seed: int,
    device: str = "cpu",
    layout: str = "flat",
    epoch_callback: Callable[[int, float], None] | None = None,
) -> dict:
    """Leaf matching on the observed edges (E, 2): uniform init, then ``epochs`` of greedy search.

    Returns the leaves (n_nodes, T) as int64 NumPy, the mean chosen loss per epoch and seconds per epoch.
    """
    check_height(settings.height)
    generator = torch.Generator().manual_seed(seed)
    table = distance_table(settings.height, device)
    indptr, indices, degree = adjacency(np.asarray(edges, dtype=np.int64), n_nodes)
    leaves = uniform_leaves(n_nodes, settings.trees, settings.height, generator, device)
    degree_dev = degree.to(device)
    active = torch.nonzero(degree > 0).flatten()
    losses_of = candidate_losses_flat if layout == "flat" else candidate_losses_padded
    log, seconds = [], []
    for epoch in range(settings.epochs):
        started = time.perf_counter()
        all_nb = use_all_neighbours(epoch, settings.epochs, settings.convergence)
        order = active[torch.randperm(len(active), generator=generator)]
        chosen_sum, batches = 0.0, 0
        for lo in range(0, len(order), settings.batch_size):
            starts = order[lo : lo + settings.batch_size]
            pairs = sample_batch_pairs(
                starts, indptr, indices, n_nodes, all_nb, settings.single_neighbour_prob, generator
            )
            pairs = {k: v.to(device) for k, v in pairs.items()}
            starts_dev = starts.to(device)
            cands = candidate_leaves(
                leaves[starts_dev], settings.height, settings.per_subtree, generator
            )
            losses = losses_of(leaves, starts_dev, cands, pairs, degree_dev, table, settings)
            new, chosen = greedy_move(cands, losses, generator)
            leaves[starts_dev] = new  # Jacobi update: the whole batch at once
            chosen_sum += float(chosen.mean())
            batches += 1
        seconds.append(time.perf_counter() - started)
        log.append(chosen_sum / max(batches, 1))
        if epoch_callback is not None:
            epoch_callback(epoch, log[-1])
    return {
        "leaves": leaves.cpu().numpy(),
        "degree": degree.numpy(),
        "loss": log,
        "seconds_per_epoch": seconds,
    }
