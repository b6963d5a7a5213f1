"""Evaluation measures: AUC and AP of link scores (HTGN's protocol), and how well a per-node score
separates the hyperbolic region from the Euclidean one (ROC-AUC)."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score


def link_auc_ap(pos_scores: np.ndarray, neg_scores: np.ndarray) -> tuple[float, float]:
    """ROC-AUC and average precision of positives (label 1) against negatives (label 0); NaN when
    either side is empty."""
    if len(pos_scores) == 0 or len(neg_scores) == 0:
        return float("nan"), float("nan")
    labels = np.concatenate([np.ones(len(pos_scores)), np.zeros(len(neg_scores))])
    scores = np.concatenate([pos_scores, neg_scores])
    return float(roc_auc_score(labels, scores)), float(average_precision_score(labels, scores))


def region_auc(score: np.ndarray, regions: np.ndarray, positive: str = "hyperbolic") -> float:
    """ROC-AUC of `score` for telling `positive` nodes from the other labelled region (nodes with a
    NaN score or an unknown region are left out); NaN when a class is missing."""
    regions = np.asarray(regions).astype(str)
    keep = ~np.isnan(score) & np.isin(regions, ["hyperbolic", "euclidean"])
    labels = regions[keep] == positive
    if labels.all() or not labels.any():
        return float("nan")
    return float(roc_auc_score(labels, score[keep]))
