"""Ingest for nego: a GOOD-Motif-style generator (Gui et al., NeurIPS 2022 benchmarks, divelab/GOOD).

A graph is a base graph (the environment: wheel, tree, ladder, star or path of a given width) with one
motif attached (the label: house, 6-cycle or crane), a few random extra edges, and label noise. Every
graph keeps its exact ground-truth motif edge mask, its base type and its width, so the OOD splits, the
edge-mask ROC-AUC and the environment probe can be computed from the stored table alone.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import networkx as nx
import numpy as np
import pandas as pd

BASES: tuple[str, ...] = ("wheel", "tree", "ladder", "star", "path")
MOTIFS: tuple[str, ...] = ("house", "cycle", "crane")
# Nodes of each motif: the smallest width that still lets a base graph be larger than its motif.
MOTIF_NODES = {"house": 5, "cycle": 6, "crane": 5}

# The crane motif of GOOD-Motif: a 4-cycle 1-2-3-4 whose extra node 0 joins the two opposite
# corners 1 and 3 (the house joins two adjacent corners instead).
_CRANE_EDGES = ((1, 2), (2, 3), (4, 3), (1, 4), (0, 1), (0, 3))


def base_graph(kind: str, width: int) -> nx.Graph:
    """The base (environment) graph of a given width, as GOOD-Motif builds it.

    wheel / star / path have ``width`` (+1 for the star's hub) nodes, the ladder 2 * width, the tree is a
    balanced binary tree of depth ``floor(log2(width)) - 1`` (at least 1).
    """
    if width < 2:
        raise ValueError(f"base width must be >= 2, got {width}")
    if kind == "wheel":
        return nx.wheel_graph(width)
    if kind == "tree":
        return nx.balanced_tree(2, max(1, int(math.log2(width)) - 1))
    if kind == "ladder":
        return nx.ladder_graph(width)
    if kind == "star":
        return nx.star_graph(width)
    if kind == "path":
        return nx.path_graph(width)
    raise ValueError(f"unknown base {kind!r}; choose one of {', '.join(BASES)}")


def motif_graph(name: str) -> nx.Graph:
    """The label motif: house (5 nodes, 6 edges), 6-cycle, crane (5 nodes, 6 edges)."""
    if name == "house":
        return nx.house_graph()
    if name == "cycle":
        return nx.cycle_graph(6)
    if name == "crane":
        return nx.Graph(_CRANE_EDGES)
    raise ValueError(f"unknown motif {name!r}; choose one of {', '.join(MOTIFS)}")


def attach_motif(
    base: nx.Graph, motif: nx.Graph, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, int]:
    """Base + motif joined by one edge between a random base node and a random motif node.

    Returns the undirected edge list (E, 2) with motif nodes numbered after the base's, the
    ground-truth mask (True on the motif's own edges, False on base and joining edges) and the node count.
    """
    nb = base.number_of_nodes()
    base_edges = np.array(sorted(tuple(sorted(e)) for e in base.edges()), dtype=np.int64)
    motif_edges = np.array(sorted(tuple(sorted(e)) for e in motif.edges()), dtype=np.int64) + nb
    u = int(rng.integers(nb))
    v = int(rng.integers(motif.number_of_nodes())) + nb
    edges = np.vstack([base_edges.reshape(-1, 2), motif_edges, [[u, v]]])
    mask = np.zeros(len(edges), dtype=bool)
    mask[len(base_edges) : len(base_edges) + len(motif_edges)] = True
    return edges, mask, nb + motif.number_of_nodes()


def perturb_edges(
    edges: np.ndarray, mask: np.ndarray, num_nodes: int, fraction: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Add ``round(fraction * E)`` random edges between non-adjacent pairs (never motif edges)."""
    n_new = int(round(fraction * len(edges)))
    present = {tuple(e) for e in edges.tolist()}
    added: list[tuple[int, int]] = []
    tries = 0
    while len(added) < n_new and tries < 50 * (n_new + 1):
        tries += 1
        a, b = sorted(int(x) for x in rng.choice(num_nodes, 2, replace=False))
        if (a, b) not in present:
            present.add((a, b))
            added.append((a, b))
    if not added:
        return edges, mask
    return (
        np.vstack([edges, np.array(added, dtype=np.int64)]),
        np.concatenate([mask, np.zeros(len(added), dtype=bool)]),
    )


def noisy_label(y: int, num_classes: int, noise: float, rng: np.random.Generator) -> int:
    """With probability ``noise`` the label becomes a uniformly drawn *other* class."""
    if rng.random() < noise:
        return int((y + 1 + rng.integers(num_classes - 1)) % num_classes)
    return int(y)


def make_graph(
    base: str,
    motif: str,
    width: int,
    rng: np.random.Generator,
    edge_perturb: float,
    label_noise: float,
    motifs: Sequence[str] = MOTIFS,
) -> dict:
    """One GOOD-Motif graph as a table row: edges, ground-truth motif mask, label, environment."""
    edges, mask, n = attach_motif(base_graph(base, width), motif_graph(motif), rng)
    edges, mask = perturb_edges(edges, mask, n, edge_perturb, rng)
    y_clean = list(motifs).index(motif)
    return {
        "y": noisy_label(y_clean, len(motifs), label_noise, rng),
        "y_clean": y_clean,
        "motif": motif,
        "base": base,
        "width": int(width),
        "num_nodes": int(n),
        "edge_src": edges[:, 0].tolist(),
        "edge_dst": edges[:, 1].tolist(),
        "edge_motif": mask.tolist(),
    }


def draw_widths(
    n: int, centres: Sequence[int], spread: int, rng: np.random.Generator
) -> np.ndarray:
    """Widths ``c +- spread`` (uniform integers) around centres drawn uniformly from ``centres``."""
    c = rng.choice(np.asarray(centres), size=n)
    return np.maximum(2, c + rng.integers(-spread, spread + 1, size=n))


def spurious_bases(
    y: np.ndarray, bias: float, bases: Sequence[str], rng: np.random.Generator
) -> np.ndarray:
    """Controllable bias: base = bases[y] with probability ``bias``, else uniform over the others.

    ``bias = 1 / len(bases)`` makes base and motif independent (the unbiased test distribution).
    """
    k = len(bases)
    other = (y + 1 + rng.integers(k - 1, size=len(y))) % k
    chosen = np.where(rng.random(len(y)) < bias, y, other)
    return np.asarray(bases)[chosen]


def generate_part(
    n: int,
    bases: Sequence[str],
    width_centres: Sequence[int],
    width_spread: int,
    rng: np.random.Generator,
    edge_perturb: float,
    label_noise: float,
    motifs: Sequence[str] = MOTIFS,
    bias: float | None = None,
) -> pd.DataFrame:
    """n graphs of one split part: motifs uniform; bases uniform (``bias=None``) or spuriously tied to y."""
    y = rng.integers(len(motifs), size=n)
    if bias is None:
        chosen = np.asarray(bases)[rng.integers(len(bases), size=n)]
    else:
        chosen = spurious_bases(y, bias, bases, rng)
    widths = draw_widths(n, width_centres, width_spread, rng)
    rows = [
        make_graph(str(b), motifs[int(m)], int(w), rng, edge_perturb, label_noise, motifs)
        for b, m, w in zip(chosen, y, widths, strict=True)
    ]
    return pd.DataFrame(rows)
