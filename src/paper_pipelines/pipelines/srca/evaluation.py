"""Evaluation measures of the paper's scripts: reconstruction MSE (`MATCH_DIST.m`) and phase recovery."""

from __future__ import annotations

import numpy as np


def reconstruction_mse(X: np.ndarray, X_hat: np.ndarray) -> float:
    """Table 4.1 / H.1 measure: mean over points of the squared Euclidean distance ||x_i - x_hat_i||^2."""
    X = np.asarray(X, dtype=float)
    X_hat = np.asarray(X_hat, dtype=float)
    if X.shape != X_hat.shape:
        raise ValueError(f"reconstruction must match the data's shape {X.shape}, got {X_hat.shape}")
    return float(((X - X_hat) ** 2).sum(axis=1).mean())


def angles(coords: np.ndarray) -> np.ndarray:
    """Angle of each point in the plane of its first two (reduced) coordinates."""
    coords = np.asarray(coords, dtype=float)
    return np.arctan2(coords[:, 1], coords[:, 0])


def phase_recovery(estimated: np.ndarray, true: np.ndarray) -> float:
    """Circular agreement up to rotation and reflection: max(|mean e^{i(a - t)}|, |mean e^{i(a + t)}|).

    1 means the estimated angles equal the true phase up to a constant shift (and orientation);
    about 1/sqrt(n) for unrelated angles.
    """
    a = np.asarray(estimated, dtype=float)
    t = np.asarray(true, dtype=float)
    same = abs(np.exp(1j * (a - t)).mean())
    flipped = abs(np.exp(1j * (a + t)).mean())
    return float(max(same, flipped))
