"""IQA evaluation measures: PLCC, SRCC, KRCC, RMSE (optionally after the VQEG 4-parameter logistic)."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import curve_fit
from scipy.stats import kendalltau, pearsonr, spearmanr


def logistic4(x: np.ndarray, b1: float, b2: float, b3: float, b4: float) -> np.ndarray:
    """VQEG mapping f(x) = (b1 - b2) / (1 + exp(-(x - b3) / |b4|)) + b2."""
    return (b1 - b2) / (1.0 + np.exp(-(x - b3) / (abs(b4) + 1e-12))) + b2


def fit_logistic(pred: np.ndarray, mos: np.ndarray) -> np.ndarray:
    """Predictions mapped by the 4-parameter logistic fitted to the MOS (identity if the fit fails)."""
    start = [mos.max(), mos.min(), float(np.median(pred)), float(np.std(pred)) or 1.0]
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            params, _ = curve_fit(logistic4, pred, mos, p0=start, maxfev=5000)
    except RuntimeError:
        return pred
    return logistic4(pred, *params)


def plcc(pred: np.ndarray, mos: np.ndarray) -> float:
    """Pearson linear correlation (0 for a constant prediction)."""
    pred, mos = np.asarray(pred, float), np.asarray(mos, float)
    if np.ptp(pred) == 0 or np.ptp(mos) == 0:
        return 0.0
    return float(pearsonr(pred, mos).statistic)


def srcc(pred: np.ndarray, mos: np.ndarray) -> float:
    """Spearman rank correlation (0 for a constant prediction)."""
    pred, mos = np.asarray(pred, float), np.asarray(mos, float)
    if np.ptp(pred) == 0 or np.ptp(mos) == 0:
        return 0.0
    return float(spearmanr(pred, mos).statistic)


def krcc(pred: np.ndarray, mos: np.ndarray) -> float:
    """Kendall rank correlation tau-b (0 for a constant prediction)."""
    pred, mos = np.asarray(pred, float), np.asarray(mos, float)
    if np.ptp(pred) == 0 or np.ptp(mos) == 0:
        return 0.0
    return float(kendalltau(pred, mos).statistic)


def rmse(pred: np.ndarray, mos: np.ndarray) -> float:
    """Root mean squared error on the MOS scale."""
    return float(np.sqrt(np.mean((np.asarray(pred, float) - np.asarray(mos, float)) ** 2)))


def iqa_scores(pred: np.ndarray, mos: np.ndarray, logistic: bool = False) -> dict[str, float]:
    """The four measures of a prediction; PLCC and RMSE after the logistic fit when asked."""
    pred, mos = np.asarray(pred, float), np.asarray(mos, float)
    mapped = fit_logistic(pred, mos) if logistic else pred
    return {
        "plcc": plcc(mapped, mos),
        "srcc": srcc(pred, mos),
        "krcc": krcc(pred, mos),
        "rmse": rmse(mapped, mos),
    }
