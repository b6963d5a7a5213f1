"""The paper's measures: the group's clustering evaluation (``myNMIACCV2.m``), the weight-approximation
error, its decay with the core size s, and the full-MKC time extrapolated in n.

Labels come from k-means on the row-normalised relaxed indicator H, repeated ``repeats`` times
(each with ``n_init`` restarts, at most 100 iterations); ACC uses Hungarian matching
(``scipy.optimize.linear_sum_assignment``), plus NMI, purity and ARI; the mean over repeats is reported.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.optimize import linear_sum_assignment
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score
from sklearn.metrics.cluster import contingency_matrix

CLUSTERING_SCORES = ("acc", "nmi", "purity", "ari")


def clustering_accuracy(labels_true: np.ndarray, labels_pred: np.ndarray) -> float:
    """ACC: fraction of points correct under the best one-to-one cluster-to-class map (Hungarian)."""
    table = contingency_matrix(labels_true, labels_pred)
    rows, cols = linear_sum_assignment(-table)
    return float(table[rows, cols].sum() / len(labels_true))


def purity(labels_true: np.ndarray, labels_pred: np.ndarray) -> float:
    """Purity: each predicted cluster counts its majority class."""
    table = contingency_matrix(labels_true, labels_pred)
    return float(table.max(axis=0).sum() / len(labels_true))


def clustering_scores(labels_true: np.ndarray, labels_pred: np.ndarray) -> dict[str, float]:
    """ACC, NMI, purity and ARI of one labelling."""
    return {
        "acc": clustering_accuracy(labels_true, labels_pred),
        "nmi": float(normalized_mutual_info_score(labels_true, labels_pred)),
        "purity": purity(labels_true, labels_pred),
        "ari": float(adjusted_rand_score(labels_true, labels_pred)),
    }


def row_normalize(embedding: np.ndarray) -> np.ndarray:
    """H ./ ||H_i|| row by row (rows of zeros stay zero)."""
    norms = np.linalg.norm(embedding, axis=1, keepdims=True)
    return embedding / np.maximum(norms, 1e-12)


def evaluate_embedding(
    embedding: np.ndarray,
    labels_true: np.ndarray,
    k: int,
    repeats: int = 20,
    n_init: int = 10,
    seed: int = 0,
) -> tuple[dict[str, float], np.ndarray]:
    """Mean (and std) of ACC/NMI/purity/ARI over ``repeats`` k-means runs; also returns the first labelling."""
    x = row_normalize(embedding)
    runs = []
    first = None
    for r in range(repeats):
        pred = KMeans(k, n_init=n_init, max_iter=100, random_state=(seed + r) % 2**32).fit_predict(
            x
        )
        if first is None:
            first = pred
        runs.append(clustering_scores(labels_true, pred))
    out = {name: float(np.mean([run[name] for run in runs])) for name in CLUSTERING_SCORES}
    out.update(
        {f"{name}_std": float(np.std([run[name] for run in runs])) for name in CLUSTERING_SCORES}
    )
    return out, first


def relative_weight_error(approx: np.ndarray, reference: np.ndarray) -> float:
    """||gamma~ - gamma||_2 / ||gamma||_2 (the (1 + eps) approximation of the weights)."""
    return float(
        np.linalg.norm(np.asarray(approx) - np.asarray(reference)) / np.linalg.norm(reference)
    )


def mean_errors(core_weights: pd.DataFrame) -> pd.DataFrame:
    """Mean / std of the relative weight error per (algorithm, method, s) over sampling draws."""
    return (
        core_weights.groupby(["algorithm", "method", "s"])
        .agg(
            rel_error=("rel_error", "mean"),
            rel_error_std=("rel_error", "std"),
            linf_error=("linf_error", "mean"),
            seconds=("seconds", "mean"),
        )
        .reset_index()
    )


def loglog_slope(errors: pd.DataFrame, algorithm: str, method: str) -> float:
    """Slope of log(mean error) against log(s) (the spec expects <= -0.3 for sampling)."""
    sub = errors[
        (errors.algorithm == algorithm) & (errors.method == method) & (errors.rel_error > 0)
    ]
    if len(sub) < 2:
        return float("nan")
    return float(np.polyfit(np.log(sub.s), np.log(sub.rel_error), 1)[0])


def error_at(errors: pd.DataFrame, algorithm: str, method: str, s: int) -> float:
    """Mean relative weight error of one (algorithm, construction) at core size s (NaN if not run)."""
    sub = errors[(errors.algorithm == algorithm) & (errors.method == method) & (errors.s == s)]
    return float(sub.rel_error.iloc[0]) if len(sub) else float("nan")


def extrapolate_full_seconds(timing: pd.DataFrame, algorithm: str, n: int) -> tuple[float, float]:
    """Full time at n from a log-log fit over the measured sizes (exponent clipped to [2, 3]).

    Returns (seconds, fitted exponent). One measured size: cubic scaling from that point.
    """
    measured = timing[(timing.algorithm == algorithm) & timing.full_seconds.notna()]
    if measured.empty:
        return float("nan"), float("nan")
    if len(measured) == 1:
        slope = 3.0
    else:
        slope = float(np.polyfit(np.log(measured.n), np.log(measured.full_seconds), 1)[0])
    slope = float(np.clip(slope, 2.0, 3.0))
    last = measured.sort_values("n").iloc[-1]
    return float(last.full_seconds * (n / last.n) ** slope), slope
