"""Interval arithmetic on the real line and constraints along the line y(z) = a + b z (Sec. 4 of the paper).

A set is a finite union of closed intervals, stored as an (m, 2) float array of sorted, disjoint rows.
Every selection event in this paper is an intersection of linear and quadratic inequalities in z; the
functions here turn those inequalities into the interval that contains the current point z.
"""

from __future__ import annotations

import math

import numpy as np

COEF_TOL = 1e-10  # coefficients smaller than this are treated as exact zeros (rounding noise)


def as_intervals(intervals: object) -> np.ndarray:
    """Normalise a list of [l, u] pairs into a sorted, merged (m, 2) array (empty pairs dropped)."""
    arr = np.asarray(intervals, dtype=float).reshape(-1, 2)
    arr = arr[arr[:, 0] <= arr[:, 1]]
    if len(arr) == 0:
        return np.empty((0, 2))
    if len(arr) > 1:
        arr = arr[np.argsort(arr[:, 0], kind="stable")]
    lo, hi = arr[:, 0], arr[:, 1]
    # a row starts a new block when it lies right of every upper edge before it (touching rows merge);
    # vectorised because the line search normalises its two sets at every step
    start = np.ones(len(arr), dtype=bool)
    start[1:] = lo[1:] > np.maximum.accumulate(hi)[:-1]
    first = np.flatnonzero(start)
    return np.column_stack([lo[first], np.maximum.reduceat(hi, first)])


def union(first: object, second: object) -> np.ndarray:
    """Union of two interval sets."""
    return as_intervals(np.vstack([as_intervals(first), as_intervals(second)]))


def intersection(first: object, second: object) -> np.ndarray:
    """Intersection of two interval sets (two-pointer sweep)."""
    a, b = as_intervals(first), as_intervals(second)
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        lo, hi = max(a[i, 0], b[j, 0]), min(a[i, 1], b[j, 1])
        if lo <= hi:
            out.append((lo, hi))
        if a[i, 1] < b[j, 1]:
            i += 1
        else:
            j += 1
    return as_intervals(out)


def complement(intervals: object) -> np.ndarray:
    """Closure of the complement in R (boundaries are measure zero, so closed is fine)."""
    return complement_of_normalised(as_intervals(intervals))


def complement_of_normalised(a: np.ndarray) -> np.ndarray:
    """:func:`complement` of a set already in :func:`as_intervals` form (skips normalising it again)."""
    edges = np.concatenate([[-np.inf], a.ravel(), [np.inf]]).reshape(-1, 2)
    return as_intervals(edges[edges[:, 0] < edges[:, 1]])


def difference(first: object, second: object) -> np.ndarray:
    """first minus second (up to boundary points)."""
    return intersection(first, complement(second))


def length(intervals: object) -> float:
    """Lebesgue measure of the set."""
    a = as_intervals(intervals)
    return float(np.sum(a[:, 1] - a[:, 0])) if len(a) else 0.0


def contains(intervals: object, z: float) -> bool:
    """Whether z lies in the set."""
    a = as_intervals(intervals)
    return bool(np.any((a[:, 0] <= z) & (z <= a[:, 1])))


def linear_interval(intercept: np.ndarray, slope: np.ndarray, z: float) -> tuple[float, float]:
    """Interval {t : intercept + slope * t <= 0 for every row} (a polytope cut by a line).

    The constraints hold at t = z by construction (they describe the decision observed at z); rows with a
    negligible slope carry no information about t and are skipped.
    """
    intercept = np.asarray(intercept, dtype=float).ravel()
    slope = np.asarray(slope, dtype=float).ravel()
    lo, hi = -np.inf, np.inf
    scale = np.maximum(1.0, np.abs(intercept) + np.abs(slope) * abs(z))
    pos = slope > COEF_TOL * scale
    neg = slope < -COEF_TOL * scale
    if np.any(pos):
        hi = max(float(np.min(-intercept[pos] / slope[pos])), z)
    if np.any(neg):
        lo = min(float(np.max(-intercept[neg] / slope[neg])), z)
    return lo, hi


