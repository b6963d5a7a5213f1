"""Ingest: the synthetic linear-threshold generator, scikit-learn's multi-label generator, yeast (spec: Data).

Every pool is a dict of arrays: ``X`` (n_pool x D training pool), ``Y_clean`` (n_pool x c_max in {-1, +1}),
``U`` (uniforms that flip a label when U < eta, so pools at different eta differ only by flips), the same three
for the test sample, and ``W_star``. Training sets of size n are the first n rows, label sets of size c the first
c columns: the grid is nested, and changing c changes nothing else.
"""

from __future__ import annotations

import importlib.resources
import importlib.util
import logging

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)


def unit_inputs(g: np.ndarray) -> np.ndarray:
    """x = [g / ||g||, 1] / sqrt(2): ||x|| = 1 with a bias coordinate."""
    u = g / np.linalg.norm(g, axis=1, keepdims=True)
    return np.hstack([u, np.ones((len(g), 1))]) / np.sqrt(2.0)


def raw_features(
    n: int, d: int, inputs: str, informative: int, energy: float, rng: np.random.Generator
) -> np.ndarray:
    """Gaussian g in R^d, isotropic, or spiked: ``informative`` coordinates carry ``energy`` of E||g||^2."""
    g = rng.standard_normal((n, d))
    if inputs == "spiked":
        scale = np.full(d, np.sqrt((1 - energy) / (d - informative)))
        scale[:informative] = np.sqrt(energy / informative)
        g = g * scale
    return g


def ground_truth(
    d: int,
    c_max: int,
    label_rank: int,
    specific: float,
    support: int | None,
    rng: np.random.Generator,
) -> np.ndarray:
    """W* = U V^T + specific E (rank-``label_rank`` label correlation plus label-specific parts), unit columns.

    ``support`` restricts W* to the first rows (the informative block of spiked inputs) and the bias row.
    """
    w = rng.standard_normal((d + 1, label_rank)) @ rng.standard_normal((label_rank, c_max))
    w = w / np.sqrt(label_rank) + specific * rng.standard_normal((d + 1, c_max))
    if support is not None:
        w[support:-1] = 0.0
    return w / np.linalg.norm(w, axis=0)


def thresholds(scores: np.ndarray, positive_rate: float) -> np.ndarray:
    """t_j: the (1 - positive_rate)-quantile of S_j on a reference sample (about positive_rate positives)."""
    return np.quantile(scores, 1.0 - positive_rate, axis=0)


