"""Parametric line search over z for the truncation set Z (Sec. 4.2) with bounded p-values.

``event(z) -> (model, lo, hi)`` gives the pipeline output at y(z) and an interval around z on which it
is constant. Z is the union of the intervals whose output equals the observed one. The search grows
the searched block around T_obs edge by edge; "precision" stops when the bounds on the p-value from
the still-unsearched region are closer than ``precision`` (Shiraishi et al. 2023, bounded p-values).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .intervals import as_intervals, length
from .truncated_normal import (
    ZeroMassError,
    naive_p_value,
    p_value_bounds,
    p_value_bounds_normalised,
    selective_p_value,
)


class SearchError(RuntimeError):
    """The line search could not make progress or ran out of iterations."""


@dataclass
class SearchResult:
    """Outcome of one selective test along the line (in the unit-variance scale of T)."""

    stat: float
    p_value: float
    inf_p: float
    sup_p: float
    naive_p: float
    truncation: np.ndarray
    searched: np.ndarray
    search_count: int
    mode: str
    extra: dict = field(default_factory=dict)


def _block_edges(searched: np.ndarray, t: float, gap: float) -> tuple[float, float]:
    """Edges of the searched block containing t, bridging gaps narrower than ``gap``.

    Gaps below the step size come from rounding at breakpoints; their N(0,1) mass is < 1e-6 and they
    stay "unsearched" in the p-value bounds, so bridging them never hides an error larger than that.
    """
    lo = hi = t
    searched = searched.tolist()  # plain floats: this loop runs at every step of the search
    for lo_i, hi_i in searched:  # sorted by lower edge: grow to the right
        if hi_i < t:
            continue
        if lo_i > hi + gap:
            break
        hi = max(hi, hi_i)
    for lo_i, hi_i in searched[::-1]:  # grow to the left
        if lo_i > t:
            continue
        if hi_i < lo - gap:
            break
        lo = min(lo, lo_i)
    return lo, hi


def parametric_search(
    event: Callable[[float], tuple[object, float, float]],
    observed_model: object,
    t_obs: float,
    *,
    search_strategy: str = "pi3",
    termination: str = "precision",
    precision: float = 1e-3,
    step: float = 1e-6,
    max_iter: int = 100_000,
    alpha: float = 0.05,
) -> SearchResult:
    """Line search for Z = {z : model(z) == observed} and the selective p-value."""
    truncation = np.empty((0, 2))
    searched = np.empty((0, 2))
    z, count = float(t_obs), 0
    bound = 10.0 + abs(t_obs)
    while True:
        model, lo, hi = event(z)
        count += 1
        if not lo <= z <= hi:
            raise SearchError(f"event interval [{lo}, {hi}] does not contain z={z}")
        # both sets stay normalised (sorted, merged), so adding a piece is one as_intervals
        piece = np.array([[lo, hi]], dtype=float)
        searched = as_intervals(np.vstack([searched, piece]))
        if model == observed_model:
            truncation = as_intervals(np.vstack([truncation, piece]))
        if np.sum(truncation[:, 1] - truncation[:, 0]) > 0.0:  # ties (zero width) carry no mass
            p, inf_p, sup_p = p_value_bounds_normalised(t_obs, truncation, searched)
        else:
            p, inf_p, sup_p = np.nan, 0.0, 1.0
        left, right = _block_edges(searched, t_obs, step)
        if termination == "precision" and sup_p - inf_p < precision:
            break
        if termination == "decision" and (sup_p <= alpha or inf_p > alpha):
            break
        if left <= -bound and right >= bound and termination == "exhaustive":
            break
        if np.isinf(left) and np.isinf(right):
            break
        if count >= max_iter:
            raise SearchError(
                f"line search hit max_iter={max_iter} (sup_p - inf_p = {sup_p - inf_p})"
            )
        cand_left, cand_right = left - step, right + step
        if termination == "exhaustive":  # cover [-bound, bound] fully, nearest side first
            if left <= -bound:
                z = cand_right
                continue
            if right >= bound:
                z = cand_left
                continue
        if np.isinf(left):
            z = cand_right
        elif np.isinf(right):
            z = cand_left
        elif search_strategy == "pi1":  # nearest to the observed statistic
            z = cand_left if t_obs - cand_left <= cand_right - t_obs else cand_right
        else:  # pi3: the edge with the larger standard-normal density
            z = cand_left if abs(cand_left) <= abs(cand_right) else cand_right
    if not len(truncation):
        raise SearchError("the observed model was never found on the line (inconsistent event)")
    if length(truncation) == 0.0:
        raise ZeroMassError(
            f"the observed selection holds only at isolated points {truncation[:, 0].tolist()} of the "
            "searched line (a tie at a decision boundary at the observed data): Z has zero N(0,1) "
            "mass and the selective p-value is undefined for this feature"
        )
    p = selective_p_value(t_obs, truncation)
    _, inf_p, sup_p = p_value_bounds(t_obs, truncation, searched)
    return SearchResult(
        stat=float(t_obs),
        p_value=p,
        inf_p=inf_p,
        sup_p=sup_p,
        naive_p=naive_p_value(t_obs),
        truncation=as_intervals(truncation),
        searched=as_intervals(searched),
        search_count=count,
        mode="parametric",
    )


def over_conditioning(
    event: Callable[[float], tuple[object, float, float]], observed_model: object, t_obs: float
) -> SearchResult:
    """OC baseline: Z is the single interval around T_obs on which every intermediate decision holds."""
    model, lo, hi = event(float(t_obs))
    if model != observed_model:
        raise SearchError("the pipeline output at T_obs differs from the observed one")
    trunc = as_intervals([[lo, hi]])
    p = selective_p_value(t_obs, trunc)
    return SearchResult(
        stat=float(t_obs),
        p_value=p,
        inf_p=p,
        sup_p=p,
        naive_p=naive_p_value(t_obs),
        truncation=trunc,
        searched=trunc,
        search_count=1,
        mode="over_conditioning",
    )