def quadratic_interval(c2: float, c1: float, c0: float, z: float) -> tuple[float, float]:
    """Piece containing z of {t : c2 t^2 + c1 t + c0 <= 0}; the inequality holds at z by construction."""
    scale = max(abs(c2), abs(c1), abs(c0), 1e-300)
    if abs(c2) <= COEF_TOL * scale:
        if abs(c1) <= COEF_TOL * scale:
            return -np.inf, np.inf
        return linear_interval(np.array([c0]), np.array([c1]), z)
    disc = c1 * c1 - 4.0 * c2 * c0
    if disc <= 0.0:
        # No sign change: the whole line when the parabola opens downwards; else only a tangent point.
        return (-np.inf, np.inf) if c2 < 0 else (z, z)
    # Numerically stable roots (no cancellation between c1 and sqrt(disc)).
    q = -0.5 * (c1 + np.copysign(np.sqrt(disc), c1))
    r1, r2 = sorted((q / c2, c0 / q if q != 0 else -q / c2))
    if c2 > 0:
        return float(min(r1, z)), float(max(r2, z))
    return (-np.inf, float(max(r1, z))) if z <= 0.5 * (r1 + r2) else (float(min(r2, z)), np.inf)


# Relative slack for "holds at z": the decision and its constraint are evaluated from the same
# coefficients, so only rounding separates them.
HOLDS_TOL = 1e-9
# up to this many rows QuadraticConstraints works on Python floats (see _prepare_scalar)
SCALAR_ROWS = 16


class ConstraintViolation(ValueError):
    """A constraint that must hold at the current point does not: the decision and the event disagree."""


def _check_holds_at(c2: np.ndarray, c1: np.ndarray, c0: np.ndarray, z: float) -> None:
    """Every row c2 z^2 + c1 z + c0 <= 0 must hold at z (up to rounding), else raise.

    A violated row has no piece containing z; returning an empty or zero-width interval instead would
    stall the line search (one 1e-6 step per call) and end in a zero-mass p-value far from the cause.
    """
    value = (c2 * z + c1) * z + c0
    size = np.abs(c2) * z * z + np.abs(c1) * abs(z) + np.abs(c0)
    bad = value > HOLDS_TOL * size + 1e-300
    if np.any(bad):
        k = int(np.flatnonzero(bad)[0])
        nowhere = c2[k] > 0 and c1[k] ** 2 < 4 * c2[k] * c0[k]
        kind = " (no real root and opening upwards: it holds nowhere)" if nowhere else ""
        raise ConstraintViolation(
            f"quadratic constraint {k} ({c2[k]:.6g} t^2 + {c1[k]:.6g} t + {c0[k]:.6g} <= 0){kind} is "
            f"violated at the current point t = {z:.6g} (value {value[k]:.3g} > 0): the "
            "component's decision disagrees with its selection event"
        )


