"""Preprocess: event streams cut into undirected snapshots on one node set, and the evaluation edges.

HTGN's protocol: snapshots G_1..G_T on a fixed node set (absent nodes are isolated); the last
`test_length` snapshots are tested, all links and new links (never seen in training), each against
seeded 1:1 random non-edges.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd


def undirected_unique(edges: np.ndarray) -> np.ndarray:
    """Rows (u, v) as sorted pairs u < v, de-duplicated, self-loops removed; shape (E, 2)."""
    edges = np.sort(np.asarray(edges, dtype=np.int64).reshape(-1, 2), axis=1)
    edges = edges[edges[:, 0] != edges[:, 1]]
    return np.unique(edges, axis=0)


def edge_keys(edges: np.ndarray, n_nodes: int) -> np.ndarray:
    """Each undirected edge as one integer u * N + v (u < v), for set operations."""
    return edges[:, 0] * n_nodes + edges[:, 1]


def equal_count_chunks(events: pd.DataFrame, n_snapshots: int) -> list[np.ndarray]:
    """HTGN's uci split: the time-sorted events cut into n_snapshots chunks of (almost) equal count."""
    ordered = events.sort_values("t", kind="stable")[["u", "v"]].to_numpy()
    return np.array_split(ordered, n_snapshots)


def timestamp_chunks(events: pd.DataFrame) -> list[np.ndarray]:
    """One chunk per distinct timestamp value (generator steps, publication years), in time order."""
    return [g[["u", "v"]].to_numpy() for _, g in events.groupby("t", sort=True)]


def build_snapshots(
    chunks: list[np.ndarray], regions: dict[int, str] | None = None
) -> dict[str, Any]:
    """Relabel the nodes of every chunk to 0..N-1 (sorted original ids) and make each chunk an
    undirected simple edge list; `regions` (original id -> label) become a per-node array."""
    ids = np.unique(np.concatenate([c.reshape(-1) for c in chunks]))
    index = {int(x): i for i, x in enumerate(ids)}
    remap = np.vectorize(index.__getitem__, otypes=[np.int64])
    edges = [undirected_unique(remap(c)) if len(c) else np.zeros((0, 2), np.int64) for c in chunks]
    labels = np.array([(regions or {}).get(int(x), "unknown") for x in ids], dtype=object)
    return {"edges": edges, "num_nodes": len(ids), "node_ids": ids, "regions": labels}


def check_test_snapshots(snapshots: dict[str, Any], test_length: int, source: str) -> None:
    """Enough snapshots to train on, and no test snapshot without edges."""
    n = len(snapshots["edges"])
    if n < test_length + 2:
        raise ValueError(
            f"source {source!r} gives {n} snapshots, fewer than cross_geometric.snapshots."
            f"test_length + 2 = {test_length + 2}; lower test_length or supply more snapshots"
        )
    for t in range(n - test_length, n):
        if len(snapshots["edges"][t]) == 0:
            raise ValueError(
                f"source {source!r}: test snapshot {t} has no edges; change the snapshot range "
                "(e.g. cross_geometric.data.pubmed.year_end) so every test snapshot has links"
            )


def sample_non_edges(
    n_nodes: int,
    exclude: np.ndarray,
    count: int,
    rng: np.random.Generator,
    nodes: np.ndarray | None = None,
) -> np.ndarray:
    """`count` distinct uniform pairs u < v whose keys are not in `exclude`; shape (count, 2). The
    pairs are drawn among the node ids `nodes` when given (for example the nodes that exist at a
    snapshot), else among all n_nodes."""
    exclude_set = np.unique(exclude)
    found = np.zeros(0, np.int64)
    for _ in range(100):
        if len(found) >= count:
            break
        shape = (2 * (count - len(found)) + 16, 2)
        drawn = rng.integers(0, n_nodes if nodes is None else len(nodes), shape)
        pairs = np.sort(drawn if nodes is None else nodes[drawn], axis=1)
        keys = edge_keys(pairs[pairs[:, 0] != pairs[:, 1]], n_nodes)
        keys = keys[~np.isin(keys, exclude_set, assume_unique=False)]
        found = np.union1d(found, keys)
    if len(found) < count:
        among = n_nodes if nodes is None else len(nodes)
        raise ValueError(f"cannot sample {count} non-edges among {among} nodes")
    chosen = found[rng.permutation(len(found))[:count]]
    return np.stack([chosen // n_nodes, chosen % n_nodes], 1)


def seen_nodes(edges: list[np.ndarray]) -> list[np.ndarray]:
    """For each snapshot t, the sorted ids of the nodes with an edge in some snapshot <= t: the nodes
    that exist by then (HTGN's training negatives come from these; see training.transition_loss)."""
    seen = np.zeros(0, np.int64)
    out = []
    for e in edges:
        seen = np.union1d(seen, np.asarray(e, np.int64).ravel())
        out.append(seen)
    return out


def training_union(snapshots: dict[str, Any], test_length: int) -> np.ndarray:
    """Keys of every edge seen in a training snapshot."""
    train = snapshots["edges"][: len(snapshots["edges"]) - test_length]
    return np.unique(np.concatenate([edge_keys(e, snapshots["num_nodes"]) for e in train]))


def evaluation_edges(
    snapshots: dict[str, Any], test_length: int, neg_per_pos: int, rng: np.random.Generator
) -> list[dict[str, Any]]:
    """Per test snapshot: all links and new links (absent from every training snapshot), each with
    `neg_per_pos` seeded non-edges of that snapshot (for new links also unseen in training)."""
    n_nodes, n = snapshots["num_nodes"], len(snapshots["edges"])
    seen = training_union(snapshots, test_length)
    out = []
    for t in range(n - test_length, n):
        pos = snapshots["edges"][t]
        keys = edge_keys(pos, n_nodes)
        new = pos[~np.isin(keys, seen)]
        out.append(
            {
                "t": t,
                "pos": pos,
                "neg": sample_non_edges(n_nodes, keys, neg_per_pos * len(pos), rng),
                "new_pos": new,
                "new_neg": sample_non_edges(
                    n_nodes, np.concatenate([keys, seen]), neg_per_pos * len(new), rng
                ),
            }
        )
    return out
