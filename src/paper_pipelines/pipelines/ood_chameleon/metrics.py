"""The paper's evaluation measures of a selection strategy, pure (official utils.eval_acc / eval_wga_err)."""

from __future__ import annotations

import numpy as np


def selected_error(probs: np.ndarray, errors: np.ndarray) -> float:
    """Mean worst-group error of the algorithm run on each task: sum_a P(a) err_a, averaged over tasks."""
    return float(np.mean(np.sum(np.asarray(probs) * np.asarray(errors), axis=1)))


def soft01_accuracy(winners: np.ndarray, predicted: np.ndarray) -> float:
    """eval_acc 'soft 0-1': a task counts when every predicted algorithm is a ground-truth winner."""
    winners, predicted = np.asarray(winners), np.asarray(predicted)
    return float(np.mean(np.all((predicted == 0) | (winners == 1), axis=1)))


def strict01_accuracy(winners: np.ndarray, predicted: np.ndarray) -> float:
    """eval_acc '0-1': the predicted multi-hot vector equals the winners exactly."""
    return float(np.mean(np.all(np.asarray(winners) == np.asarray(predicted), axis=1)))


def gap_closure(random: float, chosen: float, oracle: float) -> float:
    """(random - chosen) / (random - oracle): the share of the random-to-oracle gap a selector closes."""
    gap = random - oracle
    return float((random - chosen) / gap) if gap > 0 else float("nan")
