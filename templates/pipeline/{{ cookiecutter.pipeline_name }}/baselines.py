"""Baselines that are not a concept module of their own."""

from __future__ import annotations

import numpy as np


def fit_mean(y: np.ndarray) -> float:
    """The constant predictor: the training mean."""
    return float(np.mean(y))
