"""Selective p-values from a standard normal truncated to a union of intervals (Sec. 4, Thm. 1).

All masses are handled as logarithms so that p-values in the far tails (|T| of 10 or more) keep their
relative precision: the mass of [l, u] is computed from the tail on the side of the median it lies on.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr
from scipy.stats import norm

from .intervals import as_intervals, complement_of_normalised


class ZeroMassError(ValueError):
    """The truncation set has no N(0,1) mass (only isolated points), so the p-value is undefined."""


def log1mexp(x: np.ndarray | float) -> np.ndarray:
    """log(1 - exp(x)) for x <= 0, accurate near both 0 and -inf (Maechler's switch at -log 2)."""
    x = np.minimum(np.asarray(x, dtype=float), 0.0)
    with np.errstate(divide="ignore"):
        return np.where(x > -np.log(2.0), np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def log_interval_masses(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """log P(lo <= N(0,1) <= hi) per row, stable in both tails (vectorised).

    Right of the median the mass is a difference of upper tails, left of it a difference of lower
    tails (mirror image), so neither subtraction loses relative precision.
    """
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    flip = (lo + hi) < 0.0  # mirror intervals lying mostly left of 0 to the right side
    a = np.where(flip, -hi, lo)
    b = np.where(flip, -lo, hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_sf_a, log_sf_b = log_ndtr(-a), log_ndtr(-b)
        out = log_sf_a + log1mexp(log_sf_b - log_sf_a)
    return np.where(b > a, out, -np.inf)


def log_interval_mass(lo: float, hi: float) -> float:
    """log P(lo <= N(0,1) <= hi) for one interval."""
    return float(log_interval_masses(np.array([lo]), np.array([hi]))[0])


def _logsumexp(values: np.ndarray) -> float:
    """log(sum(exp(values))) of a 1-D array, the same arithmetic as scipy.special.logsumexp.

    scipy's generic (array-API) version costs ~50 us per call on a handful of masses and the line
    search needs four per step; this is its formula for real 1-D input (the maxima summed apart,
    log1p of the rest) without the dispatch, so the sums agree to the last bit.
    """
    if values.size == 0:
        return -np.inf
    top = values.max()
    at_top = values == top
    count = float(np.count_nonzero(at_top))
    with np.errstate(invalid="ignore", divide="ignore"):
        rest = float(np.sum(np.exp(np.where(at_top, -np.inf, values) - top)))
        out = np.log1p(rest / count if rest != 0 else rest) + np.log(count) + top
        if not np.isfinite(out):  # all -inf (or an inf): the direct formula is exact there
            out = np.log(np.sum(np.exp(values)))
    return float(out)


def log_mass(intervals: object) -> float:
    """log N(0,1)-mass of a union of intervals."""
    a = as_intervals(intervals)
    if len(a) == 0:
        return -np.inf
    return _logsumexp(log_interval_masses(a[:, 0], a[:, 1]))


def _grouped_logsumexp(values: np.ndarray, group: np.ndarray, groups: int) -> list[float]:
    """:func:`_logsumexp` of each group of ``values`` (group ids 0 .. groups - 1), all at once."""
    top = np.full(groups, -np.inf)
    np.maximum.at(top, group, values)
    at_top = values == top[group]
    count = np.bincount(group, weights=at_top, minlength=groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        shifted = np.where(at_top, 0.0, np.exp(values - top[group]))
        rest = np.bincount(group, weights=shifted, minlength=groups)
        out = np.log1p(rest / count) + np.log(count) + top
    return np.where(top > -np.inf, out, -np.inf).tolist()  # a group of -inf (or none) has mass 0


def _split_many(sets: list[np.ndarray], t: float) -> list[float]:
    """[log mass left of t, log mass right of t] of each normalised set, in one vectorised pass.

    Every row gives a left piece [l, min(u, t)] and a right piece [max(l, t), u]; a piece that is
    empty or a point has mass exactly 0 (log -inf), so no row needs to be filtered out first.
    """
    rows = np.concatenate(sets)
    set_id = np.repeat(np.arange(len(sets)), [len(a) for a in sets])
    lo = np.concatenate([rows[:, 0], np.maximum(rows[:, 0], t)])
    hi = np.concatenate([np.minimum(rows[:, 1], t), rows[:, 1]])
    group = np.concatenate([2 * set_id, 2 * set_id + 1])
    return _grouped_logsumexp(log_interval_masses(lo, hi), group, 2 * len(sets))


def _split(intervals: object, t: float) -> tuple[float, float]:
    """log masses of the parts of the set left and right of t."""
    log_left, log_right = _split_many([as_intervals(intervals)], t)
    return log_left, log_right


def _two_sided(log_left: float, log_right: float) -> float:
    """p = 2 min(F, 1 - F) from the log masses of the truncation set left and right of T."""
    log_total = np.logaddexp(log_left, log_right)
    if not np.isfinite(log_total):
        raise ZeroMassError(
            "the truncation set Z has zero N(0,1) mass: the observed selection holds only at isolated "
            "points of the test line (a tie at a decision boundary of some component at the observed "
            "data, e.g. a constraint touching zero without crossing it), so the selective p-value is "
            "undefined for this feature; perturb the data or change the hyperparameter at the tie"
        )
    return float(min(1.0, 2.0 * np.exp(min(log_left, log_right) - log_total)))


def truncated_cdf(t: float, intervals: object) -> float:
    """F_Z(t) = P(X <= t | X in Z) for X ~ N(0,1) (the CDF used in the selective p-value)."""
    log_left, log_right = _split(intervals, t)
    return float(np.exp(log_left - np.logaddexp(log_left, log_right)))


def selective_p_value(t: float, intervals: object) -> float:
    """Two-sided selective p-value 2 min{F_Z(t), 1 - F_Z(t)} (Eq. for p^selective)."""
    return _two_sided(*_split(intervals, t))


def naive_p_value(t: float) -> float:
    """Classical two-sided z-test that ignores the selection."""
    return float(min(1.0, 2.0 * norm.sf(abs(t))))


def p_value_bounds(t: float, truncation: object, searched: object) -> tuple[float, float, float]:
    """(p, inf_p, sup_p) when only part of the line has been searched (bounded p-values).

    The unsearched region may belong to Z or not; F_Z(t) is smallest when all of it right of t is in Z
    and none left of t, largest in the opposite case, and p is a function of F, so the range of F gives
    exact bounds on p (p itself treats the unsearched region as outside Z).
    """
    return p_value_bounds_normalised(t, as_intervals(truncation), as_intervals(searched))


def p_value_bounds_normalised(
    t: float, truncation: np.ndarray, searched: np.ndarray
) -> tuple[float, float, float]:
    """:func:`p_value_bounds` for sets already in :func:`as_intervals` form (the line search's)."""
    z_left, z_right, u_left, u_right = _split_many(
        [truncation, complement_of_normalised(searched)], t
    )
    p = _two_sided(z_left, z_right)
    f_lo = np.exp(z_left - np.logaddexp(z_left, np.logaddexp(z_right, u_right)))
    f_hi = np.exp(
        np.logaddexp(z_left, u_left) - np.logaddexp(np.logaddexp(z_left, u_left), z_right)
    )

    def p_of(f: float) -> float:
        return min(1.0, 2.0 * min(f, 1.0 - f))

    sup_p = 1.0 if f_lo <= 0.5 <= f_hi else max(p_of(f_lo), p_of(f_hi))
    inf_p = min(p_of(f_lo), p_of(f_hi))
    return p, min(inf_p, p), max(sup_p, p)