def linear_threshold_pool(
    n_pool: int,
    n_test: int,
    d: int,
    c_max: int,
    inputs: str,
    informative: int,
    energy: float,
    label_rank: int,
    specific: float,
    positive_rate: float,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """y_ij = +1 iff <w*_j, x_i> > t_j (spec: Data 1), plus the flip uniforms of the label noise."""
    support = informative if inputs == "spiked" else None
    w_star = ground_truth(d, c_max, label_rank, specific, support, rng)

    def sample(m: int) -> np.ndarray:
        return unit_inputs(raw_features(m, d, inputs, informative, energy, rng))

    t = thresholds(sample(max(20000, n_test)) @ w_star, positive_rate)
    pool = {"W_star": w_star}
    for part, m in (("train", n_pool), ("test", n_test)):
        x = sample(m)
        pool[f"X_{part}"] = x
        pool[f"Y_{part}"] = np.where(x @ w_star > t, 1.0, -1.0)
        pool[f"U_{part}"] = rng.random((m, c_max))
    return pool


def sklearn_multilabel_pool(
    n_pool: int, n_test: int, n_features: int, c_max: int, seed: int
) -> dict[str, np.ndarray]:
    """sklearn.datasets.make_multilabel_classification (bag-of-words style; spec: Data 2), unit rows + bias."""
    from sklearn.datasets import make_multilabel_classification

    x, y = make_multilabel_classification(
        n_samples=n_pool + n_test,
        n_features=n_features,
        n_classes=c_max,
        n_labels=2,
        allow_unlabeled=False,
        random_state=seed,
    )
    x = unit_inputs(np.maximum(x, 0.0) + 1e-9)
    y = np.where(y > 0, 1.0, -1.0)
    rng = np.random.default_rng(seed)
    pool = {"W_star": np.zeros((0, 0))}
    for part, rows in (("train", slice(0, n_pool)), ("test", slice(n_pool, None))):
        pool[f"X_{part}"] = x[rows]
        pool[f"Y_{part}"] = y[rows]
        pool[f"U_{part}"] = rng.random(y[rows].shape)
    return pool


def with_noise(pool: dict[str, np.ndarray], eta: float) -> dict[str, np.ndarray]:
    """The pool at label-noise level eta: each y_ij flipped when U_ij < eta (train and test alike)."""
    out = {"X_train": pool["X_train"], "X_test": pool["X_test"]}
    for part in ("train", "test"):
        out[f"Y_{part}"] = np.where(pool[f"U_{part}"] < eta, -1.0, 1.0) * pool[f"Y_{part}"]
    return out


def river_available() -> bool:
    return importlib.util.find_spec("river") is not None


def load_yeast() -> pd.DataFrame:
    """YEAST (2417 genes x 103 features, 14 labels) as shipped inside the river wheel (no download)."""
    if not river_available():
        raise ImportError(
            "the yeast data ships inside the `river` package, which is not installed: "
            "`pip install river==0.26.1`, or set multilabel_bounds.data.real.source: digits (the fallback)"
        )
    path = importlib.resources.files("river.datasets") / "yeast.csv.gz"
    with importlib.resources.as_file(path) as file:
        table = pd.read_csv(file)
    labels = [c for c in table.columns if c.startswith("Class")]
    return table.rename(columns={c: f"label_{i}" for i, c in enumerate(labels)})


def load_multi_digits(n: int, per_image: int, rng: np.random.Generator) -> pd.DataFrame:
    """The fallback: ``per_image`` random 8x8 digits side by side; label j = "digit j is present" (c = 10)."""
    from paper_pipelines.common.tables import load_sklearn_table

    x, y = load_sklearn_table("digits")
    picks = rng.integers(0, len(y), size=(n, per_image))
    features = x[picks].reshape(n, -1)
    present = np.zeros((n, 10), dtype=int)
    for k in range(per_image):
        present[np.arange(n), y[picks[:, k]]] = 1
    table = pd.DataFrame(features, columns=[f"Att{i + 1}" for i in range(features.shape[1])])
    for j in range(10):
        table[f"label_{j}"] = present[:, j]
    return table


def real_features(
    table: pd.DataFrame, train_rows: np.ndarray, test_rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Standardise with the training part's statistics, append a bias, divide by sqrt(D + 1) (E||x||^2 ~ 1)."""
    from paper_pipelines.common.tables import standardise

    feature_cols = [c for c in table.columns if not c.startswith("label_")]
    label_cols = [c for c in table.columns if c.startswith("label_")]
    x = table[feature_cols].to_numpy(float)
    y = np.where(table[label_cols].to_numpy() > 0, 1.0, -1.0)
    x_train, mean, scale = standardise(x[train_rows])
    x_test, _, _ = standardise(x[test_rows], mean, scale)
    d = x.shape[1]

    def finish(z: np.ndarray) -> np.ndarray:
        return np.hstack([z, np.ones((len(z), 1))]) / np.sqrt(d + 1)

    return finish(x_train), y[train_rows], finish(x_test), y[test_rows]


def usable_labels(
    y_train: np.ndarray, y_test: np.ndarray, min_count: int, where: str
) -> np.ndarray:
    """Labels with at least ``min_count`` positives and negatives in the training part and both classes in
    the test part; the others are dropped and logged (a label without positives is not a crash)."""
    pos_train = (y_train > 0).sum(axis=0)
    neg_train = (y_train < 0).sum(axis=0)
    pos_test = (y_test > 0).sum(axis=0)
    ok = (pos_train >= min_count) & (neg_train >= min_count) & (pos_test > 0)
    ok &= pos_test < len(y_test)
    dropped = np.flatnonzero(~ok)
    if len(dropped):
        logger.info(
            "%s: dropped labels %s (fewer than %d positives or negatives in the training part, or one "
            "class missing from the test part)",
            where,
            dropped.tolist(),
            min_count,
        )
    return np.flatnonzero(ok)
