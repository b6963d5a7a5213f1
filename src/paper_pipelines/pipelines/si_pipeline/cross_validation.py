"""Pipeline selection by K-fold cross-validation inside the selective test (paper Sec. 5, "all_cv").

The user declares several candidate pipelines (DAGs and/or hyperparameter variants). On the observed
data the candidate with the smallest K-fold CV error is chosen and its (M, O) is tested. For validity
the test also conditions on that choice: along the line y_obs(z) = a + b z we keep only the z at which

* CV picks a candidate whose imputation method and full-data output (M, O) equal the observed ones
  (``condition_on="selection"``, as in si4pipeline 1.0.1), or the very same candidate
  (``condition_on="candidate"``, a finer, still valid event);

CV protocol (as in si4pipeline's ``tune``): y is imputed once on all rows with the candidate's own imputer;
rows are permuted with ``numpy.random.default_rng(seed)`` and split into K folds with
``numpy.array_split`` (the same generator first draws the evaluated candidate subset, so the folds equal
the official ones for the same seed and number of candidates); the CV error of a candidate is the mean
over folds of the validation MSE of the OLS refit on the training fold minus its detected outliers,
columns = its selected features (prediction 0 if nothing is selected).

Why the event is exact: on an interval where every candidate's selection on every training fold is fixed,
each validation residual is affine in z, so each candidate's CV error is a quadratic q_k(z); "k* wins" is
{q_k*(z) - q_k(z) <= 0 for all k}, a set of quadratic inequalities solved exactly by
:func:`intervals.quadratic_interval_many`. The event at z is the intersection of all fold intervals,
that argmin interval and the winner's own full-data interval.
"""

from __future__ import annotations

import copy
import itertools
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .components import State
from .engine import DagSelectiveTest, FeatureTest, estimate_sigma, feature_line
from .intervals import quadratic_interval_many
from .line_search import over_conditioning, parametric_search

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Candidate:
    """One candidate pipeline: a declared DAG with one setting of its hyperparameters."""

    name: str
    dag: str
    engine: DagSelectiveTest
    params: dict

    @property
    def imputation(self) -> str:
        """Name of the DAG's imputation component (identifies its imputation matrix G)."""
        return next(s.spec.name for s in self.engine.steps if s.spec.kind == "imputation")


def _leaves(tree: dict, prefix: tuple = ()) -> list[tuple[tuple, Any]]:
    out = []
    for key, value in tree.items():
        if isinstance(value, dict):
            out.extend(_leaves(value, (*prefix, key)))
        else:
            out.append(((*prefix, key), value))
    return out


def expand_candidates(
    engines: dict[str, DagSelectiveTest],
    grids: dict[str, dict],
    base: dict[str, dict],
    check: bool = True,
) -> list[Candidate]:
    """Candidates = for each DAG in ``grids``, the Cartesian product of its list-valued hyperparameters.

    ``grids[dag]`` mirrors the DAG's parameter block (``{"lasso": {"alpha": [0.08, 0.12]}}``); values
    not given keep the DAG's fixed setting in ``base[dag]``; with ``check`` each candidate is
    validated against its DAG's parameter model. Leaves vary in the DAG's node order, the
    last node fastest (the order si4pipeline enumerates its product; it only matters for exact ties).
    """
    out: list[Candidate] = []
    for dag, grid in grids.items():
        if dag not in engines:
            raise KeyError(f"CV candidate DAG {dag!r} is not declared; declared: {sorted(engines)}")
        engine = engines[dag]
        prefix = "params:" + (engine.namespace + "." if engine.namespace else "")
        order = [h[len(prefix) :] for s in engine.steps for h in s.hyper]
        leaves = _leaves(grid or {})
        leaves.sort(
            key=lambda kv: order.index(".".join(kv[0])) if ".".join(kv[0]) in order else 1e9
        )
        values = [v if isinstance(v, list) else [v] for _, v in leaves]
        for combo in itertools.product(*values):
            params = copy.deepcopy(base.get(dag, {}))
            for (path, _), value in zip(leaves, combo, strict=True):
                node = params
                for key in path[:-1]:
                    node = node.setdefault(key, {})
                node[path[-1]] = value
            label = ",".join(f"{'.'.join(p)}={v}" for (p, _), v in zip(leaves, combo, strict=True))
            if check:  # every candidate is a valid block of its DAG
                engine.check_params(params, f"candidate {dag} of the CV grid")
            out.append(Candidate(f"{dag}[{label}]" if label else dag, dag, engine, params))
    if not out:
        raise ValueError("no CV candidates declared")
    return out


