"""Missing-value imputation as linear maps y_full = G y_obs (paper Sec. 3.1).

G (n x n_obs) depends only on X and on which responses are missing, so imputation adds no selection
event: it only maps the test line of the observed responses to the line of the imputed ones.
"""

from __future__ import annotations

import numpy as np


def _identity_rows(missing: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n, obs = len(missing), np.flatnonzero(~missing)
    g = np.zeros((n, len(obs)))
    g[obs, np.arange(len(obs))] = 1.0
    return g, obs


def mean_imputation_matrix(X: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Missing rows of G are 1 / n_obs (the observed mean)."""
    g, obs = _identity_rows(missing)
    g[missing] = 1.0 / len(obs)
    return g


def _nearest_matrix(X: np.ndarray, missing: np.ndarray, order: float) -> np.ndarray:
    """Missing row i copies the observed row nearest to x_i in the L_order distance (first on ties)."""
    g, obs = _identity_rows(missing)
    for i in np.flatnonzero(missing):
        dist = np.linalg.norm(X[obs] - X[i], ord=order, axis=1)
        g[i, int(np.argmin(dist))] = 1.0
    return g


def euclidean_imputation_matrix(X: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """1-NN hot deck, Euclidean distance."""
    return _nearest_matrix(X, missing, 2)


def manhattan_imputation_matrix(X: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """1-NN hot deck, Manhattan distance."""
    return _nearest_matrix(X, missing, 1)


def chebyshev_imputation_matrix(X: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """1-NN hot deck, Chebyshev distance."""
    return _nearest_matrix(X, missing, np.inf)


def regression_imputation_matrix(X: np.ndarray, missing: np.ndarray) -> np.ndarray:
    """Missing rows of G are x_i^T (X_obs^T X_obs)^{-1} X_obs^T (OLS prediction from observed rows)."""
    g, obs = _identity_rows(missing)
    g[missing] = X[missing] @ np.linalg.pinv(X[obs])
    return g
