"""Step 3 of SRCA: search over the axis set I (|I| = k + 1) of the rotated data.

- ``exhaustive``: every bit pattern with k + 1 ones, as `SRCA.m` does ("binary search"; used for all of
  the paper's tables). At most C(D, k + 1) sphere fits; ours visits sets in decreasing captured variance
  and stops by an exact lower bound (the loss off I), so it returns the brute-force minimum with far
  fewer fits on curved or low-rank data.
- ``greedy``: forward selection (ours, for large D): grow I one axis at a time, each time adding the axis
  whose sphere fit has the lowest loss; the top-(k + 1) principal axes are always evaluated as well.
  At most about (k + 1) D fits (the same bound prunes). The official 2023 "branch-and-bound" in `hl_SRCA.m` only ever expands
  include-branches and so never reaches a set of size k + 1 < D; it is not ported.
- ``top``: the first k + 1 principal axes only (the spherelets choice, with the geometric loss).
- ``l1``: the relaxation of `SRCA.m` (``enable_norm = true``): v in [0, 1]^D with ||v||_1 <= k + 1,
  optimised jointly with (c, r); the k + 1 largest |v_j| are kept and (c, r) re-fitted.
- ``auto``: exhaustive when C(D, k + 1) <= max_subsets, greedy otherwise.
"""

from __future__ import annotations

import heapq
import logging
import math
from collections.abc import Callable, Iterator

import numpy as np
from scipy.optimize import minimize

from paper_pipelines.pipelines.srca.geometric_loss import SphereFit, fit_sphere_on_axes

logger = logging.getLogger(__name__)

SEARCHES = ("auto", "exhaustive", "greedy", "top", "l1")

FitFn = Callable[[tuple[int, ...]], SphereFit]


def n_subsets(D: int, size: int) -> int:
    """Number of candidate axis sets C(D, k + 1) of the exhaustive search."""
    return math.comb(D, size)


def resolve_search(search: str, D: int, size: int, max_subsets: int) -> str:
    """'auto' becomes exhaustive or greedy; an exhaustive search that is too large fails clearly."""
    if search not in SEARCHES:
        raise ValueError(f"subset_search must be one of {SEARCHES}, got {search!r}")
    count = n_subsets(D, size)
    if search == "auto":
        return "exhaustive" if count <= max_subsets else "greedy"
    if search == "exhaustive" and count > max_subsets:
        raise ValueError(
            f"exhaustive SRCA search needs C({D}, {size}) = {count} sphere fits, above "
            f"max_subsets = {max_subsets}; use subset_search 'greedy' or 'auto', or raise max_subsets."
        )
    return search


def subsets_by_variance(col_sq: np.ndarray, size: int) -> Iterator[tuple[int, ...]]:
    """All `size`-subsets of the axes, lazily, in order of decreasing captured sum of squares.

    Best-first enumeration with a heap (each subset is pushed once), so the caller can stop early.
    """
    D = len(col_sq)
    order = np.argsort(-col_sq, kind="stable")  # position p -> axis
    weights = col_sq[order]
    start = tuple(range(size))
    heap = [(-float(weights[list(start)].sum()), start)]
    seen = {start}
    while heap:
        _, pos = heapq.heappop(heap)
        yield tuple(sorted(int(order[p]) for p in pos))
        for j in range(size):
            nxt = pos[j] + 1
            if nxt >= D or (j + 1 < size and pos[j + 1] == nxt):
                continue
            cand = (*pos[:j], nxt, *pos[j + 1 :])
            if cand not in seen:
                seen.add(cand)
                heapq.heappush(heap, (-float(weights[list(cand)].sum()), cand))


def exhaustive_search(
    fit: FitFn,
    col_sq: np.ndarray,
    size: int,
    penalty: float = 0.0,
    prune: bool = True,
    log_every: int = 500,
) -> tuple[SphereFit, int]:
    """Exact minimum of L over all C(D, size) axis sets ("binary search" of `SRCA.m`).

    Sets are visited in order of decreasing captured variance and the search stops once the loss outside
    I alone (a lower bound of L, since the in-I part is >= 0) reaches the best loss found: no skipped set
    can win, so the result equals brute force (``prune=False`` runs the brute force itself). Returns the
    best fit and the number of sphere fits run.
    """
    total_sq = float(col_sq.sum())
    best: SphereFit | None = None
    fits = 0
    for axes in subsets_by_variance(col_sq, size):
        bound = total_sq - float(col_sq[list(axes)].sum()) + penalty
        if prune and best is not None and bound >= best.loss:
            break
        cand = fit(axes)
        fits += 1
        if best is None or cand.loss < best.loss:
            best = cand
        if fits % log_every == 0:
            logger.info("exhaustive search: %d sphere fits, best loss %.6g", fits, best.loss)
    assert best is not None
    return best, fits