def cv_split(
    n: int, folds: int, seed: int, n_candidates: int, max_candidates: int | None = None
) -> tuple[list[int], list[np.ndarray]]:
    """(evaluated candidate indices, validation folds): si4pipeline's ``tune`` protocol (see module doc)."""
    if not 2 <= folds <= n:
        raise ValueError(f"need 2 <= folds <= n, got folds={folds}, n={n}")
    rng = np.random.default_rng(seed)
    m = n_candidates if max_candidates is None else min(max_candidates, n_candidates)
    chosen = sorted(int(i) for i in rng.choice(n_candidates, m, replace=False))
    return chosen, [np.sort(f) for f in np.array_split(rng.permutation(n), folds)]


def fold_quadratic(
    X_tr: np.ndarray,
    a_tr: np.ndarray,
    b_tr: np.ndarray,
    X_val: np.ndarray,
    a_val: np.ndarray,
    b_val: np.ndarray,
    state: State,
) -> np.ndarray:
    """Validation MSE of the OLS refit as (c0, c1, c2): mean((u + v z)^2) = c0 + c1 z + c2 z^2.

    The refit uses the training rows outside ``state["outliers"]`` (indices into the training fold)
    and the columns ``state["features"]``; with no feature the prediction is 0.
    """
    u, v = a_val, b_val
    if state["features"]:
        keep = np.ones(X_tr.shape[0], dtype=bool)
        keep[state["outliers"]] = False
        cols = state["features"]
        coef, *_ = np.linalg.lstsq(
            X_tr[np.ix_(keep, cols)], np.column_stack([a_tr[keep], b_tr[keep]]), rcond=None
        )
        fit = X_val[:, cols] @ coef
        u, v = a_val - fit[:, 0], b_val - fit[:, 1]
    m = len(u)
    return np.array([u @ u / m, 2.0 * (u @ v) / m, v @ v / m])


@dataclass
class CvChoice:
    """The CV choice at one point of the line (or on the observed data at z = 0, b = 0)."""

    winner: int  # index into the candidate list
    errors: dict[
        int, float
    ]  # evaluated candidate -> CV error at z (inf if it cannot run on a fold)
    model: dict  # the winner's full-data output and imputation (what Z is conditioned on)
    lo: float
    hi: float
    argmin_lo: float = -np.inf  # the interval on which the argmin alone is constant (diagnostics)
    argmin_hi: float = np.inf


@dataclass
class _Cache:
    """Per-line caches: fold intervals with their quadratics, full-data events, warm starts."""

    folds: dict = field(default_factory=dict)  # (k, f) -> list of (lo, hi, quadratic | None)
    quads: dict = field(default_factory=dict)  # (imputation, f, M, O) -> quadratic
    full: dict = field(default_factory=dict)  # k -> list of (lo, hi, state)
    memo: dict = field(default_factory=dict)  # (k, f) -> engine scratch dict


