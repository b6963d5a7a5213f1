"""Thin Kedro node functions: validate parameters, call the method, return data."""

from __future__ import annotations

import logging
from typing import Any, Literal

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from pydantic import Field, PositiveFloat, PositiveInt  # noqa: E402

from paper_pipelines.common.params import ParameterError, ParamsModel, validate_params  # noqa: E402
from paper_pipelines.common.runtime import seed_everything  # noqa: E402

from .cross_validation import CvSelectiveTest, expand_candidates  # noqa: E402
from .engine import DagSelectiveTest  # noqa: E402
from .experiments import (  # noqa: E402
    diabetes_standardised,
    rejection_summary,
    replicate_tests,
    synthetic_data,
)

logger = logging.getLogger(__name__)
SLUG = "si_pipeline"


# ------------------------------------------------------------------------------------ parameters
class DataParams(ParamsModel):
    source: Literal["synthetic", "diabetes"] = "synthetic"
    n: int = Field(150, ge=10)
    p: int = Field(10, ge=1)
    delta: float = 0.8
    missing_rate: float = Field(0.03, ge=0.0, lt=1.0)
    n_outliers: int = Field(5, ge=0)
    outlier_shift: float = 6.0
    standardise: bool = True
    seed: int = 0


class _Lam(ParamsModel):
    lam: PositiveFloat


class _K(ParamsModel):
    k: PositiveInt


class _Alpha(ParamsModel):
    alpha: PositiveFloat


class DagParams(ParamsModel):
    """Hyperparameters of one declared DAG; only the components it uses need to be present."""

    soft_ipod: _Lam | None = None
    cook_distance: _Lam | None = None
    dffits: _Lam | None = None
    marginal_screening: _K | None = None
    stepwise: _K | None = None
    lasso: _Alpha | None = None


class InferenceParams(ParamsModel):
    sigma: PositiveFloat | None = 1.0
    search_strategy: Literal["pi1", "pi3"] = "pi3"
    termination: Literal["precision", "decision", "exhaustive"] = "precision"
    precision: float = Field(1e-3, gt=0.0, lt=1.0)
    step: float = Field(1e-6, gt=0.0, le=1e-2)
    max_iter: PositiveInt = 100_000
    alpha: float = Field(0.05, gt=0.0, lt=1.0)

    def search(self) -> dict[str, Any]:
        return self.model_dump(exclude={"sigma"})


class CalibrationParams(ParamsModel):
    replications: PositiveInt = 200
    n: int = Field(100, ge=10)
    p: PositiveInt = 10
    missing_rate: float = Field(0.03, ge=0.0, lt=1.0)
    variants: list[str] = ["op1", "op2"]
    estimated_sigma_variants: list[str] = ["op1"]
    estimated_sigma_replications: int = Field(200, ge=0)
    exactness_datasets: int = Field(10, ge=0)
    seed: int = 1


class PowerParams(ParamsModel):
    replications: PositiveInt = 100
    deltas: list[float] = [0.4]
    n: int = Field(100, ge=10)
    p: PositiveInt = 10
    missing_rate: float = Field(0.03, ge=0.0, lt=1.0)
    variants: list[str] = ["op1", "op2"]
    seed: int = 2


class CvParams(ParamsModel):
    """Pipeline selection by K-fold CV inside the test (Sec. 5, si4pipeline's ``tune`` + ``all_cv``)."""

    enabled: bool = True
    folds: int = Field(5, ge=2)
    seed: int = 0
    max_candidates: PositiveInt | None = None
    condition_on: Literal["selection", "candidate"] = "selection"
    dags: list[str] = ["op1", "op2"]  # declared DAGs that compete
    # per DAG: its parameter block with lists for the values to cross-validate (product)
    grid: dict[str, dict[str, dict[str, Any]]] = {
        "op1": {"lasso": {"alpha": [0.08, 0.12]}},
        "op2": {"lasso": {"alpha": [0.08, 0.12]}},
    }

    def candidate_grids(self) -> dict[str, dict]:
        return {dag: self.grid.get(dag, {}) for dag in self.dags}

    demo: bool = True  # CV-chosen test of the demo data's selected features
    null_replications: int = Field(100, ge=0)  # at calibration.{n, p, missing_rate, seed}
    power_replications: int = Field(100, ge=0)  # at power.{n, p, missing_rate, seed}
    power_delta: float = 0.4
    real_replications: int = Field(50, ge=0)  # at real.{n, missing_rate, seed}


