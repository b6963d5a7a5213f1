"""Baseline: spherelets / "SPCA" (Li & Dunson), closed form as in the official `Spherelets.m`.

PCA to k + 1 dimensions (mean mu, basis V), algebraic sphere fit in that affine space:
    Y_i = mu + (x_i - mu) V V^T,  l_i = ||Y_i||^2,  H = sum_i (mu - Y_i)(mu - Y_i)^T,
    f = sum_i (l_i - mean(l)) (mu - Y_i),  c = mu + V V^T (-0.5 H^+ f - mu),  r = mean_i ||Y_i - c||;
projection x -> c + r (x - c) V V^T / ||(x - c) V V^T||.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from sklearn.decomposition import PCA


@dataclass
class SphereletModel:
    """A fitted spherelet: centre c (D,), radius r, basis V (D x (k + 1))."""

    center: np.ndarray
    radius: float
    basis: np.ndarray
    k: int


def fit_spherelet(X: np.ndarray, k: int) -> SphereletModel:
    """Closed-form spherelet of dimension k (`Spherelets.m`); needs n > k + 1 points."""
    X = np.asarray(X, dtype=float)
    n, D = X.shape
    if n <= k + 1:
        raise ValueError(
            f"a {k}-dimensional spherelet needs more than k + 1 = {k + 1} points, got {n}"
        )
    if k + 1 > D:
        raise ValueError(f"a {k}-dimensional spherelet needs k + 1 <= D = {D}")
    pca = PCA(n_components=k + 1, svd_solver="full").fit(X)
    mu = pca.mean_
    V = pca.components_.T  # (D, k + 1)
    P = V @ V.T
    Y = mu + (X - mu) @ P
    lvec = np.einsum("ij,ij->i", Y, Y)
    G = mu - Y
    H = G.T @ G
    f = G.T @ (lvec - lvec.mean())
    c = mu + P @ (-0.5 * np.linalg.pinv(H) @ f - mu)
    r = float(np.linalg.norm(Y - c, axis=1).mean())
    return SphereletModel(center=c, radius=r, basis=V, k=k)


def project_spherelet(model: SphereletModel, X: np.ndarray) -> np.ndarray:
    """Project points onto the spherelet: c + r (x - c) V V^T / ||(x - c) V V^T||."""
    X = np.asarray(X, dtype=float)
    P = model.basis @ model.basis.T
    u = (X - model.center) @ P
    norms = np.linalg.norm(u, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return model.center + model.radius * u / norms