class CvSelectiveTest:
    """Selective test of the pipeline chosen by K-fold CV among ``candidates``, conditioning on the choice."""

    def __init__(
        self,
        candidates: list[Candidate],
        *,
        folds: int = 5,
        seed: int = 0,
        max_candidates: int | None = None,
        condition_on: str = "selection",
    ) -> None:
        if condition_on not in ("selection", "candidate"):
            raise ValueError(
                f"condition_on must be 'selection' or 'candidate', got {condition_on!r}"
            )
        if not candidates:
            raise ValueError("CvSelectiveTest needs at least one candidate")
        self.candidates = list(candidates)
        self.folds = int(folds)
        self.seed = int(seed)
        self.max_candidates = max_candidates
        self.condition_on = condition_on
        self._bound = [c.engine.bind(c.params) for c in self.candidates]

    # ------------------------------------------------------------------------------ the event
    def _setup(self, X: np.ndarray, y_raw: np.ndarray) -> dict:
        X, y_raw = DagSelectiveTest.check_data(X, y_raw)
        missing = np.isnan(y_raw)
        evaluated, masks = cv_split(
            len(y_raw), self.folds, self.seed, len(self.candidates), self.max_candidates
        )
        mats: dict[str, np.ndarray] = {}
        for k in evaluated:
            cand = self.candidates[k]
            if cand.imputation not in mats:
                mats[cand.imputation] = cand.engine.imputation_matrix(X, y_raw)
        train = []
        for mask in masks:
            keep = np.ones(len(y_raw), dtype=bool)
            keep[mask] = False
            train.append(np.flatnonzero(keep))
        return {
            "X": X,
            "y_raw": y_raw,
            "any_missing": bool(missing.any()),
            "evaluated": evaluated,
            "masks": masks,
            "train": train,
            "G": mats,
        }

    def _choice(
        self, setup: dict, a: np.ndarray, b: np.ndarray, z: float, cache: _Cache
    ) -> CvChoice:
        """CV choice and the interval around z on which it and the winner's (M, O) are fixed."""
        X = setup["X"]
        lines = {imp: (g @ a, g @ b) for imp, g in setup["G"].items()}
        lo, hi = -np.inf, np.inf
        quads: dict[int, np.ndarray | None] = {}
        for k in setup["evaluated"]:
            cand = self.candidates[k]
            A, B = lines[cand.imputation]
            total, finite = np.zeros(3), True
            for f, (tr, val) in enumerate(zip(setup["train"], setup["masks"], strict=True)):
                hit = next(
                    (h for h in cache.folds.get((k, f), ()) if h[0] <= z <= h[1]),
                    None,
                )
                if hit is None:
                    state, l_f, u_f = cand.engine.event(
                        X[tr],
                        A[tr],
                        B[tr],
                        z,
                        self._bound[k],
                        cache.memo.setdefault((k, f), {}),
                        strict=False,
                    )
                    if "degenerate_at" in state:
                        quad = None  # the candidate cannot run on this fold: never chosen here
                    else:
                        key = (
                            cand.imputation,
                            f,
                            tuple(state["features"]),
                            tuple(state["outliers"]),
                        )
                        if key not in cache.quads:  # shared: equal selections, equal quadratics
                            cache.quads[key] = fold_quadratic(
                                X[tr], A[tr], B[tr], X[val], A[val], B[val], state
                            )
                        quad = cache.quads[key]
                    hit = (l_f, u_f, quad)
                    cache.folds.setdefault((k, f), []).append(hit)
                lo, hi = max(lo, hit[0]), min(hi, hit[1])
                if hit[2] is None:
                    finite = False
                else:
                    total = total + hit[2]
            quads[k] = total / len(setup["masks"]) if finite else None
        errors = {
            k: (float(q[0] + q[1] * z + q[2] * z * z) if q is not None else np.inf)
            for k, q in quads.items()
        }
        winner = min(setup["evaluated"], key=lambda k: (errors[k], k))  # first index on ties
        if not np.isfinite(errors[winner]):
            return CvChoice(winner, errors, {"degenerate": True}, lo, hi)
        best = quads[winner]
        others = np.array(
            [quads[k] for k in setup["evaluated"] if k != winner and quads[k] is not None]
        )
        if len(others):
            diff = best[None, :] - others  # q_winner - q_k <= 0 for every other candidate
            a_lo, a_hi = quadratic_interval_many(diff[:, 2], diff[:, 1], diff[:, 0], z)
        else:
            a_lo, a_hi = -np.inf, np.inf
        lo, hi = max(lo, a_lo), min(hi, a_hi)
        hit = next((h for h in cache.full.get(winner, ()) if h[0] <= z <= h[1]), None)
        if hit is None:
            A, B = lines[self.candidates[winner].imputation]
            state, l_w, u_w = self.candidates[winner].engine.event(
                X, A, B, z, self._bound[winner], cache.memo.setdefault((winner, "full"), {}), False
            )
            hit = (l_w, u_w, state)
            cache.full.setdefault(winner, []).append(hit)
        lo, hi = max(lo, hit[0]), min(hi, hit[1])
        model = {
            **hit[2],
            "imputation": self.candidates[winner].imputation if setup["any_missing"] else "none",
        }
        if self.condition_on == "candidate":
            model["candidate"] = winner
        return CvChoice(winner, errors, model, lo, hi, a_lo, a_hi)

    def event_on_line(self, X: np.ndarray, y_raw: np.ndarray, a: np.ndarray, b: np.ndarray):
        """z -> CvChoice along y_obs(z) = a + b z (a, b in the space of the observed responses)."""
        setup, cache = self._setup(X, y_raw), _Cache()

        def choice(z: float) -> CvChoice:
            return self._choice(setup, a, b, z, cache)

        return choice

    # ------------------------------------------------------------------------------ public
    def tune(self, X: np.ndarray, y_raw: np.ndarray) -> CvChoice:
        """The CV choice on the observed data (winner, CV errors, the winner's (M, O))."""
        X, y_raw = DagSelectiveTest.check_data(X, y_raw)
        y_obs = y_raw[~np.isnan(y_raw)]
        return self.event_on_line(X, y_raw, y_obs, np.zeros_like(y_obs))(0.0)

    def run(self, X: np.ndarray, y_raw: np.ndarray, params: Any = None) -> State:
        """(M, O) of the CV-chosen candidate (``params`` is ignored; same call shape as the engine)."""
        model = self.tune(X, y_raw).model
        if model.get("degenerate"):
            raise ValueError("every CV candidate fails on some training fold (n <= p after OD?)")
        return {"features": model["features"], "outliers": model["outliers"]}

    def test(
        self,
        X: np.ndarray,
        y_raw: np.ndarray,
        params: Any = None,
        *,
        sigma: float | None = None,
        features: list[int] | None = None,
        mode: str = "parametric",
        **search: Any,
    ) -> list[FeatureTest]:
        """Selective tests of the CV-chosen pipeline's features, conditioning on the CV choice too."""
        if mode not in ("parametric", "over_conditioning"):
            raise ValueError(f"mode must be 'parametric' or 'over_conditioning', got {mode!r}")
        X, y_raw = DagSelectiveTest.check_data(X, y_raw)
        observed = ~np.isnan(y_raw)
        y_obs = y_raw[observed]
        choice = self.tune(X, y_raw)
        if choice.model.get("degenerate"):
            raise ValueError("every CV candidate fails on some training fold (n <= p after OD?)")
        winner = self.candidates[choice.winner]
        g = winner.engine.imputation_matrix(X, y_raw)
        state = {"features": choice.model["features"], "outliers": choice.model["outliers"]}
        if sigma is None:
            sigma = estimate_sigma(X, g @ y_obs)
        if not state["features"]:
            return []
        positions = range(len(state["features"])) if features is None else features
        out = []
        for j in positions:
            start = time.process_time()
            line = feature_line(X, g, y_obs, state, j, sigma)
            along = self.event_on_line(X, y_raw, line.a, line.b)

            def event(z: float, along: Callable = along) -> tuple[dict, float, float]:
                c = along(z)
                return c.model, c.lo, c.hi

            if mode == "parametric":
                res = parametric_search(event, choice.model, line.t_obs, **search)
            else:
                res = over_conditioning(event, choice.model, line.t_obs)
            res.extra["cv_candidate"] = winner.name
            out.append(line.feature_test(res, time.process_time() - start))
        return out
