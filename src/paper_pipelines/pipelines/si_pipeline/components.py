"""The component library of the paper (Sec. 3) as ordinary functions usable as Kedro node functions.

Each component is registered with :func:`si_component`, which attaches a :class:`ComponentSpec` to the
function object. The Kedro node runs the function itself; the selective-test engine finds the spec on
``node.func`` and calls its ``event`` instead, so the DAG a user declares is the only declaration.

State passed between nodes: ``{"features": [...], "outliers": [...]}`` (sorted original indices).
Every outlier-detection (OD) and feature-selection (FS) component acts on the rows outside
``outliers`` and the columns in ``features`` of its input state.

Event signature of OD/FS components: ``event(X, a, b, z, state, *hyper) -> (state, lo, hi)`` where
``y(z) = a + b z`` is the imputed response along the test line and [lo, hi] contains z and is an
interval on which every internal decision of the component (and hence its output) is unchanged.
The run function is the event at b = 0, so run and event can never disagree.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
from pydantic import PositiveFloat, PositiveInt

from .imputation import (
    chebyshev_imputation_matrix,
    euclidean_imputation_matrix,
    manhattan_imputation_matrix,
    mean_imputation_matrix,
    regression_imputation_matrix,
)
from .intervals import QuadraticConstraints, linear_interval, quadratic_interval_many
from .lasso_polyhedron import lasso_event

State = dict[str, list[int]]
KINDS = (
    "initial",
    "imputation",
    "outlier_detection",
    "feature_selection",
    "set_operation",
    "structural",
)


@dataclass(frozen=True)
class ComponentSpec:
    """What the engine needs to know about a registered component."""

    name: str
    kind: str
    # OD/FS: (X, a, b, z, state, *hyper, memo=None) -> (state, lo, hi); memo is a per-test scratch
    # dict a component may use for warm starts (it must never change the answer)
    event: Callable | None = None
    matrix: Callable | None = None  # imputation: (X, missing_mask) -> G (n x n_obs)
    combine: Callable | None = None  # set operations: (list of states) -> state
    # OD/FS: (name, constraint) of each hyperparameter in call order, read from the function's own
    # signature (the arguments after X, y, state); a DAG's parameter block is built from these
    hyper: tuple[tuple[str, Any], ...] = ()


REGISTRY: dict[str, ComponentSpec] = {}


class DegenerateStateError(ValueError):
    """A component received a state it cannot act on (no features, or no more rows than features).

    Raised at the observed data this is a user error; at other points of the test line the engine
    treats it as "a different pipeline output" on the whole interval where the input state holds.
    """


def si_component(
    kind: str,
    *,
    event: Callable | None = None,
    matrix: Callable | None = None,
    combine: Callable | None = None,
) -> Callable:
    """Register a function as a pipeline component (attaches ``func.si_spec``)."""
    if kind not in KINDS:
        raise ValueError(f"component kind must be one of {KINDS}, got {kind!r}")

    def register(func: Callable) -> Callable:
        hyper = (
            _hyper_constraints(func) if kind in ("outlier_detection", "feature_selection") else ()
        )
        spec = ComponentSpec(
            func.__name__, kind, event=event, matrix=matrix, combine=combine, hyper=hyper
        )
        func.si_spec = spec  # type: ignore[attr-defined]
        REGISTRY[func.__name__] = spec
        return func

    return register


def _hyper_constraints(func: Callable) -> tuple[tuple[str, Any], ...]:
    """(name, annotation) of the arguments after (X, y, state); an unannotated one accepts anything."""
    hints = typing.get_type_hints(func, include_extras=True)
    names = list(inspect.signature(func).parameters)[3:]
    return tuple((name, hints.get(name, Any)) for name in names)


def component_spec(func: object) -> ComponentSpec | None:
    """The registered spec of a node function, or None if it is not a component."""
    return getattr(func, "si_spec", None)


# --------------------------------------------------------------------------------------------
# helpers


def make_state(features, outliers) -> State:
    """A JSON-able state with sorted plain-int lists."""
    return {
        "features": sorted(int(i) for i in features),
        "outliers": sorted(int(i) for i in outliers),
    }


def _rows_cols(X: np.ndarray, state: State, name: str) -> tuple[np.ndarray, np.ndarray]:
    """Rows outside O and columns in M of the current state, with a size check."""
    keep = np.ones(X.shape[0], dtype=bool)
    keep[state["outliers"]] = False
    rows = np.flatnonzero(keep)
    cols = np.asarray(state["features"], dtype=int)
    if len(cols) == 0:
        raise DegenerateStateError(f"component {name}: the input state has no features left")
    if len(rows) <= len(cols):
        raise DegenerateStateError(
            f"component {name}: {len(rows)} rows remain after outlier removal but {len(cols)} "
            "features are kept; need n > p (lower the outlier-detection lambda or use fewer features)"
        )
    return rows, cols


def _restrict(X: np.ndarray, a: np.ndarray, b: np.ndarray, state: State, name: str):
    """(rows, cols, X~, a~, b~): the data the component acts on (see :func:`_rows_cols`)."""
    rows, cols = _rows_cols(X, state, name)
    return rows, cols, X[np.ix_(rows, cols)], a[rows], b[rows]


def _same(held: np.ndarray, given: np.ndarray) -> bool:
    return held is given or (held.shape == given.shape and np.array_equal(held, given))


def _per_line(memo: dict | None, X: np.ndarray, a: np.ndarray, b: np.ndarray, key, build: Callable):
    """``build()`` cached in ``memo`` under ``key`` for as long as the line (X, a, b) stays the same.

    Along one test line a component meets the same input state (rows, columns) again and again;
    whatever depends only on that state and the line (QR, projections, Gram) is computed once. A
    different line (a new test, or the CV's fold data) clears the cache and the line's lasso answers
    (``memo["answers"]``, see lasso_polyhedron.lasso_event), keeping only the latest as a hint.
    """
    if memo is None:
        return build()
    line = memo.get("line")
    if line is None or not all(_same(h, g) for h, g in zip(line, (X, a, b), strict=True)):
        memo["line"], memo["cache"], memo["answers"] = (X, a, b), {}, []
    cache = memo["cache"]
    if key not in cache:
        cache[key] = build()
    return cache[key]


def _state_key(rows: np.ndarray, cols: np.ndarray) -> tuple[bytes, bytes]:
    return rows.tobytes(), cols.tobytes()


def _residualiser(xs: np.ndarray, name: str = "component") -> tuple[np.ndarray, np.ndarray]:
    """Orthonormal basis Q of col(X~) and leverages h_i = H_ii.

    A rank-deficient X~ would give Q an arbitrary extra direction (wrong H, silently), so it raises.
    """
    q, r = np.linalg.qr(xs)
    diag = np.abs(np.diag(r))
    if diag.size and diag.min() <= max(xs.shape) * np.finfo(float).eps * max(diag.max(), 1e-300):
        raise DegenerateStateError(
            f"component {name}: the design of the remaining rows and kept features is rank-deficient "
            "(collinear or duplicated columns); remove the duplicated columns from X"
        )
    return q, np.sum(q * q, axis=1)


def _line(value: float | np.ndarray, like: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(value, dtype=float)
    return y, np.zeros_like(y)


# --------------------------------------------------------------------------------------------
# structural nodes


@si_component("initial")
def initial_state(X: np.ndarray) -> State:
    """Start node: all features, no outliers."""
    return make_state(range(np.asarray(X).shape[1]), [])


@si_component("structural")
def remove_outliers(state: State) -> State:
    """Pass-through kept so the DAG reads like the paper's figures (components drop O themselves)."""
    return make_state(state["features"], state["outliers"])


@si_component("structural")
def extract_features(state: State) -> State:
    """Pass-through kept so the DAG reads like the paper's figures (components keep only M)."""
    return make_state(state["features"], state["outliers"])


def _union_states(states: list[State]) -> State:
    return make_state(
        set().union(*(s["features"] for s in states)), set().union(*(s["outliers"] for s in states))
    )


def _intersect_states(states: list[State]) -> State:
    feats = set(states[0]["features"]).intersection(*(s["features"] for s in states[1:]))
    outs = set(states[0]["outliers"]).intersection(*(s["outliers"] for s in states[1:]))
    return make_state(feats, outs)


@si_component("set_operation", combine=_union_states)
def union(*states: State) -> State:
    """Union of the feature sets (and of the outlier sets) of several branches."""
    return _union_states(list(states))


@si_component("set_operation", combine=_intersect_states)
def intersection(*states: State) -> State:
    """Intersection of the feature sets (and of the outlier sets) of several branches."""
    return _intersect_states(list(states))


# --------------------------------------------------------------------------------------------
# missing-value imputation: linear maps y_full = G y_obs (no selection event)


def _impute(X: np.ndarray, y_raw: np.ndarray, matrix: Callable, name: str) -> np.ndarray:
    y_raw = np.asarray(y_raw, dtype=float).ravel()
    missing = np.isnan(y_raw)
    if missing.all():
        raise ValueError(f"component {name}: every response value is missing")
    return matrix(np.asarray(X, dtype=float), missing) @ y_raw[~missing]


@si_component("imputation", matrix=mean_imputation_matrix)
def mean_value_imputation(X: np.ndarray, y_raw: np.ndarray) -> np.ndarray:
    """Fill missing y with the observed mean."""
    return _impute(X, y_raw, mean_imputation_matrix, "mean_value_imputation")


@si_component("imputation", matrix=euclidean_imputation_matrix)
def euclidean_imputation(X: np.ndarray, y_raw: np.ndarray) -> np.ndarray:
    """Fill missing y with the y of the Euclidean-nearest observed row (1-NN hot deck)."""
    return _impute(X, y_raw, euclidean_imputation_matrix, "euclidean_imputation")


@si_component("imputation", matrix=manhattan_imputation_matrix)
def manhattan_imputation(X: np.ndarray, y_raw: np.ndarray) -> np.ndarray:
    """Fill missing y with the y of the Manhattan-nearest observed row."""
    return _impute(X, y_raw, manhattan_imputation_matrix, "manhattan_imputation")


@si_component("imputation", matrix=chebyshev_imputation_matrix)
def chebyshev_imputation(X: np.ndarray, y_raw: np.ndarray) -> np.ndarray:
    """Fill missing y with the y of the Chebyshev-nearest observed row."""
    return _impute(X, y_raw, chebyshev_imputation_matrix, "chebyshev_imputation")


@si_component("imputation", matrix=regression_imputation_matrix)
def definite_regression_imputation(X: np.ndarray, y_raw: np.ndarray) -> np.ndarray:
    """Fill missing y with the OLS prediction fitted on the observed rows."""
    return _impute(X, y_raw, regression_imputation_matrix, "definite_regression_imputation")


# --------------------------------------------------------------------------------------------
# outlier detection


def _influence_event(X, a, b, z, state, lam, name, weights) -> tuple[State, float, float]:
    """Shared event of Cook's distance and DFFITS: row i is flagged iff c_i r_i^2 - d_i RSS >= 0.

    r = P y~ and RSS = ||P y~||^2 are affine/quadratic in z, so each row gives one quadratic in z;
    only P a and P b are formed (O(n p^2)), never the n x n matrices P e_i e_i^T P.
    """
    rows, _, xs, ya, yb = _restrict(X, a, b, state, name)
    n_t, p_t = xs.shape
    q, h = _residualiser(xs, name)
    ra, rb = ya - q @ (q.T @ ya), yb - q @ (q.T @ yb)
    c, d = weights(h, n_t, p_t, lam)
    c2 = c * rb**2 - d * (rb @ rb)
    c1 = 2.0 * (c * ra * rb - d * (ra @ rb))
    c0 = c * ra**2 - d * (ra @ ra)
    score = c2 * z * z + c1 * z + c0
    flagged = score >= 0.0
    sign = np.where(flagged, -1.0, 1.0)  # write every decision as "<= 0"
    lo, hi = quadratic_interval_many(sign * c2, sign * c1, sign * c0, z)
    return make_state(state["features"], set(state["outliers"]) | set(rows[flagged])), lo, hi


def _cook_weights(h, n_t, p_t, lam):
    """Cook's D_i >= lam / n  <=>  (n - p) h_i r_i^2 - lam p (1 - h_i)^2 / n * RSS >= 0."""
    return (n_t - p_t) * h, lam * p_t * (1.0 - h) ** 2 / n_t


def _dffits_weights(h, n_t, p_t, lam):
    """DFFITS_i^2 >= lam p / (n - p), multiplied out by the positive leave-one-out RSS."""
    kappa = lam * p_t / (n_t - p_t)
    return h * (n_t - p_t - 1) / (1.0 - h) ** 2 + kappa / (1.0 - h), np.full_like(h, kappa)


def cook_distance_event(X, a, b, z, state, lam, memo=None):
    """Event of Cook's distance outlier detection (paper Sec. 3.2, Cook 1977)."""
    return _influence_event(X, a, b, z, state, lam, "cook_distance", _cook_weights)


def dffits_event(X, a, b, z, state, lam, memo=None):
    """Event of DFFITS outlier detection (paper Sec. 3.2, Belsley et al. 1980)."""
    return _influence_event(X, a, b, z, state, lam, "dffits", _dffits_weights)


def soft_ipod_event(X, a, b, z, state, lam, memo=None):
    """Event of soft-IPOD (She & Owen 2011): a lasso on the annihilated design P with response P y~."""
    rows, cols = _rows_cols(X, state, "soft_ipod")

    def design():
        xs, ya, yb = X[np.ix_(rows, cols)], a[rows], b[rows]
        q, _ = _residualiser(xs, "soft_ipod")
        proj = np.eye(len(rows)) - q @ q.T
        return proj, ya - q @ (q.T @ ya), yb - q @ (q.T @ yb), {}

    key = _state_key(rows, cols)
    proj, wa, wb, polyhedra = _per_line(memo, X, a, b, key, design)
    # design P is a symmetric projector: D^T D = P and D^T (P y) = P y, no n x n products needed;
    # its columns are the rows, so a lasso answer from another row set maps by row label
    active, _, lo, hi = lasso_event(
        proj, wa, wb, z, lam, memo, proj, wa, wb, labels=rows, key=key, cache=polyhedra
    )
    return make_state(state["features"], set(state["outliers"]) | set(rows[active])), lo, hi


@si_component("outlier_detection", event=cook_distance_event)
def cook_distance(X: np.ndarray, y: np.ndarray, state: State, lam: PositiveFloat) -> State:
    """Flag rows with Cook's distance >= lam / n."""
    return cook_distance_event(X, *_line(y, y), 0.0, state, lam)[0]


@si_component("outlier_detection", event=dffits_event)
def dffits(X: np.ndarray, y: np.ndarray, state: State, lam: PositiveFloat) -> State:
    """Flag rows with DFFITS^2 >= lam p / (n - p)."""
    return dffits_event(X, *_line(y, y), 0.0, state, lam)[0]


@si_component("outlier_detection", event=soft_ipod_event)
def soft_ipod(X: np.ndarray, y: np.ndarray, state: State, lam: PositiveFloat) -> State:
    """Flag rows whose mean-shift parameter is non-zero in the L1-penalised mean-shift model."""
    return soft_ipod_event(X, *_line(y, y), 0.0, state, lam)[0]


# --------------------------------------------------------------------------------------------
# feature selection


def marginal_screening_event(X, a, b, z, state, k, memo=None):
    """Top-k |x_j^T y~| with signs: linear constraints s_i x_i^T y >= +-x_j^T y (selected i, other j)."""
    rows, cols = _rows_cols(X, state, "marginal_screening")
    if k >= len(cols):
        return make_state(cols, state["outliers"]), -np.inf, np.inf

    def scores():
        xs = X[np.ix_(rows, cols)]
        return xs.T @ a[rows], xs.T @ b[rows]

    sa, sb = _per_line(memo, X, a, b, _state_key(rows, cols), scores)
    score = sa + sb * z
    order = np.argsort(-np.abs(score), kind="stable")
    sel, other = order[:k], order[k:]
    sgn = np.sign(score[sel])
    sgn[sgn == 0] = 1.0
    top_a, top_b = (sgn * sa[sel])[:, None], (sgn * sb[sel])[:, None]
    intercept = np.concatenate(
        [(-(top_a - sa[other])).ravel(), (-(top_a + sa[other])).ravel(), -top_a.ravel()]
    )
    slope = np.concatenate(
        [(-(top_b - sb[other])).ravel(), (-(top_b + sb[other])).ravel(), -top_b.ravel()]
    )
    lo, hi = linear_interval(intercept, slope, z)
    return make_state(cols[sel], state["outliers"]), lo, hi


def _stepwise_candidates(xs, ra, rb, basis, remaining):
    """One forward step's candidates: q_j (x_j orthogonalised on the basis, normalised), q_j^T r_A."""
    cand = xs[:, remaining] - basis @ (basis.T @ xs[:, remaining])
    norms = np.linalg.norm(cand, axis=0)
    cand = cand / np.where(norms > 1e-12, norms, np.inf)
    return cand, cand.T @ ra, cand.T @ rb


def _stepwise_entry(al, be, best):
    """Candidate ``best`` enters: (q_j^T r)^2 - (q_best^T r)^2 <= 0 for every other j, in z."""
    mask = np.arange(len(al)) != best
    c2 = be[mask] ** 2 - be[best] ** 2
    c1 = 2.0 * (al[mask] * be[mask] - al[best] * be[best])
    c0 = al[mask] ** 2 - al[best] ** 2
    return QuadraticConstraints(c2, c1, c0)


def stepwise_event(X, a, b, z, state, k, memo=None):
    """Forward stepwise with k steps: the entry order is fixed; one quadratic per step and candidate.

    Adding j to active set A reduces the RSS by (q_j^T r_A)^2 with q_j the normalised part of x_j
    orthogonal to col(X_A) and r_A the current residual, so "j* enters" is
    (q_j^T r_A(z))^2 - (q_j*^T r_A(z))^2 <= 0 for every other candidate j.
    Along a line the steps depend only on the entries so far, so each step's candidates and each
    entry's quadratics are kept per (input state, entries so far) in ``memo``.
    """
    rows, cols = _rows_cols(X, state, "stepwise_feature_selection")
    if k >= len(cols):
        return make_state(cols, state["outliers"]), -np.inf, np.inf
    key = _state_key(rows, cols)
    tree = _per_line(memo, X, a, b, ("stepwise", key), dict)  # entries so far -> step data
    xs = None
    chosen: list[int] = []
    lo, hi = -np.inf, np.inf
    for _ in range(k):
        step = tree.get(tuple(chosen))
        if step is None:
            if xs is None:
                xs, ya, yb = X[np.ix_(rows, cols)], a[rows], b[rows]
            if chosen:  # the residual and basis after the entries so far, from the parent step
                parent = tree[tuple(chosen[:-1])]
                qb = parent["cand"][:, parent["remaining"].index(chosen[-1])]
                ra = parent["ra"] - qb * (qb @ parent["ra"])
                rb = parent["rb"] - qb * (qb @ parent["rb"])
                basis = np.column_stack([parent["basis"], qb])
            else:
                ra, rb, basis = ya.copy(), yb.copy(), np.zeros((xs.shape[0], 0))
            remaining = [i for i in range(len(cols)) if i not in chosen]
            cand, al, be = _stepwise_candidates(xs, ra, rb, basis, remaining)
            step = {"ra": ra, "rb": rb, "basis": basis, "remaining": remaining, "cand": cand}
            step.update(al=al, be=be, entry={})
            tree[tuple(chosen)] = step
        al, be = step["al"], step["be"]
        best = int(np.argmax((al + be * z) ** 2))
        if best not in step["entry"]:
            step["entry"][best] = _stepwise_entry(al, be, best)
        l_, u_ = step["entry"][best].interval(z)
        lo, hi = max(lo, l_), min(hi, u_)
        chosen.append(step["remaining"][best])
    if memo is not None:  # the entry order is part of the decision; exposed for tests/diagnostics
        memo["order"] = [int(cols[i]) for i in chosen]
    return make_state(cols[chosen], state["outliers"]), lo, hi


def lasso_fs_event(X, a, b, z, state, alpha, memo=None):
    """Lasso feature selection: Lee et al. polyhedron for the active set and signs."""
    rows, cols = _rows_cols(X, state, "lasso")

    def design():
        xs, ya, yb = X[np.ix_(rows, cols)], a[rows], b[rows]
        return xs, ya, yb, xs.T @ xs, xs.T @ ya, xs.T @ yb, {}

    key = _state_key(rows, cols)
    xs, ya, yb, gram, dta, dtb, polyhedra = _per_line(memo, X, a, b, key, design)
    active, _, lo, hi = lasso_event(
        xs, ya, yb, z, alpha, memo, gram, dta, dtb, labels=cols, key=key, cache=polyhedra
    )
    return make_state(cols[active], state["outliers"]), lo, hi


@si_component("feature_selection", event=marginal_screening_event)
def marginal_screening(X: np.ndarray, y: np.ndarray, state: State, k: PositiveInt) -> State:
    """Keep the k features with the largest |x_j^T y|."""
    return marginal_screening_event(X, *_line(y, y), 0.0, state, int(k))[0]


@si_component("feature_selection", event=stepwise_event)
def stepwise_feature_selection(X: np.ndarray, y: np.ndarray, state: State, k: PositiveInt) -> State:
    """Forward stepwise selection of k features by residual sum of squares."""
    return stepwise_event(X, *_line(y, y), 0.0, state, int(k))[0]


@si_component("feature_selection", event=lasso_fs_event)
def lasso(X: np.ndarray, y: np.ndarray, state: State, alpha: PositiveFloat) -> State:
    """Keep the features with a non-zero lasso coefficient."""
    return lasso_fs_event(X, *_line(y, y), 0.0, state, float(alpha))[0]
