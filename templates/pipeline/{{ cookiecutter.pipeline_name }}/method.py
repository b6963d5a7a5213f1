"""The method (rename this module after the paper's own concept): one function per equation.

Template placeholder: ridge regression, Eq. (X^T X + lambda I) w = X^T y.
"""

from __future__ import annotations

import numpy as np


def fit(x: np.ndarray, y: np.ndarray, ridge: float) -> np.ndarray:
    """Ridge weights w solving (X^T X + ridge I) w = X^T y; shapes (n, d), (n,) -> (d,)."""
    return np.linalg.solve(x.T @ x + ridge * np.eye(x.shape[1]), x.T @ y)


def predict(x: np.ndarray, coef: np.ndarray) -> np.ndarray:
    return x @ np.asarray(coef)
