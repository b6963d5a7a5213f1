"""The paper's evaluation measures: accuracy, edge-mask ROC-AUC against the true motif, and the linear
probe of the environment embedding (the "negative inference" sanity check, spec check 3)."""

from __future__ import annotations

import numpy as np


def accuracy(y: np.ndarray, pred: np.ndarray) -> float:
    """Share of graphs whose predicted class equals the label."""
    y, pred = np.asarray(y), np.asarray(pred)
    return float(np.mean(y == pred)) if len(y) else float("nan")


def mask_auc(mask: np.ndarray, truth: np.ndarray) -> float:
    """ROC-AUC of edge scores against the ground-truth motif edges, pooled over graphs (GSAT's measure)."""
    from sklearn.metrics import roc_auc_score

    truth = np.asarray(truth) > 0.5
    if truth.all() or not truth.any():
        return float("nan")
    return float(roc_auc_score(truth, np.asarray(mask)))


def severe_drop(acc_test: float, acc_severe: float) -> float:
    """Accuracy lost from the OOD test set to the severe (doubled base width) test set."""
    return float(acc_test - acc_severe)


def probe_accuracy(
    features: np.ndarray, target: np.ndarray, fraction: float, rng: np.random.Generator
) -> float:
    """Held-out accuracy of a logistic-regression probe: fit on ``fraction`` of the rows, test on the rest."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import StandardScaler

    n = len(target)
    order = rng.permutation(n)
    cut = min(max(1, int(round(fraction * n))), n - 1)
    fit, test = order[:cut], order[cut:]
    if len(np.unique(target[fit])) < 2:
        return float(np.mean(target[test] == target[fit][0]))
    scaler = StandardScaler().fit(features[fit])
    probe = LogisticRegression(max_iter=1000).fit(scaler.transform(features[fit]), target[fit])
    return float(probe.score(scaler.transform(features[test]), target[test]))