def greedy_search(
    fit: FitFn, col_sq: np.ndarray, size: int, penalty: float = 0.0, prune: bool = True
) -> tuple[SphereFit, int]:
    """Forward selection of axes by the geometric loss, plus the top-`size` principal axes as a candidate.

    The same lower bound as the exhaustive search skips candidates that cannot beat the step's best.
    """
    total_sq = float(col_sq.sum())
    chosen: list[int] = []
    fits = 0
    best_step: SphereFit | None = None
    for _ in range(size):
        best_step = None
        rest = [j for j in np.argsort(-col_sq, kind="stable").tolist() if j not in chosen]
        for j in rest:
            axes = tuple(sorted([*chosen, j]))
            bound = total_sq - float(col_sq[list(axes)].sum()) + penalty
            if prune and best_step is not None and bound >= best_step.loss:
                break  # candidates come in decreasing variance: none after this can win either
            cand = fit(axes)
            fits += 1
            if best_step is None or cand.loss < best_step.loss:
                best_step = cand
        assert best_step is not None
        chosen = list(best_step.axes)
    top = tuple(sorted(np.argsort(-col_sq, kind="stable")[:size].tolist()))
    assert best_step is not None
    if tuple(best_step.axes) != top:
        cand = fit(top)
        fits += 1
        if cand.loss < best_step.loss:
            best_step = cand
    return best_step, fits


def l1_relaxed_indicator(
    Y: np.ndarray, size: int, lambda_penalty: float = 0.0, max_iter: int = 2000
) -> np.ndarray:
    """`SRCA.m` with enable_norm: minimise L(v, c, r) over v in [0,1]^D, ||v||_1 <= size, c, r >= 0.

    Official code uses MATLAB fmincon (interior point); here SLSQP with the exact gradient. Returns the
    relaxed v (the caller keeps its `size` largest entries).
    """
    Y = np.asarray(Y, dtype=float)
    n, D = Y.shape

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        v, c, r = x[:D], x[D:-1], x[-1]
        diff = Y - c
        sq = diff**2
        p = sq @ v
        sp = np.sqrt(np.clip(p, 0.0, None))
        value = sq.sum() + n * r * r - 2.0 * r * sp.sum() + lambda_penalty * np.abs(v).sum()
        safe = np.where(sp > 0, sp, 1.0)
        gv = -r * (sq / safe[:, None]).sum(axis=0) + lambda_penalty * np.sign(v)
        gc = -2.0 * diff.sum(axis=0) + 2.0 * r * ((diff * v) / safe[:, None]).sum(axis=0)
        gr = 2.0 * n * r - 2.0 * sp.sum()
        return float(value), np.concatenate([gv, gc, [gr]])

    scale = float(np.sqrt((Y**2).sum(axis=1).mean())) or 1.0
    x0 = np.concatenate([np.full(D, size / D), np.zeros(D), [scale]])
    bounds = [(0.0, 1.0)] * D + [(None, None)] * D + [(0.0, None)]
    cons = [
        {
            "type": "ineq",
            "fun": lambda x: size - x[:D].sum(),
            "jac": lambda x: np.concatenate([-np.ones(D), np.zeros(D + 1)]),
        }
    ]
    res = minimize(
        fun,
        x0,
        jac=True,
        method="SLSQP",
        bounds=bounds,
        constraints=cons,
        options={"maxiter": max_iter, "ftol": 1e-12},
    )
    return res.x[:D]


def search_axes(
    Y: np.ndarray,
    size: int,
    search: str = "auto",
    max_subsets: int = 30000,
    tol: float = 1e-10,
    max_iter: int = 10_000,
    lambda_penalty: float = 0.0,
    prune: bool = True,
    fit: FitFn | None = None,
) -> tuple[SphereFit, str, int]:
    """Step 3: the axis set I (|I| = size) of minimal geometric loss; returns (fit, search used, #fits)."""
    Y = np.asarray(Y, dtype=float)
    D = Y.shape[1]
    search = resolve_search(search, D, size, max_subsets)
    total_sq = float((Y**2).sum())
    col_sq = (Y**2).sum(axis=0)
    if fit is None:

        def fit(axes: tuple[int, ...]) -> SphereFit:
            off = total_sq - float(col_sq[list(axes)].sum())
            return fit_sphere_on_axes(
                Y, axes, tol=tol, max_iter=max_iter, lambda_penalty=lambda_penalty, offI_sq=off
            )

    penalty = lambda_penalty * size
    if search == "exhaustive":
        best, count = exhaustive_search(fit, col_sq, size, penalty, prune=prune)
    elif search == "greedy":
        best, count = greedy_search(fit, col_sq, size, penalty, prune=prune)
    elif search == "top":
        best, count = fit(tuple(range(size))), 1
    else:  # l1
        v = l1_relaxed_indicator(Y, size, lambda_penalty=lambda_penalty)
        axes = tuple(sorted(int(j) for j in np.argsort(-np.abs(v), kind="stable")[:size]))
        best, count = fit(axes), 1
    return best, search, count
