"""Downstream probes on frozen features (the released linear-probe protocol at toy scale): logistic
regression for classification, a ridge regressor for boxes, both fitted on the labelled fraction only."""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from .metrics import box_accuracy, top1_accuracy


def probe_classification(
    features: np.ndarray, labels: np.ndarray, labelled: np.ndarray, C: float, max_iter: int
) -> float:
    """Top-1 on the unlabelled canvases of a logistic-regression probe fitted on the labelled ones."""
    probe = make_pipeline(StandardScaler(), LogisticRegression(C=C, max_iter=max_iter))
    probe.fit(features[labelled], labels[labelled])
    return top1_accuracy(labels[~labelled], probe.predict(features[~labelled]))


def probe_boxes(
    features: np.ndarray, boxes: np.ndarray, labelled: np.ndarray, alpha: float, iou_thr: float
) -> float:
    """Box accuracy (IoU >= thr) on the unlabelled canvases of a ridge box regressor."""
    probe = make_pipeline(StandardScaler(), Ridge(alpha=alpha))
    probe.fit(features[labelled], boxes[labelled])
    return box_accuracy(boxes[~labelled], probe.predict(features[~labelled]), iou_thr)