class RealParams(ParamsModel):
    dataset: Literal["diabetes"] = "diabetes"
    n: int = Field(150, ge=20, le=442)
    replications: PositiveInt = 100
    missing_rate: float = Field(0.0, ge=0.0, lt=1.0)
    variants: list[str] = ["op1", "op2"]
    seed: int = 3


def _dag_params(engines: dict[str, DagSelectiveTest], dag_params: dict[str, Any]) -> dict:
    out = {}
    for name in engines:
        validate_params(DagParams, dag_params[name], f"{SLUG}.{name}")
        out[name] = dag_params[name]
    return out


def _check_variants(variants: list[str], engines: dict, key: str) -> None:
    unknown = [v for v in variants if v not in engines]
    if unknown:
        raise ParameterError(
            f"parameter {SLUG}.{key} = {variants!r} names unknown DAGs {unknown}; "
            f"declared DAGs: {sorted(engines)}"
        )


# ------------------------------------------------------------------------------------ validate
def validate_parameters(
    engines: dict[str, DagSelectiveTest],
    data: dict,
    inference: dict,
    calibration: dict,
    power: dict,
    real: dict,
    cv: dict,
    **dag_params: dict,
) -> dict[str, Any]:
    """Check every parameter block before any work starts (so a bad value writes nothing)."""
    config = {
        "data": validate_params(DataParams, data, f"{SLUG}.data").model_dump(),
        "inference": validate_params(InferenceParams, inference, f"{SLUG}.inference").model_dump(),
        "calibration": validate_params(
            CalibrationParams, calibration, f"{SLUG}.calibration"
        ).model_dump(),
        "power": validate_params(PowerParams, power, f"{SLUG}.power").model_dump(),
        "real": validate_params(RealParams, real, f"{SLUG}.real").model_dump(),
        "cv": validate_params(CvParams, cv, f"{SLUG}.cv").model_dump(),
        "dags": _dag_params(engines, dag_params),
    }
    if config["cv"]["enabled"]:
        cv_cfg = CvParams(**config["cv"])
        _check_variants(cv_cfg.dags, engines, "cv.dags")
        _check_variants(list(cv_cfg.grid), engines, "cv.grid")
        try:
            cands = expand_candidates(engines, cv_cfg.candidate_grids(), config["dags"])
        except Exception as exc:  # a grid that does not fit its DAG (unknown key, bad value)
            raise ParameterError(f"parameter {SLUG}.cv.grid is invalid: {exc}") from None
        for cand in cands:
            validate_params(DagParams, cand.params, f"{SLUG}.cv.grid.{cand.dag}")
    _check_variants(
        config["calibration"]["variants"] + config["calibration"]["estimated_sigma_variants"],
        engines,
        "calibration.variants",
    )
    _check_variants(config["power"]["variants"], engines, "power.variants")
    _check_variants(config["real"]["variants"], engines, "real.variants")
    for name, engine in engines.items():  # every params: input of each DAG must resolve
        engine.bind(config["dags"][name])
    return config


# ------------------------------------------------------------------------------------ ingest
def ingest_data(config: dict) -> tuple[pd.DataFrame, dict]:
    """Ingest: the demo dataset (synthetic with outliers, or a diabetes subsample), fully observed."""
    cfg = validate_params(DataParams, config["data"], f"{SLUG}.data")
    rng = seed_everything(cfg.seed)
    if cfg.source == "synthetic":
        X, y, truth = synthetic_data(
            rng, cfg.n, cfg.p, cfg.delta, 3, 0.0, cfg.n_outliers, cfg.outlier_shift
        )
    else:
        X_all, y_all = diabetes_standardised(cfg.seed)
        if cfg.n > len(y_all):
            raise ValueError(f"{SLUG}.data.n = {cfg.n} exceeds the {len(y_all)} diabetes rows")
        rows = rng.choice(len(y_all), cfg.n, replace=False)
        X, y, truth = X_all[rows], y_all[rows], {"support": [], "outliers": []}
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame["y"] = y
    logger.info("ingested %s data: n=%d, p=%d", cfg.source, X.shape[0], X.shape[1])
    return frame, truth


