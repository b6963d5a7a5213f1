"""Multi-label evaluation measures (spec: Setting): Hamming loss, ranking loss, Macro-AUC, all on scores.

They follow scikit-learn's definitions (hamming_loss on sign(f) > 0, label_ranking_loss with ties counted as
mis-ordered, roc_auc_score(average="macro") with ties counted 1/2); the tests check equality with scikit-learn.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def hamming_per_label(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """(1/n) sum_i 1[sign(f_j(x_i)) != y_ij] per label, predicting +1 where f > 0."""
    predicted = np.where(scores > 0, 1.0, -1.0)
    return (predicted != labels).mean(axis=0)


def hamming_loss(scores: np.ndarray, labels: np.ndarray) -> float:
    return float(hamming_per_label(scores, labels).mean())


def auc_per_label(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """AUC_j: the fraction of (positive, negative) pairs of label j that f_j orders correctly (ties 1/2).

    Mann-Whitney form: (sum of the positives' ranks - p (p + 1) / 2) / (p q); NaN where a class is absent.
    """
    ranks = rankdata(scores, axis=0)
    positive = labels > 0
    p = positive.sum(axis=0).astype(float)
    q = labels.shape[0] - p
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = ((ranks * positive).sum(axis=0) - p * (p + 1) / 2) / (p * q)
    return np.where((p > 0) & (q > 0), auc, np.nan)


def macro_auc(scores: np.ndarray, labels: np.ndarray) -> float:
    """(1/c) sum_j AUC_j over the labels that have both classes."""
    return float(np.nanmean(auc_per_label(scores, labels)))


def ranking_loss(scores: np.ndarray, labels: np.ndarray) -> float:
    """(1/n) sum_i |{(p, q): y_ip = 1, y_iq = -1, f_p(x_i) <= f_q(x_i)}| / (|Y_i+| |Y_i-|).

    Rows with no relevant or no irrelevant label count 0 (scikit-learn's convention). Sorting each row by
    decreasing score, negatives before positives on ties, the negatives above a positive are its errors.
    """
    positive = labels > 0
    order = np.lexsort((positive, -scores), axis=-1)
    sorted_pos = np.take_along_axis(positive, order, axis=1)
    negatives_above = np.cumsum(~sorted_pos, axis=1)
    errors = (negatives_above * sorted_pos).sum(axis=1).astype(float)
    p = positive.sum(axis=1)
    q = labels.shape[1] - p
    pairs = p * q
    per_row = np.divide(errors, pairs, out=np.zeros_like(errors), where=pairs > 0)
    return float(per_row.mean())
