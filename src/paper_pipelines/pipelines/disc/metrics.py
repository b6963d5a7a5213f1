"""The evaluation measures: top-1 accuracy, box IoU and box accuracy at an IoU threshold."""

from __future__ import annotations

import numpy as np


def top1_accuracy(labels: np.ndarray, predicted: np.ndarray) -> float:
    """Fraction of predictions equal to the label."""
    return float(np.mean(np.asarray(labels) == np.asarray(predicted)))


def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IoU of paired boxes given as (cx, cy, w, h), shapes (n, 4) -> (n,); negative sizes count as 0."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    wa, ha = np.clip(a[:, 2], 0, None), np.clip(a[:, 3], 0, None)
    wb, hb = np.clip(b[:, 2], 0, None), np.clip(b[:, 3], 0, None)
    ix = np.minimum(a[:, 0] + wa / 2, b[:, 0] + wb / 2) - np.maximum(
        a[:, 0] - wa / 2, b[:, 0] - wb / 2
    )
    iy = np.minimum(a[:, 1] + ha / 2, b[:, 1] + hb / 2) - np.maximum(
        a[:, 1] - ha / 2, b[:, 1] - hb / 2
    )
    inter = np.clip(ix, 0, None) * np.clip(iy, 0, None)
    union = wa * ha + wb * hb - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def box_accuracy(true: np.ndarray, predicted: np.ndarray, thr: float) -> float:
    """Fraction of boxes whose IoU with the truth is at least `thr`."""
    return float(np.mean(box_iou(true, predicted) >= thr))
