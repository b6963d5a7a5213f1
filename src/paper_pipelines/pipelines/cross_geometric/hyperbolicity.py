"""Local hyperbolicity of the substructure around each node, per snapshot (the geometry evidence).

Gromov's four-point condition: for x, y, z, w with the three pair sums S1 >= S2 >= S3 of
{d_xy + d_zw, d_xz + d_yw, d_xw + d_yz}, delta = (S1 - S2) / 2; delta = 0 on every tree metric.
The node score is the mean delta over sampled quadruples of its k-hop ego graph divided by that
graph's diameter (in [0, 0.5], 0 = tree-like). The alternative score is the mean Forman-Ricci
curvature of the node's edges (negative = tree-like). Isolated nodes get NaN (absent at that time).
"""

from __future__ import annotations

import logging

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import shortest_path

from paper_pipelines.common.progress import progress

logger = logging.getLogger(__name__)


def adjacency(edges: np.ndarray, n_nodes: int) -> sp.csr_matrix:
    """Symmetric 0/1 CSR adjacency of an undirected edge list (E, 2)."""
    data = np.ones(2 * len(edges))
    rows = np.concatenate([edges[:, 0], edges[:, 1]])
    cols = np.concatenate([edges[:, 1], edges[:, 0]])
    adj = sp.csr_matrix((data, (rows, cols)), shape=(n_nodes, n_nodes))
    adj.data[:] = 1.0
    return adj


def four_point_delta(
    d_xy: np.ndarray,
    d_zw: np.ndarray,
    d_xz: np.ndarray,
    d_yw: np.ndarray,
    d_xw: np.ndarray,
    d_yz: np.ndarray,
) -> np.ndarray:
    """Gromov four-point defect: (largest - second largest of the three pair sums) / 2."""
    sums = np.sort(np.stack([d_xy + d_zw, d_xz + d_yw, d_xw + d_yz]), axis=0)
    return (sums[2] - sums[1]) / 2


def ego_nodes(adj: sp.csr_matrix, node: int, k: int) -> np.ndarray:
    """The nodes within k hops of `node` (the node first), by breadth-first frontiers."""
    seen = {node}
    order = [node]
    frontier = [node]
    for _ in range(k):
        nxt = []
        for u in frontier:
            for w in adj.indices[adj.indptr[u] : adj.indptr[u + 1]]:
                if w not in seen:
                    seen.add(int(w))
                    nxt.append(int(w))
        order.extend(nxt)
        frontier = nxt
    return np.array(order, dtype=np.int64)


def ego_delta(
    adj: sp.csr_matrix,
    node: int,
    k: int,
    quadruples: int,
    rng: np.random.Generator,
    exact_diameter_max: int = 300,
) -> float:
    """Mean four-point defect over `quadruples` sampled quadruples of distinct nodes of the k-hop
    ego graph, over the ego graph's diameter (exact up to `exact_diameter_max` nodes, else the
    largest eccentricity among the sampled nodes); 0 when the ego graph has fewer than 4 nodes."""
    ego = ego_nodes(adj, node, k)
    n = len(ego)
    if n < 4:
        return 0.0
    sub = adj[ego][:, ego]
    quads = np.argsort(rng.random((quadruples, n)), axis=1)[:, :4]
    sources, inverse = np.unique(quads, return_inverse=True)
    inverse = inverse.reshape(quads.shape)
    dist = shortest_path(sub, unweighted=True, directed=False, indices=sources)
    if n <= exact_diameter_max:
        diameter = shortest_path(sub, unweighted=True, directed=False).max()
    else:
        diameter = dist.max()
    x, y, z, w = (inverse[:, i] for i in range(4))
    qx, qy, qz, qw = (quads[:, i] for i in range(4))
    delta = four_point_delta(
        dist[x, qy], dist[z, qw], dist[x, qz], dist[y, qw], dist[x, qw], dist[y, qz]
    )
    return float(delta.mean() / diameter)


def forman_curvature(adj: sp.csr_matrix) -> np.ndarray:
    """Mean Forman-Ricci curvature of each node's edges, F(u, v) = 4 - deg u - deg v + 3 #triangles
    (the triangle-augmented form for unweighted graphs); NaN for isolated nodes."""
    deg = np.asarray(adj.sum(1)).ravel()
    upper = sp.triu(adj, 1).tocoo()
    u, v = upper.row, upper.col
    triangles = np.asarray((adj @ adj)[u, v]).ravel()
    f = 4 - deg[u] - deg[v] + 3 * triangles
    total = np.bincount(u, f, len(deg)) + np.bincount(v, f, len(deg))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(deg > 0, total / deg, np.nan)


def snapshot_scores(
    adj: sp.csr_matrix,
    score: str,
    k: int,
    quadruples: int,
    rng: np.random.Generator,
    exact_diameter_max: int = 300,
) -> np.ndarray:
    """The chosen local score for every node of one snapshot; NaN where a node has no edge."""
    if score == "forman_curvature":
        return forman_curvature(adj)
    deg = np.diff(adj.indptr)
    out = np.full(adj.shape[0], np.nan)
    for v in np.nonzero(deg)[0]:
        out[v] = ego_delta(adj, int(v), k, quadruples, rng, exact_diameter_max)
    return out


def tree_scores(
    edges: list[np.ndarray],
    n_nodes: int,
    score: str,
    k: int,
    quadruples: int,
    rng: np.random.Generator,
    exact_diameter_max: int = 300,
    desc: str = "tree scores",
) -> np.ndarray:
    """[T, N] local scores, one row per snapshot (the costly step, cached as a versioned dataset)."""
    rows = [
        snapshot_scores(adjacency(e, n_nodes), score, k, quadruples, rng, exact_diameter_max)
        for e in progress(edges, desc, logger=logger)
    ]
    return np.stack(rows).astype(np.float32)


def node_tree_score(scores: np.ndarray, t_train: int) -> np.ndarray:
    """One score per node: the mean over the training snapshots where it is present (NaN if never)."""
    block = scores[:t_train]
    present = ~np.isnan(block)
    total = np.where(present, block, 0.0).sum(0)
    count = present.sum(0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, total / np.maximum(count, 1), np.nan)
