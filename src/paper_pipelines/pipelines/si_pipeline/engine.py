"""The selective test derived from a Kedro Pipeline of registered components (the paper's Sec. 5 framework).

:class:`DagSelectiveTest` reads ``pipeline.nodes`` (Kedro returns them in topological order), checks that
each node function is a registered component, and then evaluates the selection event of the whole DAG at
any point z of the test line by calling each component's ``event`` in that order, intersecting the
intervals along the way ("auto-conditioning"). The Kedro runner is never used inside the search: one test
needs tens of event evaluations and the runner's overhead would dominate.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from kedro.pipeline import Pipeline
from pydantic import BaseModel, ValidationError, create_model

from paper_pipelines.common.params import ParamsModel, format_validation_error

from .components import ComponentSpec, DegenerateStateError, State, component_spec
from .line_search import SearchResult, over_conditioning, parametric_search
from .parameters import DagParams

logger = logging.getLogger(__name__)


class RankDeficientError(ValueError):
    """The OLS refit on the selected features is rank-deficient: the tested coefficient is not identified."""


class DagError(ValueError):
    """The Kedro pipeline cannot be interpreted as a feature-selection pipeline of SI components."""


@dataclass(frozen=True)
class _Step:
    node: str
    spec: ComponentSpec
    inputs: tuple[str, ...]
    output: str
    hyper: tuple[str, ...]


@dataclass
class FeatureTest:
    """Selective test of one selected feature."""

    feature: int
    beta_hat: float
    result: SearchResult
    sigma: float
    scale: float  # sigma * ||eta||: the statistic in the scale of beta_hat is scale * z
    cpu_seconds: float

    def as_row(self) -> dict[str, Any]:
        """Flat record for a results table (intervals as JSON text, in the unit scale of T)."""
        r = self.result
        return {
            "feature": self.feature,
            "beta_hat": self.beta_hat,
            "stat": r.stat,
            "p_value": r.p_value,
            "inf_p": r.inf_p,
            "sup_p": r.sup_p,
            "naive_p": r.naive_p,
            "mode": r.mode,
            "search_count": r.search_count,
            "n_truncation_intervals": len(r.truncation),
            "truncation": json.dumps(np.round(r.truncation, 8).tolist()),
            "sigma": self.sigma,
            "cpu_seconds": self.cpu_seconds,
        }


def _common_namespace(pipeline: Pipeline) -> str:
    spaces = [(n.namespace or "").split(".") for n in pipeline.nodes]
    common: list[str] = []
    for parts in zip(*spaces, strict=False):
        if len(set(parts)) != 1 or parts[0] == "":
            break
        common.append(parts[0])
    return ".".join(common)


def _lookup(params: dict, dotted: str, node: str) -> Any:
    value: Any = params
    for key in dotted.split("."):
        if not isinstance(value, dict) or key not in value:
            raise DagError(f"node {node}: parameter '{dotted}' not found in the parameters given")
        value = value[key]
    return value


def _nested_model(tree: dict, name: str, base: type[BaseModel] = ParamsModel) -> type[BaseModel]:
    """A strict pydantic model with a required field per leaf of ``tree`` (sub-dicts: sub-models)."""
    fields: dict[str, Any] = {}
    for key, value in tree.items():
        if not key.isidentifier() or key.startswith("_"):
            raise DagError(f"parameter key {key!r} must be a Python identifier not starting with _")
        sub = _nested_model(value, f"{name}_{key}") if isinstance(value, dict) else value
        fields[key] = (sub, ...)
    try:
        return create_model(name, __base__=base, **fields)
    except Exception as exc:  # a key that clashes with a pydantic attribute (e.g. "copy")
        raise DagError(f"cannot use the parameter keys {sorted(tree)}: {exc}") from exc


def estimate_sigma(X: np.ndarray, y_full: np.ndarray) -> float:
    """Plug-in noise SD: residual SD of the full OLS fit (all p features), ddof = p (Sec. 6.3)."""
    coef, *_ = np.linalg.lstsq(X, y_full, rcond=None)
    return float(np.std(y_full - X @ coef, ddof=X.shape[1]))


@dataclass(frozen=True)
class FeatureLine:
    """The test of one selected feature: direction, statistic and the line y_obs(z) = a + b z."""

    feature: int
    beta_hat: float
    t_obs: float
    a: np.ndarray  # in the space of the OBSERVED responses (length n_obs)
    b: np.ndarray
    sigma: float
    scale: float  # sigma * ||eta||

    def feature_test(self, result: SearchResult, cpu_seconds: float) -> FeatureTest:
        return FeatureTest(self.feature, self.beta_hat, result, self.sigma, self.scale, cpu_seconds)


def feature_line(
    X: np.ndarray, g: np.ndarray, y_obs: np.ndarray, state: State, position: int, sigma: float
) -> FeatureLine:
    """eta^T = e_j^T (X_{-O,M}^T X_{-O,M})^{-1} X_{-O,M}^T E_{-O} G and the unit-variance line (Sec. 4.1).

    b = sigma eta / ||eta||, a = y_obs - b T_obs, T_obs = eta^T y_obs / (sigma ||eta||).
    """
    keep = np.ones(X.shape[0], dtype=bool)
    keep[state["outliers"]] = False
    rows = np.flatnonzero(keep)
    feats = state["features"]
    design = X[np.ix_(rows, feats)]
    sv = np.linalg.svd(design, compute_uv=False)
    if sv[-1] <= max(design.shape) * np.finfo(float).eps * sv[0]:  # numpy's matrix_rank tolerance
        rank = int(np.sum(sv > max(design.shape) * np.finfo(float).eps * sv[0]))
        raise RankDeficientError(
            f"the refit design X[-O, M] ({len(rows)} rows, selected features {list(feats)}) has rank "
            f"{rank} < {len(feats)}: the OLS coefficient of feature {feats[position]} is not "
            "identified (collinear or duplicated columns among the selected features); remove the "
            "duplicated columns from X or declare a DAG that cannot select both"
        )
    pinv = np.linalg.pinv(design)
    eta_full = np.zeros(X.shape[0])
    eta_full[rows] = pinv[position]
    eta = g.T @ eta_full
    norm_eta = float(np.linalg.norm(eta))
    beta_hat = float(eta @ y_obs)
    t_obs = beta_hat / (sigma * norm_eta)
    b = sigma * eta / norm_eta
    a = y_obs - b * t_obs
    return FeatureLine(
        int(feats[position]), beta_hat, t_obs, a, b, float(sigma), float(sigma * norm_eta)
    )


class DagSelectiveTest:
    """Selective inference for exactly the DAG declared in ``pipeline`` (a Kedro Pipeline)."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline
        self.namespace = _common_namespace(pipeline)
        steps: list[_Step] = []
        for node in pipeline.nodes:
            spec = component_spec(node.func)
            if spec is None:
                fname = getattr(node.func, "__name__", repr(node.func))
                raise DagError(
                    f"node {node.name}: function {fname} is not a registered SI component; "
                    "decorate it with @si_component or use one from si_pipeline.components"
                )
            if len(node.outputs) != 1:
                raise DagError(f"node {node.name}: a component must have exactly one output")
            data = tuple(i for i in node.inputs if not i.startswith("params:"))
            hyper = tuple(i for i in node.inputs if i.startswith("params:"))
            steps.append(_Step(node.name, spec, data, node.outputs[0], hyper))
        self.steps = steps
        self._check_shape(pipeline)
        self.params_model = self._params_model()

    # ---------------------------------------------------------------------------------- checks
    def _check_shape(self, pipeline: Pipeline) -> None:
        imputers = [s for s in self.steps if s.spec.kind == "imputation"]
        if len(imputers) != 1:
            raise DagError(
                f"the pipeline must contain exactly one imputation node, found {len(imputers)}"
            )
        imp = imputers[0]
        if len(imp.inputs) != 2:
            raise DagError(f"node {imp.node}: imputation takes (X, y_raw)")
        self.x_name, self.y_raw_name = imp.inputs
        self.y_name = imp.output
        free = {i for i in pipeline.inputs() if not i.startswith("params:")}
        if free != {self.x_name, self.y_raw_name}:
            extra = sorted(free - {self.x_name, self.y_raw_name})
            culprit = [s.node for s in self.steps if set(s.inputs) & set(extra)]
            raise DagError(
                f"imputation must come first and consume the raw inputs: node {imp.node} reads "
                f"{list(imp.inputs)}, but nodes {culprit} read dangling inputs {extra}"
            )
        state_names: set[str] = set()
        for s in self.steps:
            kind = s.spec.kind
            if kind == "initial" and s.inputs != (self.x_name,):
                raise DagError(f"node {s.node}: the initial state is built from X only")
            if kind in ("outlier_detection", "feature_selection"):
                if len(s.inputs) != 3 or s.inputs[0] != self.x_name:
                    raise DagError(f"node {s.node}: expected inputs (X, y, state, params...)")
                if s.inputs[1] != self.y_name:
                    raise DagError(
                        f"node {s.node}: reads response {s.inputs[1]!r}, but must read the imputed "
                        f"response {self.y_name!r} (imputation must come first)"
                    )
            if kind in ("structural", "set_operation", "outlier_detection", "feature_selection"):
                states = (
                    s.inputs[2:] if kind in ("outlier_detection", "feature_selection") else s.inputs
                )
                missing = [i for i in states if i not in state_names]
                if missing:
                    raise DagError(f"node {s.node}: input {missing} is not a state of this DAG")
            if kind != "imputation":
                state_names.add(s.output)
        outputs = list(pipeline.outputs())
        if len(outputs) != 1 or outputs[0] not in state_names:
            raise DagError(
                f"the pipeline must end in exactly one state (the final (M, O)), found {outputs}"
            )
        self.output_name = outputs[0]

    # ---------------------------------------------------------------------------------- params
    def hyper_keys(self) -> dict[str, tuple[Any, str, str]]:
        """{key relative to the DAG's block: (constraint, component argument, node)} of every
        ``params:`` input, read from the nodes; a key read by several nodes must mean one thing."""
        prefix = "params:" + (self.namespace + "." if self.namespace else "")
        keys: dict[str, tuple[Any, str, str]] = {}
        for s in self.steps:
            if s.hyper and len(s.hyper) != len(s.spec.hyper):
                names = [n for n, _ in s.spec.hyper]
                raise DagError(
                    f"node {s.node}: component {s.spec.name} takes the hyperparameters {names}, "
                    f"but the node gives {len(s.hyper)} params: inputs {list(s.hyper)}"
                )
            for h, (arg, constraint) in zip(s.hyper, s.spec.hyper, strict=False):
                if not h.startswith(prefix):
                    raise DagError(f"node {s.node}: parameter {h} lies outside {prefix}*")
                key = h[len(prefix) :]
                if key in keys and keys[key][0] != constraint:
                    raise DagError(
                        f"nodes {keys[key][2]} and {s.node} both read params:{key} but as different "
                        f"hyperparameters ({keys[key][1]} of one, {arg} of the other); give each its key"
                    )
                keys.setdefault(key, (constraint, arg, s.node))
        return keys

    def _params_model(self) -> type[DagParams]:
        """The pydantic model of this DAG's parameter block (see :class:`parameters.DagParams`)."""
        tree: dict[str, Any] = {}
        for key, (constraint, _, node) in self.hyper_keys().items():
            *parents, leaf = key.split(".")
            level = tree
            for part in parents:
                level = level.setdefault(part, {})
                if not isinstance(level, dict):
                    raise DagError(f"node {node}: params:{key} nests under a key that is a value")
            if isinstance(level.get(leaf), dict):
                raise DagError(f"node {node}: params:{key} is both a value and a block of values")
            level[leaf] = constraint
        label = self.namespace.replace(".", "_") or "dag"
        return _nested_model(tree, f"DagParams_{label}", DagParams)

    def check_params(self, params: dict | BaseModel, where: str | None = None) -> dict:
        """``params`` validated against :attr:`params_model` (each value by its component's constraint).

        Raises DagError naming ``<where>.<key>`` (``where`` defaults to the DAG's namespace).
        """
        if isinstance(params, self.params_model):
            return params.hyperparameters()
        if isinstance(params, BaseModel):
            params = params.model_dump()
        if not isinstance(params, dict):
            raise DagError(f"the parameters of DAG {where or self.namespace} must be a mapping")
        try:
            return self.params_model.model_validate(params).hyperparameters()
        except ValidationError as exc:
            where = where or self.namespace
            message = format_validation_error(exc, where or "@", self.params_model)
            raise DagError(message.replace("@.", "")) from None  # no namespace: bare keys

    # ---------------------------------------------------------------------------------- events
    def bind(self, params: dict | BaseModel) -> list[tuple[_Step, tuple]]:
        """Resolve each node's ``params:`` inputs from ``params`` (keys relative to the namespace),
        after checking ``params`` against the DAG's own parameter model."""
        params = self.check_params(params)
        prefix = "params:" + (self.namespace + "." if self.namespace else "")
        bound = []
        for s in self.steps:
            vals = tuple(_lookup(params, h[len(prefix) :], s.node) for h in s.hyper)
            bound.append((s, vals))
        return bound

    def imputation_matrix(self, X: np.ndarray, y_raw: np.ndarray) -> np.ndarray:
        """G of the DAG's imputation node for this missingness pattern."""
        imp = next(s for s in self.steps if s.spec.kind == "imputation")
        return imp.spec.matrix(X, np.isnan(y_raw))

    def event(
        self,
        X: np.ndarray,
        a_full: np.ndarray,
        b_full: np.ndarray,
        z: float,
        bound: list,
        memo: dict | None = None,
        strict: bool = True,
    ) -> tuple[State, float, float]:
        """(final state, lo, hi) at y(z) = a_full + b_full z: the DAG's per-point selection event.

        ``memo`` maps node name -> scratch dict kept across the points of one test (warm starts).
        With ``strict=False`` (inside the line search) a component that cannot run on its input state
        (e.g. outlier detection left n <= p) yields a marker output that never equals an observed
        (M, O), valid on the interval where that input state is constant - which is exact.
        """
        values: dict[str, tuple[State, float, float]] = {}
        for step, hyper in bound:
            kind = step.spec.kind
            if kind == "imputation":
                continue
            try:
                if kind == "initial":
                    values[step.output] = (
                        {"features": list(range(X.shape[1])), "outliers": []},
                        -np.inf,
                        np.inf,
                    )
                elif kind == "structural":
                    values[step.output] = values[step.inputs[0]]
                elif kind == "set_operation":
                    parts = [values[i] for i in step.inputs]
                    values[step.output] = (
                        step.spec.combine([p[0] for p in parts]),
                        max(p[1] for p in parts),
                        min(p[2] for p in parts),
                    )
                else:
                    state, lo, hi = values[step.inputs[2]]
                    scratch = memo.setdefault(step.node, {}) if memo is not None else None
                    try:
                        new, l2, u2 = step.spec.event(
                            X, a_full, b_full, z, state, *hyper, memo=scratch
                        )
                    except DegenerateStateError:
                        if strict:
                            raise
                        return {"features": [], "outliers": [], "degenerate_at": step.node}, lo, hi
                    values[step.output] = (new, max(lo, l2), min(hi, u2))
            except DagError:
                raise
            except (ValueError, np.linalg.LinAlgError) as exc:
                raise ValueError(f"node {step.node}: {exc}") from exc
        return values[self.output_name]

    # ---------------------------------------------------------------------------------- public
    @staticmethod
    def check_data(X: np.ndarray, y_raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Validate the inputs: X complete and 2-D, y 1-D with at least one observed value."""
        X = np.asarray(X, dtype=float)
        y_raw = np.asarray(y_raw, dtype=float).ravel()
        if X.ndim != 2 or X.shape[0] != len(y_raw):
            raise ValueError(f"X must be (n, p) with n = len(y); got X {X.shape}, y {y_raw.shape}")
        if not np.isfinite(X).all():
            raise ValueError("X contains NaN or inf; only the response may have missing values")
        if np.isnan(y_raw).all():
            raise ValueError("y is entirely missing; at least one observed response is needed")
        if np.isinf(y_raw).any():
            raise ValueError("y contains inf")
        return X, y_raw

    def run(self, X: np.ndarray, y_raw: np.ndarray, params: dict) -> State:
        """The pipeline's (M, O) on the observed data (same code path as the event, at b = 0)."""
        X, y_raw = self.check_data(X, y_raw)
        y_full = self.imputation_matrix(X, y_raw) @ y_raw[~np.isnan(y_raw)]
        return self.event(X, y_full, np.zeros_like(y_full), 0.0, self.bind(params))[0]

    def test(
        self,
        X: np.ndarray,
        y_raw: np.ndarray,
        params: dict,
        *,
        sigma: float | None = None,
        features: list[int] | None = None,
        mode: str = "parametric",
        **search: Any,
    ) -> list[FeatureTest]:
        """Selective tests of the selected features (positions ``features`` in M; all by default)."""
        if mode not in ("parametric", "over_conditioning"):
            raise ValueError(f"mode must be 'parametric' or 'over_conditioning', got {mode!r}")
        X, y_raw = self.check_data(X, y_raw)
        bound = self.bind(params)
        observed = ~np.isnan(y_raw)
        y_obs = y_raw[observed]
        g = self.imputation_matrix(X, y_raw)
        y_full = g @ y_obs
        seed: dict = {}  # the components' scratch at the observed data: warm starts for every line
        state = self.event(X, y_full, np.zeros_like(y_full), 0.0, bound, seed)[0]
        if sigma is None:
            sigma = estimate_sigma(X, y_full)
        feats = state["features"]
        if not feats:
            return []
        positions = range(len(feats)) if features is None else features
        out = []
        for j in positions:
            start = time.process_time()
            line = feature_line(X, g, y_obs, state, j, sigma)
            a_full, b_full = g @ line.a, g @ line.b

            # z = T_obs is the observed data again: start from the observed answers (a component's
            # scratch must never change its answer, only its cost)
            memo: dict = {node: dict(scratch) for node, scratch in seed.items()}

            def event(
                z: float, a_full=a_full, b_full=b_full, memo=memo
            ) -> tuple[State, float, float]:
                return self.event(X, a_full, b_full, z, bound, memo, strict=False)

            if mode == "parametric":
                res = parametric_search(event, state, line.t_obs, **search)
            else:
                res = over_conditioning(event, state, line.t_obs)
            out.append(line.feature_test(res, time.process_time() - start))
        return out

    def describe(self, params: dict | None = None) -> dict[str, Any]:
        """JSON-able description of the DAG: nodes, components, hyperparameters and edges."""
        bound = self.bind(params) if params is not None else [(s, ()) for s in self.steps]
        nodes = [
            {
                "node": s.node,
                "component": s.spec.name,
                "kind": s.spec.kind,
                "inputs": list(s.inputs),
                "output": s.output,
                "hyperparameters": dict(zip(s.hyper, vals, strict=False)),
            }
            for s, vals in bound
        ]
        producer = {s.output: s.node for s in self.steps}
        edges = [[producer[i], s.node] for s in self.steps for i in s.inputs if i in producer]
        return {
            "namespace": self.namespace,
            "output": self.output_name,
            "nodes": nodes,
            "edges": edges,
        }


@dataclass(frozen=True)
class DeclaredPipeline:
    """A declared DAG with its hyperparameters: the feature-selection pipeline P that is tested."""

    name: str
    engine: DagSelectiveTest
    params: dict

    def run(self, X: np.ndarray, y_raw: np.ndarray) -> State:
        """P's (M, O) on the observed data."""
        return self.engine.run(X, y_raw, self.params)

    def test(self, X: np.ndarray, y_raw: np.ndarray, **kwargs: Any) -> list[FeatureTest]:
        """Selective tests of P's selected features (keywords as :meth:`DagSelectiveTest.test`)."""
        return self.engine.test(X, y_raw, self.params, **kwargs)

    def describe(self) -> dict[str, Any]:
        """JSON-able description of P (nodes, components, hyperparameters, edges)."""
        return self.engine.describe(self.params)
