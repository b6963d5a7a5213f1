"""Structure preservation by the co-ranking matrix (Lee & Verleysen), as the paper's `Coranking.Rmd` uses it
through the R packages coRanking and dimRed.

Q_kl = #{(i, j) : rank of j among i's neighbours is k in the original data and l in the reduced data},
Q_NX(K) = sum_{k, l <= K} Q_kl / (K n),  R_NX(K) = ((n - 1) Q_NX(K) - K) / (n - 1 - K) for K = 1..n-2,
LCMC(K) = Q_NX(K) - K / (n - 1),  weighted AUC = sum_K R_NX(K) / K / sum_K 1 / K (dimRed's AUC_lnK),
unweighted AUC = mean_K R_NX(K).
"""

from __future__ import annotations

import numpy as np
from scipy.spatial.distance import cdist


def rank_matrix(X: np.ndarray) -> np.ndarray:
    """Neighbour ranks: R[i, j] = rank (1..n-1) of j by distance from i; R[i, i] = 0. Ties by index."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    dist = cdist(X, X)
    np.fill_diagonal(dist, -np.inf)  # self first, rank 0
    order = np.argsort(dist, axis=1, kind="stable")
    ranks = np.empty((n, n), dtype=np.int64)
    ranks[np.arange(n)[:, None], order] = np.arange(n)[None, :]
    return ranks


def coranking_matrix(X_high: np.ndarray, X_low: np.ndarray) -> np.ndarray:
    """The (n - 1) x (n - 1) co-ranking matrix Q between original and reduced points (same row order)."""
    high = rank_matrix(X_high)
    low = rank_matrix(X_low)
    if high.shape != low.shape:
        raise ValueError(
            f"co-ranking needs the same points in both spaces, got {high.shape[0]} and {low.shape[0]}"
        )
    n = high.shape[0]
    off = ~np.eye(n, dtype=bool)
    flat = (high[off] - 1) * (n - 1) + (low[off] - 1)
    return np.bincount(flat, minlength=(n - 1) ** 2).reshape(n - 1, n - 1)


def q_nx(Q: np.ndarray) -> np.ndarray:
    """Q_NX(K) for K = 1..n-1: fraction of K-neighbourhoods kept."""
    m = Q.shape[0]
    n = m + 1
    cum = Q.cumsum(axis=0).cumsum(axis=1)
    K = np.arange(1, m + 1)
    return cum[K - 1, K - 1] / (K * n)


def r_nx(Q: np.ndarray) -> np.ndarray:
    """R_NX(K) for K = 1..n-2: Q_NX rescaled so that a random embedding scores 0 and a perfect one 1."""
    m = Q.shape[0]
    n = m + 1
    K = np.arange(1, n - 1)
    return ((n - 1) * q_nx(Q)[: n - 2] - K) / (n - 1 - K)


def lcmc(Q: np.ndarray) -> np.ndarray:
    """Local continuity meta-criterion LCMC(K) = Q_NX(K) - K / (n - 1), K = 1..n-1."""
    m = Q.shape[0]
    K = np.arange(1, m + 1)
    return q_nx(Q) - K / m


def auc_ln_k(rnx: np.ndarray) -> float:
    """dimRed's AUC_lnK: R_NX averaged with weights 1/K (the paper's 'weighted AUC')."""
    K = np.arange(1, len(rnx) + 1)
    return float((rnx / K).sum() / (1.0 / K).sum())


def coranking_scores(X_high: np.ndarray, X_low: np.ndarray) -> dict[str, float | np.ndarray]:
    """Weighted and unweighted AUC of R_NX, the argmax of LCMC, and the R_NX curve."""
    Q = coranking_matrix(X_high, X_low)
    rnx = r_nx(Q)
    lc = lcmc(Q)
    return {
        "auc_weighted": auc_ln_k(rnx),
        "auc_unweighted": float(rnx.mean()),
        "k_max_lcmc": int(np.argmax(lc) + 1),
        "rnx": rnx,
    }
