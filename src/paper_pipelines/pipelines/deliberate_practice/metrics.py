"""Evaluation measures, pure NumPy: accuracy, learner entropy, label agreement, efficiency, quality."""

from __future__ import annotations

import numpy as np


def accuracy(predicted: np.ndarray, labels: np.ndarray) -> float:
    """Top-1 accuracy: the fraction of predictions equal to the label."""
    return float(np.mean(np.asarray(predicted) == np.asarray(labels)))


def softmax_entropy(logits: np.ndarray) -> np.ndarray:
    """Per-row entropy of softmax(logits) in nats (log-sum-exp shifted for stability)."""
    z = logits - logits.max(axis=1, keepdims=True)
    log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -(np.exp(log_p) * log_p).sum(axis=1)


def label_agreement(reference_predictions: np.ndarray, conditioning_labels: np.ndarray) -> float:
    """Fraction of samples a real-data reference classifier assigns to their conditioning class."""
    return accuracy(reference_predictions, conditioning_labels)


def first_iteration_reaching(
    iterations: np.ndarray, accuracy_curve: np.ndarray, target: float, budget: int
) -> int:
    """First evaluated iteration whose accuracy is >= target; budget + 1 when none reaches it."""
    order = np.argsort(iterations, kind="stable")
    its, acc = np.asarray(iterations)[order], np.asarray(accuracy_curve)[order]
    hit = np.flatnonzero(acc >= target)
    return int(its[hit[0]]) if hit.size else int(budget) + 1


def class_mean_mse(
    x_generated: np.ndarray, y_generated: np.ndarray, x_real: np.ndarray, y_real: np.ndarray
) -> float:
    """Mean over classes of the squared error between generated and real per-class pixel means."""
    errors = []
    for c in np.unique(y_real):
        gen = x_generated[y_generated == c]
        if len(gen) == 0:
            continue
        errors.append(np.mean((gen.mean(axis=0) - x_real[y_real == c].mean(axis=0)) ** 2))
    return float(np.mean(errors))
