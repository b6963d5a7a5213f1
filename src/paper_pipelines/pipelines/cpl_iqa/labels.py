"""Preprocessing of CPL-IQA: scalar MOS -> K-bin vector label, and the vector label's score and entropy.

The paper rescales each database's MOS linearly to [1, 100] and turns it into a 100-bin vector label
over bin centres c_k = k by entropy minimisation under the mean constraint sum_k c_k v_k = MOS. Without
a locality condition that problem is degenerate (two far-apart bins beat two neighbours), so the
minimiser is taken over distributions on the bins within distance < 1 of the MOS: the two-bin linear
split (spec, [reconstructed]). The Gaussian ("normal distribution simulation") and one-hot conversions
are the rebuttal's ablations.
"""

from __future__ import annotations

import numpy as np


def bin_centres(bins: int) -> np.ndarray:
    """Bin centres c_k = k, k = 1..K (the paper's K = 100 quality bins)."""
    return np.arange(1, bins + 1, dtype=float)


def rescale_mos(mos: np.ndarray, low: float, high: float, bins: int) -> np.ndarray:
    """Linear map of MOS on [low, high] to [1, K] (the paper: every database to [1, 100])."""
    if not high > low:
        raise ValueError(f"MOS range must have high > low, got low={low}, high={high}")
    return 1.0 + (bins - 1.0) * (np.asarray(mos, float) - low) / (high - low)


def unscale_score(score: np.ndarray, low: float, high: float, bins: int) -> np.ndarray:
    """Inverse of :func:`rescale_mos`: a predicted score on [1, K] back on the database's MOS scale."""
    return low + (np.asarray(score, float) - 1.0) * (high - low) / (bins - 1.0)


def two_bin_label(mos: np.ndarray, bins: int) -> np.ndarray:
    """Minimum-entropy local label: v_floor = ceil(m) - m, v_ceil = m - floor(m) (one-hot at integers)."""
    m = np.clip(np.asarray(mos, float), 1.0, float(bins))
    low = np.floor(m)
    frac = m - low
    out = np.zeros((m.size, bins))
    rows = np.arange(m.size)
    low_idx = low.astype(int) - 1
    out[rows, low_idx] = 1.0 - frac
    high_idx = np.minimum(low_idx + 1, bins - 1)
    # at m = K the upper bin is the same bin and frac = 0: adding 0 leaves the one-hot intact
    out[rows, high_idx] += frac
    return out


def gaussian_label(mos: np.ndarray, bins: int, sigma: float) -> np.ndarray:
    """Discretised Gaussian N(m, sigma^2) over the bin centres, normalised to sum 1 (rebuttal ablation)."""
    m = np.asarray(mos, float)[:, None]
    logits = -((bin_centres(bins)[None, :] - m) ** 2) / (2.0 * sigma**2)
    weights = np.exp(logits - logits.max(axis=1, keepdims=True))
    return weights / weights.sum(axis=1, keepdims=True)


def onehot_label(mos: np.ndarray, bins: int) -> np.ndarray:
    """One-hot at the rounded MOS (rebuttal ablation)."""
    idx = np.clip(np.rint(np.asarray(mos, float)), 1, bins).astype(int) - 1
    out = np.zeros((idx.size, bins))
    out[np.arange(idx.size), idx] = 1.0
    return out


def convert_labels(mos: np.ndarray, conversion: str, bins: int, sigma: float) -> np.ndarray:
    """Vector labels (n, K) of MOS already on [1, K] by the chosen conversion."""
    if conversion == "two_bin":
        return two_bin_label(mos, bins)
    if conversion == "gaussian":
        return gaussian_label(mos, bins, sigma)
    if conversion == "onehot":
        return onehot_label(mos, bins)
    raise ValueError(f"unknown label conversion {conversion!r}: use two_bin, gaussian or onehot")


def entropy(p: np.ndarray) -> np.ndarray:
    """Row entropy H(p) = -sum_k p_k ln p_k with 0 ln 0 = 0."""
    p = np.asarray(p, float)
    safe = np.where(p > 0, p, 1.0)
    return -(p * np.log(safe)).sum(axis=-1)


def expected_score(p: np.ndarray, bins: int) -> np.ndarray:
    """Predicted quality score = sum_k c_k p_k (expectation over the bin centres)."""
    return np.asarray(p, float) @ bin_centres(bins)
