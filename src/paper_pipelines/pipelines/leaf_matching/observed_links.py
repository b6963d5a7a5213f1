"""The scarce-links protocol: observe the first fraction mu of the shuffled edges, test on the rest.

As the official split (the CogDL setting of ``split_datasets.py``): undirected edges de-duplicated and
shuffled; the first mu are the observed (training) graph; test positives are kept only if both ends are
observed nodes; test negatives are ``neg_ratio`` x as many random pairs of observed nodes that are edges
nowhere. Node ids are relabelled to the observed graph (0..n_observed-1), as ``main.py`` does.
"""

from __future__ import annotations

import numpy as np


def deduplicate(edges: np.ndarray) -> np.ndarray:
    """Undirected simple edges (u < v), self-loops and repeats dropped, sorted."""
    edges = np.sort(np.asarray(edges, dtype=np.int64).reshape(-1, 2), axis=1)
    edges = edges[edges[:, 0] != edges[:, 1]]
    return np.unique(edges, axis=0)


def _keys(edges: np.ndarray, n: int) -> np.ndarray:
    lo, hi = np.minimum(edges[:, 0], edges[:, 1]), np.maximum(edges[:, 0], edges[:, 1])
    return lo * n + hi


def sample_non_edges(
    count: int, nodes: np.ndarray, forbidden: np.ndarray, n_ids: int, rng: np.random.Generator
) -> np.ndarray:
    """``count`` uniform pairs of distinct ``nodes`` whose key is not in ``forbidden`` (sorted keys)."""
    out = np.empty((0, 2), dtype=np.int64)
    if len(nodes) < 2 or count == 0:
        return out
    while len(out) < count:
        need = 2 * (count - len(out)) + 16
        pairs = nodes[rng.integers(0, len(nodes), size=(need, 2))]
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        # np.isin, not a hand-written searchsorted: an empty forbidden set must work too
        out = np.concatenate([out, pairs[~np.isin(_keys(pairs, n_ids), forbidden)]])
    return out[:count]


def observed_split(
    edges: np.ndarray, mu: float, neg_ratio: int, rng: np.random.Generator
) -> dict[str, np.ndarray | int]:
    """Train (observed) edges, test positives and test negatives, relabelled to observed nodes."""
    edges = deduplicate(edges)
    if not 0 < mu < 1:
        raise ValueError(f"the observed fraction mu must be in (0, 1), got {mu}")
    shuffled = edges[rng.permutation(len(edges))]
    n_train = int(mu * len(shuffled))
    if n_train < 1:
        raise ValueError(
            f"mu = {mu} of {len(edges)} edges observes no link; raise mu or use a larger graph"
        )
    train, rest = shuffled[:n_train], shuffled[n_train:]
    nodes = np.unique(train)
    n_ids = int(edges.max()) + 1
    relabel = np.full(n_ids, -1, dtype=np.int64)
    relabel[nodes] = np.arange(len(nodes))
    test = rest[(relabel[rest[:, 0]] >= 0) & (relabel[rest[:, 1]] >= 0)]
    negatives = sample_non_edges(
        neg_ratio * len(test), nodes, np.sort(_keys(edges, n_ids)), n_ids, rng
    )
    return {
        "n_nodes": len(nodes),
        "train": relabel[train],
        "test_pos": relabel[test],
        "test_neg": relabel[negatives],
        "mu": mu,
        "n_edges_total": len(edges),
    }


def validation_carve_out(
    train: np.ndarray, n_nodes: int, fraction: float, neg_ratio: int, rng: np.random.Generator
) -> dict[str, np.ndarray | int]:
    """Hold out ``fraction`` of the observed edges for selecting (alpha, gamma); ids are kept.

    Held-out positives need both ends still observed in the kept edges; negatives are pairs of such
    nodes that are not observed edges (the test edges stay unseen).
    """
    order = rng.permutation(len(train))
    n_val = max(1, int(round(fraction * len(train))))
    held, kept = train[order[:n_val]], train[order[n_val:]]
    degree = np.bincount(kept.ravel(), minlength=n_nodes)
    held = held[(degree[held[:, 0]] > 0) & (degree[held[:, 1]] > 0)]
    nodes = np.flatnonzero(degree > 0)
    negatives = sample_non_edges(
        neg_ratio * len(held), nodes, np.sort(_keys(train, n_nodes)), n_nodes, rng
    )
    return {"n_nodes": n_nodes, "train": kept, "test_pos": held, "test_neg": negatives}
