"""Baselines that need no collaboration training: Up-E (the isolated expert's pooled features) and a
static concatenation of both experts' pooled features."""

from __future__ import annotations

import numpy as np


def upe_features(main_features: np.ndarray) -> np.ndarray:
    """Up-E: the isolated main expert, its own pooled feature."""
    return main_features


def concat_features(main_features: np.ndarray, aux_features: np.ndarray) -> np.ndarray:
    """concat: the static [main, aux] pooled features (no interaction, no weighting)."""
    return np.concatenate([main_features, aux_features], axis=1)
