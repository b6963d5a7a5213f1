"""Evaluation measures: AUROC of a score for validity, and the optimisation summaries."""

from __future__ import annotations

import numpy as np
import pandas as pd
from sklearn.metrics import roc_auc_score


def validity_auroc(valid: np.ndarray, score: np.ndarray) -> float:
    """AUROC of ``score`` for predicting validity; a NaN score (singular G) ranks lowest.

    Min-max scaling (the official analysis) does not change an AUROC, so it is not applied.
    """
    valid = np.asarray(valid, dtype=bool)
    score = np.asarray(score, dtype=np.float64)
    if valid.all() or not valid.any():
        return float("nan")
    floor = np.nanmin(score) - 1.0 if np.isfinite(score).any() else 0.0
    return float(roc_auc_score(valid, np.where(np.isfinite(score), score, floor)))


def top_k_mean(values: np.ndarray, k: int) -> float:
    """Mean of the k largest values (all of them when fewer); NaN when empty."""
    values = np.sort(np.asarray(values, dtype=np.float64))[::-1]
    return float(values[:k].mean()) if len(values) else float("nan")


def run_summary(candidates: pd.DataFrame, worst: float) -> dict[str, float]:
    """Valid fraction, best and top-10 mean over the unique valid solutions of one optimisation run.

    A run with no valid solution scores ``worst`` (the objective's floor) for best and top-10.
    """
    valid = candidates[candidates["valid"]]
    unique = valid.drop_duplicates("expression")["objective"].to_numpy()
    return {
        "valid_frac": float(candidates["valid"].mean()) if len(candidates) else float("nan"),
        "n_unique_valid": float(len(unique)),
        "best": float(unique.max()) if len(unique) else worst,
        "top10": top_k_mean(unique, 10) if len(unique) else worst,
    }