class QuadraticConstraints:
    """Rows c2[k] t^2 + c1[k] t + c0[k] <= 0, prepared once for evaluation at many points.

    Row k's piece containing z is [min(L_k, z), max(U_k, z)] with edges L_k, U_k (roots, or +-inf)
    that do not depend on z, except for a downward parabola, which keeps the side of its vertex
    that z lies on. The intersection over rows is then [min(max L, z), max(min U, z)]: only that and
    the holds-at-z check are left per point (the stepwise and CV events reuse one set at many z).
    """

    def __init__(self, c2: np.ndarray, c1: np.ndarray, c0: np.ndarray) -> None:
        c2, c1, c0 = (np.asarray(c, dtype=float).ravel() for c in (c2, c1, c0))
        self.c2, self.c1, self.c0 = c2, c1, c0
        if c2.size <= SCALAR_ROWS and np.isfinite(c2 + c1 + c0).all():
            self._prepare_scalar()
        else:
            self._prepare_vectorised()

    def _prepare_vectorised(self) -> None:
        c2, c1, c0 = self.c2, self.c1, self.c0
        scale = np.maximum.reduce([np.abs(c2), np.abs(c1), np.abs(c0), np.full(c2.shape, 1e-300)])
        quad = np.abs(c2) > COEF_TOL * scale
        lin = ~quad & (np.abs(c1) > COEF_TOL * scale)
        low = np.full(c2.shape, -np.inf)  # L_k
        high = np.full(c2.shape, np.inf)  # U_k
        # linear rows: c0 + c1 t <= 0
        with np.errstate(divide="ignore", invalid="ignore"):
            root = -c0 / c1
        high = np.where(lin & (c1 > 0), root, high)
        low = np.where(lin & (c1 < 0), root, low)
        # quadratic rows (numerically stable roots: no cancellation between c1 and sqrt(disc))
        disc = c1 * c1 - 4.0 * c2 * c0
        real = quad & (disc > 0)
        sq = np.sqrt(np.where(real, disc, 0.0))
        q = -0.5 * (c1 + np.where(c1 >= 0, sq, -sq))
        with np.errstate(divide="ignore", invalid="ignore"):
            ra = np.where(real, q / np.where(quad, c2, 1.0), 0.0)
            rb = np.where(real & (q != 0), c0 / np.where(q != 0, q, 1.0), ra)
        r1, r2 = np.minimum(ra, rb), np.maximum(ra, rb)
        up = real & (c2 > 0)
        low = np.where(up, r1, low)
        high = np.where(up, r2, high)
        # no real root and opening upwards: the inequality holds at most at the vertex, where z then
        # sits (a tie at the decision boundary; _check_holds_at rejects every other case): a
        # zero-width piece [z, z], which the line search treats as measure zero
        tangent = quad & ~real & (c2 > 0)
        low = np.where(tangent, np.inf, low)
        high = np.where(tangent, -np.inf, high)
        down = real & (c2 < 0)
        self.low = float(np.max(low[~down])) if np.any(~down) else -np.inf
        self.high = float(np.min(high[~down])) if np.any(~down) else np.inf
        # downward rows: left of the vertex the piece is (-inf, r1], right of it [r2, inf)
        mid = 0.5 * (r1 + r2)
        self.down = list(zip(mid[down].tolist(), r1[down].tolist(), r2[down].tolist(), strict=True))

    def _prepare_scalar(self) -> None:
        """The same arithmetic row by row on Python floats (IEEE operations, so the same bits):
        for a handful of rows (stepwise, the CV choice) numpy's per-call overhead dominates."""
        low, high, self.down = -np.inf, np.inf, []
        for c2, c1, c0 in zip(self.c2.tolist(), self.c1.tolist(), self.c0.tolist(), strict=True):
            scale = max(abs(c2), abs(c1), abs(c0), 1e-300)
            if abs(c2) <= COEF_TOL * scale:  # linear (or negligible) row: c0 + c1 t <= 0
                if abs(c1) > COEF_TOL * scale:
                    if c1 > 0:
                        high = min(high, -c0 / c1)
                    else:
                        low = max(low, -c0 / c1)
                continue
            disc = c1 * c1 - 4.0 * c2 * c0
            if not disc > 0:
                if c2 > 0:  # tangent point (see _prepare_vectorised): the piece [z, z]
                    low, high = np.inf, -np.inf
                continue
            sq = math.sqrt(disc)
            q = -0.5 * (c1 + (sq if c1 >= 0 else -sq))
            ra = q / c2
            rb = c0 / q if q != 0 else ra
            r1, r2 = min(ra, rb), max(ra, rb)
            if c2 > 0:
                low, high = max(low, r1), min(high, r2)
            else:
                self.down.append((0.5 * (r1 + r2), r1, r2))
        self.low, self.high = low, high

    def interval(self, z: float) -> tuple[float, float]:
        """Intersection over rows of the piece containing z (every row must hold at z)."""
        if self.c2.size == 0:
            return -np.inf, np.inf
        _check_holds_at(self.c2, self.c1, self.c0, z)
        low, high = self.low, self.high
        for mid, r1, r2 in self.down:
            if z <= mid:
                high = min(high, r1)
            else:
                low = max(low, r2)
        return float(min(low, z)), float(max(high, z))


def quadratic_interval_many(
    c2: np.ndarray, c1: np.ndarray, c0: np.ndarray, z: float
) -> tuple[float, float]:
    """Intersection over rows of :func:`quadratic_interval`, vectorised (one interval containing z).

    Row k reads c2[k] t^2 + c1[k] t + c0[k] <= 0 and holds at t = z.
    """
    return QuadraticConstraints(c2, c1, c0).interval(z)
