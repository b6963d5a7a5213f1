"""Ingest: the synthetic data of Sec. 6.1, the diabetes table preprocessed as the paper's real data, and
the missing responses; every generator takes its NumPy generator (or seed) as an argument."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from paper_pipelines.common.tables import load_sklearn_table, standardise

Draw = Callable[[np.random.Generator], tuple[np.ndarray, np.ndarray, dict[str, list[int]]]]
NO_TRUTH: dict[str, list[int]] = {"support": [], "outliers": []}


def synthetic_data(
    rng: np.random.Generator,
    n: int,
    p: int,
    delta: float = 0.0,
    n_true: int = 3,
    missing_rate: float = 0.03,
    n_outliers: int = 0,
    outlier_shift: float = 0.0,
) -> tuple[np.ndarray, np.ndarray, dict[str, list[int]]]:
    """Sec. 6.1: X ~ N(0, I), y = X beta + eps with beta_{1:3} = delta, Binomial(n, rate) y's set NaN.

    Optionally ``n_outliers`` rows get y += ``outlier_shift`` (the demo data; not in the null runs).
    """
    X = rng.normal(size=(n, p))
    beta = np.zeros(p)
    beta[: min(n_true, p)] = delta
    y = X @ beta + rng.normal(size=n)
    outliers = rng.choice(n, n_outliers, replace=False) if n_outliers else np.array([], int)
    y[outliers] += outlier_shift
    n_missing = rng.binomial(n, missing_rate) if missing_rate > 0 else 0
    y[rng.choice(n, n_missing, replace=False)] = np.nan
    truth = {
        "support": [int(i) for i in np.flatnonzero(beta)],
        "outliers": sorted(int(i) for i in outliers),
    }
    return X, y, truth


def diabetes_standardised(jitter_seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The diabetes data preprocessed like the paper's real data (Sec. 6.4 / repo notebook).

    Standardise X; add N(0, 0.1^2) jitter to columns with fewer than 0.3 n distinct values (``sex``);
    centre y and divide it by the full-data OLS residual SD (ddof = p), so sigma = 1 is the plug-in.
    """
    X, y = load_sklearn_table("diabetes")
    X, _, _ = standardise(X)
    rng = np.random.default_rng(jitter_seed)
    for j in range(X.shape[1]):
        if len(np.unique(X[:, j])) < 0.3 * X.shape[0]:
            X[:, j] = X[:, j] + rng.normal(scale=0.1, size=X.shape[0])
    y = y - y.mean()
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    y = y / np.std(y - X @ coef, ddof=X.shape[1])
    return X, y


def demo_data(
    rng: np.random.Generator,
    source: str,
    n: int,
    p: int,
    delta: float,
    n_outliers: int,
    outlier_shift: float,
    jitter_seed: int,
) -> tuple[np.ndarray, np.ndarray, dict[str, list[int]]]:
    """The analysed demo dataset, fully observed: synthetic with outliers, or a diabetes subsample."""
    if source == "synthetic":
        return synthetic_data(rng, n, p, delta, 3, 0.0, n_outliers, outlier_shift)
    X_all, y_all = diabetes_standardised(jitter_seed)
    rows = rng.choice(len(y_all), n, replace=False)
    return X_all[rows], y_all[rows], dict(NO_TRUTH)


def mask_missing_responses(
    y: np.ndarray, missing_rate: float, rng: np.random.Generator
) -> tuple[np.ndarray, int]:
    """A copy of y with a Binomial(n, rate) random subset set to NaN, and that count."""
    y = y.copy()
    n_missing = rng.binomial(len(y), missing_rate) if missing_rate > 0 else 0
    y[rng.choice(len(y), n_missing, replace=False)] = np.nan
    return y, int(n_missing)


def diabetes_subsamples(n: int, missing_rate: float, jitter_seed: int) -> Draw:
    """draw(rng): a random diabetes subsample of n rows (optionally with missing responses)."""
    X_all, y_all = diabetes_standardised(jitter_seed)

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict[str, list[int]]]:
        rows = rng.choice(len(y_all), n, replace=False)
        y, _ = mask_missing_responses(y_all[rows], missing_rate, rng)
        return X_all[rows], y, dict(NO_TRUTH)

    return draw


def synthetic_draw(n: int, p: int, missing_rate: float, delta: float = 0.0) -> Draw:
    """draw(rng): the synthetic data of Sec. 6.1 at one size (delta = 0: the null)."""

    def draw(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, dict[str, list[int]]]:
        return synthetic_data(rng, n, p, delta, 3, missing_rate)

    return draw
