"""Step 1-2 of SRCA: centre the data and rotate it onto its principal axes (official `GetRotation.m`)."""

from __future__ import annotations

import numpy as np
from scipy.linalg import null_space
from sklearn.decomposition import PCA

ROTATIONS = ("pca", "identity")


def principal_rotation(X: np.ndarray, method: str = "pca") -> tuple[np.ndarray, np.ndarray]:
    """Steps 1-2: empirical mean and a D x D orthogonal rotation whose columns are the principal axes.

    Mirrors MATLAB ``pca(X, 'Economy', false)``: all D axes in decreasing variance, each axis signed so
    that its largest-magnitude entry is positive. When n <= D the principal axes span at most n
    directions; the remaining axes (zero variance) complete the basis with an orthonormal null space.
    ``method='identity'`` keeps the original axes (an ablation; the paper's scripts all use PCA).

    Returns ``(mean, R)`` with ``mean`` of shape (D,) and ``R`` of shape (D, D); rotated coordinates
    are ``(X - mean) @ R``.
    """
    X = np.asarray(X, dtype=float)
    n, D = X.shape
    mean = X.mean(axis=0)
    if method == "identity":
        return mean, np.eye(D)
    if method != "pca":
        raise ValueError(f"rotation must be one of {ROTATIONS}, got {method!r}")
    # PCA is scikit-learn's (never re-written here); only the basis completion is ours.
    pca = PCA(n_components=min(n, D), svd_solver="full").fit(X)
    axes = pca.components_  # (m, D), rows orthonormal, decreasing variance
    if axes.shape[0] < D:
        axes = np.vstack([axes, null_space(axes).T])
    R = axes.T.copy()
    # MATLAB's sign convention: the largest |entry| of each coefficient column is positive.
    signs = np.sign(R[np.argmax(np.abs(R), axis=0), np.arange(D)])
    signs[signs == 0] = 1.0
    return mean, R * signs