# ------------------------------------------------------------------------------------ preprocess
def preprocess(raw: pd.DataFrame, config: dict) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Preprocess: standardise X and set a Binomial(n, rate) random subset of y to NaN."""
    cfg = validate_params(DataParams, config["data"], f"{SLUG}.data")
    X = raw.drop(columns="y").to_numpy(dtype=float)
    y = raw["y"].to_numpy(dtype=float).copy()
    if cfg.standardise:
        X = (X - X.mean(0)) / X.std(0)
    rng = np.random.default_rng([cfg.seed, 1])
    n_missing = rng.binomial(len(y), cfg.missing_rate) if cfg.missing_rate > 0 else 0
    y[rng.choice(len(y), n_missing, replace=False)] = np.nan
    DagSelectiveTest.check_data(X, y)
    snapshot = pd.DataFrame(X, columns=list(raw.columns[:-1]))
    snapshot["y"] = y
    logger.info("analysed data: %d rows, %d missing responses", len(y), n_missing)
    return X, y, snapshot


# ------------------------------------------------------------------------------------ select / test
def describe_dags(engines: dict[str, DagSelectiveTest], config: dict, **inputs: Any) -> dict:
    """Provenance: each declared DAG (nodes, components, hyperparameters, edges) and its (M, O)."""
    out = {}
    for name, engine in engines.items():
        params = config["dags"][name]
        out[name] = {**engine.describe(params), "selection": inputs[f"{name}_state"]}
    return out


def selective_test(
    engines: dict[str, DagSelectiveTest], X: np.ndarray, y_raw: np.ndarray, config: dict, **inputs
) -> pd.DataFrame:
    """Test every selected feature of every DAG (parametric, OC and naive p-values)."""
    cfg = validate_params(InferenceParams, config["inference"], f"{SLUG}.inference")
    rows = []
    for name, engine in engines.items():
        params = config["dags"][name]
        kedro_state = inputs[f"{name}_state"]
        if engine.run(X, y_raw, params) != kedro_state:
            raise RuntimeError(
                f"DAG {name}: the engine's (M, O) differs from the Kedro run's {kedro_state}"
            )
        par = engine.test(X, y_raw, params, sigma=cfg.sigma, **cfg.search())
        oc = engine.test(X, y_raw, params, sigma=cfg.sigma, mode="over_conditioning")
        for a, b in zip(par, oc, strict=True):
            row = {
                "dag": name,
                **a.as_row(),
                "p_oc": b.result.p_value,
                "cpu_seconds_oc": b.cpu_seconds,
            }
            row["outliers"] = str(kedro_state["outliers"])
            rows.append(row)
        logger.info(
            "DAG %s: M=%s, |O|=%d tested",
            name,
            kedro_state["features"],
            len(kedro_state["outliers"]),
        )
    return pd.DataFrame(rows)


# ------------------------------------------------------------------------------------ experiments
def calibrate_null(engines: dict[str, DagSelectiveTest], config: dict) -> tuple[pd.DataFrame, dict]:
    """Null calibration (beta = 0): FPR of parametric / OC / naive p-values, KS uniformity, exactness."""
    cfg = validate_params(CalibrationParams, config["calibration"], f"{SLUG}.calibration")
    inf = validate_params(InferenceParams, config["inference"], f"{SLUG}.inference")
    params = config["dags"]

    def draw(rng):
        return synthetic_data(rng, cfg.n, cfg.p, 0.0, 3, cfg.missing_rate)

    tables, report = [], {"alpha": inf.alpha, "variants": {}, "failures": {}}
    runs = [(v, inf.sigma if inf.sigma else None, "known", cfg.replications) for v in cfg.variants]
    runs += [
        (v, None, "estimated", cfg.estimated_sigma_replications)
        for v in cfg.estimated_sigma_variants
    ]
    for variant, sigma, sigma_mode, reps in runs:
        if reps == 0:
            continue
        label = f"null {variant} sigma={sigma_mode}"
        table, failures = replicate_tests(
            engines[variant], params[variant], draw, reps, cfg.seed, sigma, inf.search(), label
        )
        table["dag"], table["sigma_mode"] = variant, sigma_mode
        tables.append(table)
        report["variants"][f"{variant}/{sigma_mode}"] = rejection_summary(table, inf.alpha)
        report["failures"][f"{variant}/{sigma_mode}"] = failures
    report["exactness"] = _exactness(
        engines[cfg.variants[0]], params[cfg.variants[0]], draw, cfg, inf
    )
    return pd.concat(tables, ignore_index=True), report


def _exactness(engine, params, draw, cfg: CalibrationParams, inf: InferenceParams) -> dict:
    """Acceptance check 3: precision-mode p vs exhaustive-mode p on the first null datasets."""
    diffs, inside, seen, attempt = [], [], 0, 0
    while seen < cfg.exactness_datasets and attempt < 20 * max(1, cfg.exactness_datasets):
        rng = np.random.default_rng([cfg.seed, attempt])
        attempt += 1
        X, y, _ = draw(rng)
        if not engine.run(X, y, params)["features"]:
            continue
        sigma = inf.sigma
        a = engine.test(X, y, params, sigma=sigma, features=[0], **inf.search())[0].result
        ex = {**inf.search(), "termination": "exhaustive"}
        b = engine.test(X, y, params, sigma=sigma, features=[0], **ex)[0].result
        diffs.append(abs(a.p_value - b.p_value))
        inside.append(a.inf_p - 1e-12 <= b.p_value <= a.sup_p + 1e-12)
        seen += 1
    return {
        "datasets": seen,
        "max_abs_diff_precision_vs_exhaustive": float(max(diffs)) if diffs else None,
        "exhaustive_within_bounds": bool(all(inside)),
    }


def power_curve(engines: dict[str, DagSelectiveTest], config: dict) -> pd.DataFrame:
    """Power: rejection rate among tests of truly active features, per DAG and delta."""
    cfg = validate_params(PowerParams, config["power"], f"{SLUG}.power")
    inf = validate_params(InferenceParams, config["inference"], f"{SLUG}.inference")
    params = config["dags"]
    rows = []
    for variant in cfg.variants:
        for delta in cfg.deltas:

            def draw(rng, delta=delta):
                return synthetic_data(rng, cfg.n, cfg.p, delta, 3, cfg.missing_rate)

            table, failures = replicate_tests(
                engines[variant],
                params[variant],
                draw,
                cfg.replications,
                cfg.seed,
                inf.sigma,
                inf.search(),
                f"power {variant} delta={delta}",
                require_true=True,
            )
            rows.append(
                {
                    "dag": variant,
                    "delta": delta,
                    **rejection_summary(table, inf.alpha),
                    "failures": failures,
                }
            )
    return pd.DataFrame(rows)


def _real_draw(cfg: RealParams):
    """Random diabetes subsamples of size cfg.n (optionally with missing responses)."""
    X_all, y_all = diabetes_standardised(cfg.seed)

    def draw(rng):
        rows = rng.choice(len(y_all), cfg.n, replace=False)
        y = y_all[rows].copy()
        n_missing = rng.binomial(cfg.n, cfg.missing_rate) if cfg.missing_rate > 0 else 0
        y[rng.choice(cfg.n, n_missing, replace=False)] = np.nan
        return X_all[rows], y, {"support": [], "outliers": []}

    return draw


def real_data_eval(engines: dict[str, DagSelectiveTest], config: dict) -> pd.DataFrame:
    """Real data: rejection rates of parametric vs OC on random diabetes subsamples (sigma = 1 plug-in)."""
    cfg = validate_params(RealParams, config["real"], f"{SLUG}.real")
    inf = validate_params(InferenceParams, config["inference"], f"{SLUG}.inference")
    params = config["dags"]
    draw = _real_draw(cfg)
    out = []
    for variant in cfg.variants:
        table, failures = replicate_tests(
            engines[variant],
            params[variant],
            draw,
            cfg.replications,
            cfg.seed,
            1.0,
            inf.search(),
            f"real {cfg.dataset} {variant}",
        )
        out.append(
            {
                "dataset": cfg.dataset,
                "n": cfg.n,
                "dag": variant,
                **rejection_summary(table, inf.alpha),
                "failures": failures,
            }
        )
    return pd.DataFrame(out)


# ------------------------------------------------------------------------------------ CV inside the test
def _cv_engine(engines: dict[str, DagSelectiveTest], config: dict) -> CvSelectiveTest:
    cfg = validate_params(CvParams, config["cv"], f"{SLUG}.cv")
    candidates = expand_candidates(engines, cfg.candidate_grids(), config["dags"])
    return CvSelectiveTest(
        candidates,
        folds=cfg.folds,
        seed=cfg.seed,
        max_candidates=cfg.max_candidates,
        condition_on=cfg.condition_on,
    )


def cv_selective_test(
    engines: dict[str, DagSelectiveTest], X: np.ndarray, y_raw: np.ndarray, config: dict
) -> tuple[pd.DataFrame, dict]:
    """The pipeline chosen by K-fold CV on the demo data, its CV errors, and its selective tests.

    The p-values condition on the CV choice as well as on the winner's (M, O) (Sec. 5).
    """
    cfg = validate_params(CvParams, config["cv"], f"{SLUG}.cv")
    inf = validate_params(InferenceParams, config["inference"], f"{SLUG}.inference")
    if not (cfg.enabled and cfg.demo):
        return pd.DataFrame(), {"enabled": False}
    cv = _cv_engine(engines, config)
    choice = cv.tune(X, y_raw)
    winner = cv.candidates[choice.winner]
    par = cv.test(X, y_raw, sigma=inf.sigma, **inf.search())
    oc = cv.test(X, y_raw, sigma=inf.sigma, mode="over_conditioning")
    rows = [
        {
            "candidate": winner.name,
            **a.as_row(),
            "p_oc": b.result.p_value,
            "cpu_seconds_oc": b.cpu_seconds,
        }
        for a, b in zip(par, oc, strict=True)
    ]
    logger.info(
        "CV chose %s among %d candidates: M=%s, |O|=%d",
        winner.name,
        len(choice.errors),
        choice.model["features"],
        len(choice.model["outliers"]),
    )
    report = {
        "enabled": True,
        "folds": cfg.folds,
        "seed": cfg.seed,
        "condition_on": cfg.condition_on,
        "candidates": [{"name": c.name, "dag": c.dag, "params": c.params} for c in cv.candidates],
        "cv_error": {cv.candidates[k].name: v for k, v in choice.errors.items()},
        "chosen": winner.name,
        "selection": {k: choice.model[k] for k in ("features", "outliers", "imputation")},
    }
    return pd.DataFrame(rows), report


def cv_experiments(engines: dict[str, DagSelectiveTest], config: dict) -> tuple[pd.DataFrame, dict]:
    """Null calibration, power and real-data rejection of the CV-chosen pipeline (tests with CV inside).

    Same data generators, sizes and seeds as the fixed-DAG experiments; one selected feature per dataset.
    """
    cfg = validate_params(CvParams, config["cv"], f"{SLUG}.cv")
    inf = validate_params(InferenceParams, config["inference"], f"{SLUG}.inference")
    cal = validate_params(CalibrationParams, config["calibration"], f"{SLUG}.calibration")
    pw = validate_params(PowerParams, config["power"], f"{SLUG}.power")
    real = validate_params(RealParams, config["real"], f"{SLUG}.real")
    if not cfg.enabled:
        return pd.DataFrame(), {"enabled": False}
    cv = _cv_engine(engines, config)
    runs = [
        (
            "null",
            lambda rng: synthetic_data(rng, cal.n, cal.p, 0.0, 3, cal.missing_rate),
            cfg.null_replications,
            cal.seed,
            inf.sigma,
            False,
        ),
        (
            "power",
            lambda rng: synthetic_data(rng, pw.n, pw.p, cfg.power_delta, 3, pw.missing_rate),
            cfg.power_replications,
            pw.seed,
            inf.sigma,
            True,
        ),
        ("real", _real_draw(real), cfg.real_replications, real.seed, 1.0, False),
    ]
    tables, report = [], {"enabled": True, "n_candidates": len(cv.candidates), "alpha": inf.alpha}
    for name, draw, reps, seed, sigma, require_true in runs:
        if reps == 0:
            report[name] = {"n_tests": 0}
            continue
        table, failures = replicate_tests(
            cv,
            {},
            draw,
            reps,
            seed,
            sigma,
            inf.search(),
            f"cv {name}",
            require_true=require_true,
        )
        table["experiment"] = name
        tables.append(table)
        report[name] = {**rejection_summary(table, inf.alpha), "failures": failures}
    report["power"]["delta"] = cfg.power_delta
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(), report


# ------------------------------------------------------------------------------------ evaluate
def _cv_metrics(cv: dict) -> dict[str, Any]:
    """Metrics of the CV-chosen pipeline (None where CV or that experiment was switched off)."""
    keys = {
        "null_fpr_parametric_cv": ("null", "parametric"),
        "null_fpr_oc_cv": ("null", "oc"),
        "null_fpr_naive_cv": ("null", "naive"),
        "ks_parametric_cv": ("null", "ks_parametric"),
        "n_null_replications_cv": ("null", "n_tests"),
        "mean_seconds_per_test_cv": ("null", "mean_cpu_seconds_parametric"),
        "power_parametric_cv": ("power", "parametric"),
        "power_oc_cv": ("power", "oc"),
        "real_rejection_parametric_cv": ("real", "parametric"),
        "real_rejection_oc_cv": ("real", "oc"),
    }
    out: dict[str, Any] = {k: cv.get(block, {}).get(field) for k, (block, field) in keys.items()}
    out["n_failed_tests_cv"] = int(
        sum(cv.get(b, {}).get("failures", 0) for b in ("null", "power", "real"))
    )
    return out


def evaluate(
    null_pvalues: pd.DataFrame,
    calibration: dict,
    power: pd.DataFrame,
    real: pd.DataFrame,
    cv: dict,
) -> tuple[dict, pd.DataFrame, Figure, Figure]:
    """Evaluate: metrics contract, method x metric table, QQ plot of null p-values, power bars."""
    alpha = calibration["alpha"]
    known = null_pvalues[null_pvalues["sigma_mode"] == "known"]
    metrics: dict[str, Any] = {
        "null_fpr_parametric": float(np.mean(known["p_parametric"] <= alpha)),
        "null_fpr_oc": float(np.mean(known["p_oc"] <= alpha)),
        "null_fpr_naive": float(np.mean(known["p_naive"] <= alpha)),
        "power_parametric": float(np.average(power["parametric"], weights=power["n_tests"])),
        "power_oc": float(np.average(power["oc"], weights=power["n_tests"])),
        "mean_seconds_per_test": float(known["cpu_seconds"].mean()),
        "n_null_replications": int(len(known)),
    }
    for key, summary in calibration["variants"].items():
        tag = key.replace("/", "_")
        metrics[f"null_fpr_parametric_{tag}"] = summary["parametric"]
        metrics[f"null_fpr_oc_{tag}"] = summary["oc"]
        metrics[f"null_fpr_naive_{tag}"] = summary["naive"]
        metrics[f"ks_parametric_{tag}"] = summary["ks_parametric"]
        metrics[f"mean_seconds_per_test_{tag}"] = summary["mean_cpu_seconds_parametric"]
    for _, row in power.iterrows():
        metrics[f"power_parametric_{row['dag']}_delta{row['delta']}"] = row["parametric"]
        metrics[f"power_oc_{row['dag']}_delta{row['delta']}"] = row["oc"]
    for _, row in real.iterrows():
        metrics[f"real_rejection_parametric_{row['dag']}"] = row["parametric"]
        metrics[f"real_rejection_oc_{row['dag']}"] = row["oc"]
    metrics["n_failed_tests"] = int(
        sum(calibration["failures"].values()) + power["failures"].sum() + real["failures"].sum()
    )
    metrics["exactness_max_abs_diff"] = calibration["exactness"][
        "max_abs_diff_precision_vs_exhaustive"
    ]
    metrics.update(_cv_metrics(cv))

    results = pd.DataFrame(
        {
            "method": ["parametric", "over_conditioning", "naive"],
            "null_fpr": [
                metrics["null_fpr_parametric"],
                metrics["null_fpr_oc"],
                metrics["null_fpr_naive"],
            ],
            "null_ks_pvalue": [
                float(np.mean([s["ks_parametric"] for s in calibration["variants"].values()])),
                float(np.mean([s["ks_oc"] for s in calibration["variants"].values()])),
                float(np.mean([s["ks_naive"] for s in calibration["variants"].values()])),
            ],
            "power": [
                metrics["power_parametric"],
                metrics["power_oc"],
                float(np.average(power["naive"], weights=power["n_tests"])),
            ],
            "real_rejection": [
                float(real["parametric"].mean()),
                float(real["oc"].mean()),
                float(real["naive"].mean()),
            ],
            "mean_cpu_seconds_per_test": [
                float(known["cpu_seconds"].mean()),
                float(known["cpu_seconds_oc"].mean()),
                0.0,
            ],
            "null_fpr_cv": [cv.get("null", {}).get(k) for k in ("parametric", "oc", "naive")],
            "power_cv": [cv.get("power", {}).get(k) for k in ("parametric", "oc", "naive")],
            "real_rejection_cv": [cv.get("real", {}).get(k) for k in ("parametric", "oc", "naive")],
            "mean_cpu_seconds_per_test_cv": [
                cv.get("null", {}).get("mean_cpu_seconds_parametric"),
                cv.get("null", {}).get("mean_cpu_seconds_oc"),
                0.0 if cv.get("enabled") else None,
            ],
        }
    )

    qq = Figure(figsize=(4.5, 4.5))
    ax = qq.subplots()
    for col, label in (("p_parametric", "parametric"), ("p_oc", "OC"), ("p_naive", "naive")):
        p = np.sort(known[col].to_numpy())
        ax.plot((np.arange(1, len(p) + 1) - 0.5) / max(len(p), 1), p, ".", ms=3, label=label)
    ax.plot([0, 1], [0, 1], "k--", lw=0.8)
    ax.set(xlabel="Uniform quantile", ylabel="null p-value", title="Null p-values (sigma known)")
    ax.legend()

    bars = Figure(figsize=(6, 3.5))
    ax = bars.subplots()
    labels = [f"{r.dag} d={r.delta}" for r in power.itertuples()]
    par, ocs = list(power["parametric"]), list(power["oc"])
    if cv.get("power", {}).get("n_tests"):
        labels.append(f"CV d={cv['power']['delta']}")
        par.append(cv["power"]["parametric"])
        ocs.append(cv["power"]["oc"])
    x = np.arange(len(labels))
    ax.bar(x - 0.2, par, 0.4, label="parametric")
    ax.bar(x + 0.2, ocs, 0.4, label="OC")
    ax.set_xticks(x, labels)
    ax.set(ylabel=f"power (alpha = {alpha:.2f})", ylim=(0, 1), title="Power of selective tests")
    ax.legend()
    logger.info(
        "null FPR parametric %.3f, OC %.3f, naive %.3f; power %.2f vs %.2f",
        metrics["null_fpr_parametric"],
        metrics["null_fpr_oc"],
        metrics["null_fpr_naive"],
        metrics["power_parametric"],
        metrics["power_oc"],
    )
    return metrics, results, qq, bars
