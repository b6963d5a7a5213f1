"""Selective p-values from a standard normal truncated to a union of intervals (Sec. 4, Thm. 1).

All masses are handled as logarithms so that p-values in the far tails (|T| of 10 or more) keep their
relative precision: the mass of [l, u] is computed from the tail on the side of the median it lies on.
"""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, logsumexp
from scipy.stats import norm

from .intervals import as_intervals, complement, intersection


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


def log_mass(intervals: object) -> float:
    """log N(0,1)-mass of a union of intervals."""
    a = as_intervals(intervals)
    if len(a) == 0:
        return -np.inf
    return float(logsumexp(log_interval_masses(a[:, 0], a[:, 1])))


def _split(intervals: object, t: float) -> tuple[float, float]:
    """log masses of the parts of the set left and right of t."""
    a = as_intervals(intervals)
    return log_mass(intersection(a, [[-np.inf, t]])), log_mass(intersection(a, [[t, np.inf]]))


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
    z_left, z_right = _split(truncation, t)
    u_left, u_right = _split(complement(searched), t)
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
