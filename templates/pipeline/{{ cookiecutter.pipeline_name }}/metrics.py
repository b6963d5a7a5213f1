"""The paper's evaluation measures, pure functions of predictions and targets."""

from __future__ import annotations

import numpy as np


def error(y: np.ndarray, y_hat: np.ndarray, kind: str) -> float:
    """Mean squared (``mse``) or mean absolute (``mae``) error."""
    residual = np.asarray(y) - np.asarray(y_hat)
    return float(np.mean(residual**2) if kind == "mse" else np.mean(np.abs(residual)))
