"""Ingest and preprocess for SRCA: synthetic spheres and circles, a synthetic cell cycle, the CO2 loop,
sklearn tables; then standardisation and the 50/50 split.

Each generator returns a dict with ``X`` (n x D float array) and, where known, the ground truth:
``phase`` (angle in [0, 2 pi) of a cyclic process), ``labels``, ``center`` and ``radius``. Every random
stream is a named sub-stream of the paper's one ``srca.seed`` (common.runtime.substream), so adding or
dropping a data set leaves the others' streams unchanged.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np

from paper_pipelines.common.runtime import substream, substream_seed
from paper_pipelines.common.tables import load_sklearn_table, standardise
from paper_pipelines.pipelines.srca.parameters import DataParams, PreprocessParams, UserTableSpec
from paper_pipelines.pipelines.srca.srca import check_data

logger = logging.getLogger(__name__)

Datasets = dict[str, dict[str, Any]]
SKLEARN = ("iris", "wine", "breast_cancer")


def uniform_sphere(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """n points uniform on the unit sphere S^{dim-1} (von Mises-Fisher with kappa = 0, as the repo's data)."""
    g = rng.standard_normal((n, dim))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def noisy_sphere(
    n: int, radius: float, center: float, noise: float, dim: int, seed: int
) -> dict[str, np.ndarray]:
    """The repo's Sphere set: S^{dim-1} of `radius` centred at (center, ..., center) plus N(0, noise^2) noise."""
    rng = np.random.default_rng(seed)
    c = np.full(dim, float(center))
    X = c + radius * uniform_sphere(n, dim, rng) + noise * rng.standard_normal((n, dim))
    return {"X": X, "center": c, "radius": np.array(radius)}


def noisy_circle(
    n: int, D: int, radius: float, noise: float, anisotropy: float, seed: int
) -> dict[str, np.ndarray]:
    """A circle of `radius` in a random 2-plane of R^D plus anisotropic Gaussian noise.

    Noise standard deviation of ambient axis j is noise * a_j with a_j ~ U(1 - anisotropy, 1 + anisotropy);
    ``phase`` is the true angle on the circle.
    """
    rng = np.random.default_rng(seed)
    theta = rng.uniform(0.0, 2.0 * np.pi, n)
    frame, _ = np.linalg.qr(rng.standard_normal((D, 2)))
    offset = rng.standard_normal(D)
    scales = noise * rng.uniform(1.0 - anisotropy, 1.0 + anisotropy, D)
    circle = radius * np.column_stack([np.cos(theta), np.sin(theta)]) @ frame.T
    X = offset + circle + rng.standard_normal((n, D)) * scales
    return {"X": X, "phase": theta, "center": offset, "radius": np.array(radius)}


def synthetic_cell_cycle(
    n: int,
    n_features: int,
    n_markers: int,
    noise: float,
    g0_fraction: float,
    seed: int,
) -> dict[str, np.ndarray]:
    """A "4i-like" single-cell cell-cycle table (Sec. 1.1's motivation; the real RPE-1 data is not offline).

    Cells have a phase theta in [0, 2 pi) enriched in G1 (theta = 2 pi u^1.4). Features: `n_markers`
    periodic proteins (von Mises bumps peaking at random phases with random widths and amplitudes), DNA
    content rising from 2N to 4N across S phase (theta in [0.35, 0.65] x 2 pi) and halving at division,
    cell size growing linearly through the cycle, and irrelevant features; heteroscedastic noise
    (standard deviation noise * (0.5 + |signal|)). A `g0_fraction` of cells leave the cycle in G1 onto
    a quiescence arm (markers fade, a G0 marker rises). Labels: 0 cycling, 1 G0.
    """
    if n_markers + 2 > n_features:
        raise ValueError(
            f"cell cycle needs n_features >= n_markers + 2 (markers, DNA, size), got {n_features} < {n_markers + 2}"
        )
    rng = np.random.default_rng(seed)
    theta = 2.0 * np.pi * rng.uniform(0.0, 1.0, n) ** 1.4
    peaks = rng.uniform(0.0, 2.0 * np.pi, n_markers)
    kappas = rng.uniform(1.0, 4.0, n_markers)
    amps = rng.uniform(1.0, 3.0, n_markers)
    markers = amps * np.exp(kappas * (np.cos(theta[:, None] - peaks) - 1.0))
    frac = theta / (2.0 * np.pi)
    s_phase = np.clip((frac - 0.35) / 0.30, 0.0, 1.0)
    dna = 2.0 + 2.0 * (3 * s_phase**2 - 2 * s_phase**3)
    size = 1.0 + frac
    n_irrelevant = n_features - n_markers - 2
    signal = np.column_stack([markers, dna, size, np.zeros((n, n_irrelevant))])
    labels = np.zeros(n, dtype=int)
    n_g0 = int(round(g0_fraction * n))
    if n_g0:
        g0 = rng.choice(n, n_g0, replace=False)
        depth = rng.uniform(0.0, 1.0, n_g0)
        signal[g0, :n_markers] = markers[g0] * (1.0 - depth[:, None])
        if n_irrelevant:
            signal[g0, n_markers + 2] = 3.0 * depth  # a quiescence marker
        labels[g0] = 1
    X = signal + noise * (0.5 + np.abs(signal)) * rng.standard_normal(signal.shape)
    return {"X": X, "phase": theta, "labels": labels}


def co2_delay_embedding(
    co2: np.ndarray, dates_week: np.ndarray, window: int, trend: int
) -> dict[str, np.ndarray]:
    """Weekly Mauna Loa CO2 -> a loop: interpolate gaps, subtract a centred `trend`-week moving average,
    then delay-embed the residual with `window` consecutive weeks per point.

    ``phase`` = 2 pi (week of the year of the window's first week) / 52.18.
    """
    y = np.asarray(co2, dtype=float)
    if trend % 2 == 0 or trend < 3:
        raise ValueError(f"co2 trend window must be an odd integer >= 3, got {trend}")
    idx = np.arange(len(y))
    ok = np.isfinite(y)
    y = np.interp(idx, idx[ok], y[ok])
    half = trend // 2
    kernel = np.ones(trend) / trend
    smooth = np.convolve(y, kernel, mode="valid")  # index i <-> y[i + half]
    resid = y[half : len(y) - half] - smooth
    weeks = np.asarray(dates_week, dtype=float)[half : len(y) - half]
    m = len(resid) - window + 1
    if m < 2:
        raise ValueError(f"co2 series too short for window={window} and trend={trend}")
    X = np.lib.stride_tricks.sliding_window_view(resid, window)[:m].copy()
    return {"X": X, "phase": 2.0 * np.pi * ((weeks[:m] - 1) % 52.18) / 52.18}


def load_co2() -> tuple[np.ndarray, np.ndarray]:
    """The weekly CO2 series shipped inside statsmodels (no download) and each week's ISO week number."""
    from statsmodels.datasets import co2

    frame = co2.load_pandas().data
    weeks = frame.index.isocalendar().week.to_numpy(dtype=float)
    return frame["co2"].to_numpy(dtype=float), weeks


def sklearn_table(name: str) -> dict[str, np.ndarray]:
    """iris, wine or breast_cancer from scikit-learn's bundled files."""
    if name not in SKLEARN:
        raise ValueError(f"unknown sklearn table {name!r}; choose one of {sorted(SKLEARN)}")
    X, labels = load_sklearn_table(name)
    return {"X": X, "labels": labels}


def user_table(table: Any, spec: UserTableSpec) -> dict[str, np.ndarray]:
    """The user's own table (any catalog dataset that loads a DataFrame) as points in R^D."""
    import pandas as pd

    fix = (
        "declare the srca.user_table catalog entry (e.g. a pandas.CSVDataset or ParquetDataset; "
        "conf/paper/catalog/srca.yml shows one) or drop `user` from srca.data.datasets"
    )
    if table is None:
        raise ValueError(
            f"srca.data.datasets lists `user` but srca.user_table holds no table: {fix}"
        )
    if not isinstance(table, pd.DataFrame):
        raise ValueError(f"srca.user_table loads a {type(table).__name__}, not a table: {fix}")
    names = list(table.columns)
    if spec.columns is not None:
        unknown = [c for c in spec.columns if c not in names]
        if unknown:
            raise ValueError(
                f"srca.data.user.columns names {unknown}, not in the table's columns {names}"
            )
        columns = list(spec.columns)
    else:
        columns = [
            c for c in names if c != spec.label_column and pd.api.types.is_numeric_dtype(table[c])
        ]
    if spec.label_column is not None and spec.label_column not in names:
        raise ValueError(
            f"srca.data.user.label_column {spec.label_column!r} is not a column of {names}"
        )
    if len(columns) < 2:
        raise ValueError(f"srca.user_table needs at least 2 numeric columns, found {columns}")
    out = {"X": table[columns].to_numpy(dtype=float)}
    if spec.label_column is not None:
        out["labels"] = table[spec.label_column].to_numpy()
    return out


def make_dataset(name: str, data: DataParams, seed: int) -> dict[str, np.ndarray]:
    """One data set of ``srca.data.datasets``, generated from its own sub-stream of ``srca.seed``."""
    stream = substream_seed(seed, "data", name)
    if name in ("sphere_exact", "sphere"):
        s = getattr(data, name)
        return noisy_sphere(s.n, s.radius, s.center, s.noise, s.dim, stream)
    if name in ("circle", "circle_hd"):
        s = getattr(data, name)
        return noisy_circle(s.n, s.D, s.radius, s.noise, s.anisotropy, stream)
    if name == "cellcycle":
        s = data.cellcycle
        return synthetic_cell_cycle(s.n, s.n_features, s.n_markers, s.noise, s.g0_fraction, stream)
    if name == "co2":
        series, weeks = load_co2()
        d = co2_delay_embedding(series, weeks, data.co2.window, data.co2.trend)
        if data.co2.max_n is not None and d["X"].shape[0] > data.co2.max_n:
            rng = np.random.default_rng(stream)
            keep = np.sort(rng.choice(d["X"].shape[0], data.co2.max_n, replace=False))
            d = {key: val[keep] for key, val in d.items()}
        return d
    return sklearn_table(name)


def make_datasets(data: DataParams, seed: int, table: Any = None) -> Datasets:
    """Ingest: every requested data set, offline (generators, statsmodels CO2, sklearn tables, and
    the user's own table from the srca.user_table catalog entry)."""
    out: Datasets = {}
    for name in data.datasets:
        out[name] = (
            user_table(table, data.user) if name == "user" else make_dataset(name, data, seed)
        )
        logger.info("data set %s: %d points in R^%d", name, *out[name]["X"].shape)
    return out


def random_split(n: int, test_fraction: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Sorted train / test indices of a random split; floor(n * test_fraction) points are held out."""
    perm = rng.permutation(n)
    n_test = int(math.floor(n * test_fraction))
    return {"train": np.sort(perm[: n - n_test]), "test": np.sort(perm[n - n_test :])}


def prepare_datasets(raw: Datasets, preprocess: PreprocessParams, seed: int) -> Datasets:
    """Preprocess: check each table, draw the train/test split, standardise the listed ones.

    The standardisation statistics come from the training half only, so nothing about the held-out
    points leaks into the out-of-sample fit; the same affine map is applied to every point.
    """
    out: Datasets = {}
    for name, d in raw.items():
        X = check_data(d["X"], 1, name=f"data set {name!r}")
        split = random_split(X.shape[0], preprocess.test_fraction, substream(seed, "split", name))
        if name in preprocess.standardise:
            _, mean, scale = standardise(X[split["train"]])
            X, _, _ = standardise(X, mean, scale)
        out[name] = {**d, "X": X, **split}
    return out


def coranking_subset(n: int, max_n: int, seed: int) -> np.ndarray:
    """Indices of the points used for co-ranking (all when n <= max_n; its cost is O(n^2 log n))."""
    if n <= max_n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, max_n, replace=False))


def coranking_points(d: dict, max_n: int, seed: int, name: str) -> np.ndarray:
    """The rows of data set ``name`` that co-ranking and the embedding figure use (a seeded subset)."""
    X = d["X"]
    return X[coranking_subset(X.shape[0], max_n, substream_seed(seed, "coranking", name))]
