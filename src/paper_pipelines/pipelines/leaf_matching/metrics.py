"""The paper's link-prediction measures (official ``utils.py``): all test positives vs all test negatives."""

from __future__ import annotations

import numpy as np
from sklearn.metrics import average_precision_score, f1_score, roc_auc_score


def _labels(pos: np.ndarray, neg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    scores = np.concatenate([pos, neg]).astype(np.float64)
    return scores, np.concatenate([np.ones(len(pos)), np.zeros(len(neg))]).astype(int)


def roc_auc(pos: np.ndarray, neg: np.ndarray) -> float:
    scores, labels = _labels(pos, neg)
    return float(roc_auc_score(labels, scores))


def average_precision(pos: np.ndarray, neg: np.ndarray) -> float:
    """AP (the paper's PR-AUC)."""
    scores, labels = _labels(pos, neg)
    return float(average_precision_score(labels, scores))


def f1_at_top(pos: np.ndarray, neg: np.ndarray) -> float:
    """F1 when the |pos| highest scores (and any tied with the last) are labelled positive."""
    scores, labels = _labels(pos, neg)
    threshold = np.sort(scores)[-len(pos)]
    return float(f1_score(labels, (scores >= threshold).astype(int)))


def hits_at_k(pos: np.ndarray, neg: np.ndarray, k: int) -> float:
    """Fraction of positives above the k-th best negative, positives tied with it counted half."""
    if len(neg) < k:
        return 1.0
    kth = np.sort(neg)[-k]
    pos = np.sort(pos)
    below = (np.searchsorted(pos, kth, "right") + np.searchsorted(pos, kth, "left")) / 2
    return float(1 - below / len(pos))


def global_mrr(pos: np.ndarray, neg: np.ndarray) -> float:
    """Each positive ranked among all negatives; mean of optimistic and pessimistic reciprocal ranks."""
    neg = np.sort(neg)
    optimistic = 1 / (len(neg) - np.searchsorted(neg, pos, "right") + 1)
    pessimistic = 1 / (len(neg) - np.searchsorted(neg, pos, "left") + 1)
    return float((optimistic.mean() + pessimistic.mean()) / 2)


def link_prediction_scores(pos: np.ndarray, neg: np.ndarray, hits_k: list[int]) -> dict[str, float]:
    """ROC-AUC, AP, F1, Hits@K and MRR of one method on one split."""
    pos, neg = np.asarray(pos, np.float64), np.asarray(neg, np.float64)
    out = {
        "auc": roc_auc(pos, neg),
        "ap": average_precision(pos, neg),
        "f1": f1_at_top(pos, neg),
        "mrr": global_mrr(pos, neg),
    }
    out.update({f"hits@{k}": hits_at_k(pos, neg, k) for k in hits_k})
    return out
