"""Synthetic and real-data experiments of Sec. 6: null calibration, power and the real-data table.

Everything is plain numpy on top of :class:`DagSelectiveTest`; the Kedro nodes only unpack parameters.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .engine import DagSelectiveTest
from .lasso_polyhedron import LassoEventError
from .line_search import SearchError

logger = logging.getLogger(__name__)


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
    from sklearn.datasets import load_diabetes

    X, y = load_diabetes(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    rng = np.random.default_rng(jitter_seed)
    for j in range(X.shape[1]):
        if len(np.unique(X[:, j])) < 0.3 * X.shape[0]:
            X[:, j] = X[:, j] + rng.normal(scale=0.1, size=X.shape[0])
    y = y - y.mean()
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    y = y / np.std(y - X @ coef, ddof=X.shape[1])
    return X, y


def one_test(
    engine: DagSelectiveTest,
    X: np.ndarray,
    y: np.ndarray,
    params: dict,
    position: int,
    sigma: float | None,
    search: dict[str, Any],
) -> dict[str, Any]:
    """Parametric and over-conditioning tests of the feature at ``position`` in M (one row)."""
    par = engine.test(X, y, params, sigma=sigma, features=[position], **search)[0]
    oc = engine.test(X, y, params, sigma=sigma, features=[position], mode="over_conditioning")[0]
    extra = {"candidate": par.result.extra["cv_candidate"]} if par.result.extra else {}
    return {
        **extra,
        "feature": par.feature,
        "p_parametric": par.result.p_value,
        "p_oc": oc.result.p_value,
        "p_naive": par.result.naive_p,
        "inf_p": par.result.inf_p,
        "sup_p": par.result.sup_p,
        "search_count": par.result.search_count,
        "n_intervals": len(par.result.truncation),
        "cpu_seconds": par.cpu_seconds,
        "cpu_seconds_oc": oc.cpu_seconds,
    }


def replicate_tests(
    engine: DagSelectiveTest,
    params: dict,
    draw,
    replications: int,
    seed: int,
    sigma: float | None,
    search: dict[str, Any],
    label: str,
    require_true: bool = False,
    max_attempts_factor: int = 20,
) -> tuple[pd.DataFrame, int]:
    """R datasets from ``draw(rng) -> (X, y, truth)``; one random selected feature tested on each.

    Datasets with an empty selection are redrawn (the paper tests only when something is selected);
    with ``require_true`` (power runs) only datasets whose drawn feature is truly active count.
    Failed tests are counted and logged, never silently dropped; returns (rows, n_failures).
    """
    rows, failures, attempt = [], 0, 0
    while len(rows) < replications:
        if attempt >= max_attempts_factor * replications:
            logger.warning("%s: stopped after %d attempts with %d tests", label, attempt, len(rows))
            break
        rng = np.random.default_rng([seed, attempt])
        attempt += 1
        X, y, truth = draw(rng)
        state = engine.run(X, y, params)
        if not state["features"]:
            continue
        position = int(rng.integers(len(state["features"])))
        if require_true and state["features"][position] not in truth["support"]:
            continue
        try:
            row = one_test(engine, X, y, params, position, sigma, search)
        except (SearchError, LassoEventError, np.linalg.LinAlgError) as exc:
            failures += 1
            logger.warning("%s: test failed on attempt %d: %s", label, attempt, exc)
            continue
        row.update(
            {"replicate": len(rows), "attempt": attempt - 1, "n_outliers": len(state["outliers"])}
        )
        rows.append(row)
        if len(rows) % max(1, replications // 5) == 0:
            logger.info("%s: %d/%d tests done", label, len(rows), replications)
    return pd.DataFrame(rows), failures


def rejection_summary(table: pd.DataFrame, alpha: float) -> dict[str, float]:
    """Rejection rates at alpha (FPR under the null, power otherwise) and a KS test of uniformity."""
    if table.empty:
        return {"n_tests": 0}
    out = {
        "n_tests": int(len(table)),
        "parametric": float(np.mean(table["p_parametric"] <= alpha)),
        "oc": float(np.mean(table["p_oc"] <= alpha)),
        "naive": float(np.mean(table["p_naive"] <= alpha)),
        "mean_cpu_seconds_parametric": float(table["cpu_seconds"].mean()),
        "mean_cpu_seconds_oc": float(table["cpu_seconds_oc"].mean()),
        "mean_search_count": float(table["search_count"].mean()),
    }
    for col, key in (("p_parametric", "ks_parametric"), ("p_oc", "ks_oc"), ("p_naive", "ks_naive")):
        out[key] = float(stats.kstest(table[col], "uniform").pvalue)
    return out
