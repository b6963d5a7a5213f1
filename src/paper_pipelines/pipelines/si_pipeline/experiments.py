"""Experiments of Sec. 6: replicated selective tests for the null calibration, the power and the real data,
for fixed declared pipelines and for the pipeline chosen by cross-validation inside the test.

Everything is plain numpy on top of :class:`DagSelectiveTest` / :class:`CvSelectiveTest`; the Kedro
nodes only pass the typed parameter blocks and the seeds derived from ``si_pipeline.seed``.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.progress import progress

from .cross_validation import CvSelectiveTest, expand_candidates
from .data import Draw, diabetes_subsamples, synthetic_draw
from .engine import DagSelectiveTest, DeclaredPipeline
from .lasso_polyhedron import LassoEventError
from .line_search import SearchError
from .metrics import rejection_summary
from .parameters import CalibrationParams, CvParams, InferenceParams, PowerParams, RealParams

logger = logging.getLogger(__name__)


def demo_tests(
    pipeline: DeclaredPipeline,
    X: np.ndarray,
    y_raw: np.ndarray,
    kedro_state: dict,
    inf: InferenceParams,
) -> list[dict[str, Any]]:
    """Parametric, OC and naive p-values of every feature the declared pipeline selects on the data.

    ``kedro_state`` is the (M, O) the Kedro run of the DAG computed; the engine must agree with it.
    """
    if pipeline.run(X, y_raw) != kedro_state:
        raise RuntimeError(
            f"DAG {pipeline.name}: the engine's (M, O) differs from the Kedro run's {kedro_state}"
        )
    par = pipeline.test(X, y_raw, sigma=inf.sigma, **inf.search())
    oc = pipeline.test(X, y_raw, sigma=inf.sigma, mode="over_conditioning")
    return [
        {
            "dag": pipeline.name,
            **a.as_row(),
            "p_oc": b.result.p_value,
            "cpu_seconds_oc": b.cpu_seconds,
            "outliers": str(kedro_state["outliers"]),
        }
        for a, b in zip(par, oc, strict=True)
    ]


def cv_test(pipelines: dict[str, DeclaredPipeline], cv: CvParams, seed: int) -> CvSelectiveTest:
    """The selective test of the pipeline chosen by K-fold CV among the candidates of ``cv`` (Sec. 5)."""
    engines = {name: p.engine for name, p in pipelines.items()}
    base = {name: p.params for name, p in pipelines.items()}
    return CvSelectiveTest(
        expand_candidates(engines, cv.candidate_grids(), base),
        folds=cv.folds,
        seed=seed,
        max_candidates=cv.max_candidates,
        condition_on=cv.condition_on,
    )


def cv_demo(
    test: CvSelectiveTest, X: np.ndarray, y_raw: np.ndarray, cv: CvParams, inf: InferenceParams
) -> tuple[pd.DataFrame, dict]:
    """The pipeline CV chooses on the demo data, its CV errors, and its selective tests.

    The p-values condition on the CV choice as well as on the winner's (M, O) (Sec. 5).
    """
    choice = test.tune(X, y_raw)
    winner = test.candidates[choice.winner]
    par = test.test(X, y_raw, sigma=inf.sigma, **inf.search())
    oc = test.test(X, y_raw, sigma=inf.sigma, mode="over_conditioning")
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
        "folds": cv.folds,
        "seed": test.seed,
        "condition_on": cv.condition_on,
        "candidates": [{"name": c.name, "dag": c.dag, "params": c.params} for c in test.candidates],
        "cv_error": {test.candidates[k].name: v for k, v in choice.errors.items()},
        "chosen": winner.name,
        "selection": {k: choice.model[k] for k in ("features", "outliers", "imputation")},
    }
    return pd.DataFrame(rows), report


def one_test(
    engine: DagSelectiveTest,
    X: np.ndarray,
    y: np.ndarray,
    params: dict,
    position: int,
    sigma: float | None,
    search: dict[str, Any],
) -> dict[str, Any]:
    """Parametric and over-conditioning tests of the feature at ``position`` in M (one row)."""
    par = engine.test(X, y, params, sigma=sigma, features=[position], **search)[0]
    oc = engine.test(X, y, params, sigma=sigma, features=[position], mode="over_conditioning")[0]
    extra = {"candidate": par.result.extra["cv_candidate"]} if par.result.extra else {}
    return {
        **extra,
        "feature": par.feature,
        "p_parametric": par.result.p_value,
        "p_oc": oc.result.p_value,
        "p_naive": par.result.naive_p,
        "inf_p": par.result.inf_p,
        "sup_p": par.result.sup_p,
        "search_count": par.result.search_count,
        "n_intervals": len(par.result.truncation),
        "cpu_seconds": par.cpu_seconds,
        "cpu_seconds_oc": oc.cpu_seconds,
    }


def replicate_tests(
    engine: DagSelectiveTest,
    params: dict,
    draw,
    replications: int,
    seed: int,
    sigma: float | None,
    search: dict[str, Any],
    label: str,
    require_true: bool = False,
    max_attempts_factor: int = 20,
) -> tuple[pd.DataFrame, int]:
    """R datasets from ``draw(rng) -> (X, y, truth)``; one random selected feature tested on each.

    Datasets with an empty selection are redrawn (the paper tests only when something is selected);
    with ``require_true`` (power runs) only datasets whose drawn feature is truly active count.
    Failed tests are counted and logged, never silently dropped; returns (rows, n_failures).
    Dataset ``attempt`` is drawn from ``default_rng([seed, attempt])``, so a run is reproducible.
    """
    rows, failures, attempt = [], 0, 0
    budget = max_attempts_factor * replications
    for _ in progress(range(replications), desc=label, logger=logger):
        row = None
        while row is None and attempt < budget:
            rng = np.random.default_rng([seed, attempt])
            attempt += 1
            X, y, truth = draw(rng)
            state = engine.run(X, y, params)
            if not state["features"]:
                continue
            position = int(rng.integers(len(state["features"])))
            if require_true and state["features"][position] not in truth["support"]:
                continue
            try:
                row = one_test(engine, X, y, params, position, sigma, search)
            except (SearchError, LassoEventError, np.linalg.LinAlgError) as exc:
                failures += 1
                logger.warning("%s: test failed on attempt %d: %s", label, attempt, exc)
        if row is None:
            logger.warning("%s: stopped after %d attempts with %d tests", label, attempt, len(rows))
            break
        row.update(
            {"replicate": len(rows), "attempt": attempt - 1, "n_outliers": len(state["outliers"])}
        )
        rows.append(row)
    return pd.DataFrame(rows), failures


def exactness(
    pipeline: DeclaredPipeline, draw: Draw, datasets: int, seed: int, inf: InferenceParams
) -> dict:
    """Acceptance check 3: precision-mode p vs exhaustive-mode p on the first null datasets."""
    engine, params = pipeline.engine, pipeline.params
    diffs, inside, seen, attempt = [], [], 0, 0
    while seen < datasets and attempt < 20 * max(1, datasets):
        rng = np.random.default_rng([seed, attempt])
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


def null_calibration(
    pipelines: dict[str, DeclaredPipeline],
    cal: CalibrationParams,
    inf: InferenceParams,
    seed: int,
) -> tuple[pd.DataFrame, dict]:
    """Null calibration (beta = 0): FPR of parametric / OC / naive p-values, KS uniformity, exactness."""
    draw = synthetic_draw(cal.n, cal.p, cal.missing_rate)
    tables, report = [], {"alpha": inf.alpha, "variants": {}, "failures": {}}
    runs = [(v, inf.sigma if inf.sigma else None, "known", cal.replications) for v in cal.variants]
    runs += [
        (v, None, "estimated", cal.estimated_sigma_replications)
        for v in cal.estimated_sigma_variants
    ]
    for variant, sigma, sigma_mode, reps in runs:
        if reps == 0:
            continue
        label = f"null {variant} sigma={sigma_mode}"
        pipe = pipelines[variant]
        table, failures = replicate_tests(
            pipe.engine, pipe.params, draw, reps, seed, sigma, inf.search(), label
        )
        table["dag"], table["sigma_mode"] = variant, sigma_mode
        tables.append(table)
        report["variants"][f"{variant}/{sigma_mode}"] = rejection_summary(table, inf.alpha)
        report["failures"][f"{variant}/{sigma_mode}"] = failures
    report["exactness"] = exactness(
        pipelines[cal.variants[0]], draw, cal.exactness_datasets, seed, inf
    )
    return pd.concat(tables, ignore_index=True), report


def power_table(
    pipelines: dict[str, DeclaredPipeline], pw: PowerParams, inf: InferenceParams, seed: int
) -> pd.DataFrame:
    """Power: rejection rate among tests of truly active features, per DAG and delta."""
    rows = []
    for variant in pw.variants:
        pipe = pipelines[variant]
        for delta in pw.deltas:
            table, failures = replicate_tests(
                pipe.engine,
                pipe.params,
                synthetic_draw(pw.n, pw.p, pw.missing_rate, delta),
                pw.replications,
                seed,
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


def real_table(
    pipelines: dict[str, DeclaredPipeline],
    real: RealParams,
    inf: InferenceParams,
    seed: int,
    jitter_seed: int,
) -> pd.DataFrame:
    """Real data: rejection rates of parametric vs OC on random diabetes subsamples (sigma = 1 plug-in)."""
    draw = diabetes_subsamples(real.n, real.missing_rate, jitter_seed)
    out = []
    for variant in real.variants:
        pipe = pipelines[variant]
        table, failures = replicate_tests(
            pipe.engine,
            pipe.params,
            draw,
            real.replications,
            seed,
            1.0,
            inf.search(),
            f"real {real.dataset} {variant}",
        )
        out.append(
            {
                "dataset": real.dataset,
                "n": real.n,
                "dag": variant,
                **rejection_summary(table, inf.alpha),
                "failures": failures,
            }
        )
    return pd.DataFrame(out)


def cv_replications(
    cv_test: CvSelectiveTest,
    cv: CvParams,
    cal: CalibrationParams,
    pw: PowerParams,
    real: RealParams,
    inf: InferenceParams,
    seeds: dict[str, int],
) -> tuple[pd.DataFrame, dict]:
    """Null calibration, power and real-data rejection of the CV-chosen pipeline (tests with CV inside).

    Same data generators, sizes and seeds (``seeds[experiment]``) as the fixed-DAG experiments; one
    selected feature per dataset; ``seeds["jitter"]`` is the diabetes jitter.
    """
    runs = [
        (
            "null",
            synthetic_draw(cal.n, cal.p, cal.missing_rate),
            cv.null_replications,
            inf.sigma,
            False,
        ),
        (
            "power",
            synthetic_draw(pw.n, pw.p, pw.missing_rate, cv.power_delta),
            cv.power_replications,
            inf.sigma,
            True,
        ),
        (
            "real",
            diabetes_subsamples(real.n, real.missing_rate, seeds["jitter"]),
            cv.real_replications,
            1.0,
            False,
        ),
    ]
    tables, report = (
        [],
        {"enabled": True, "n_candidates": len(cv_test.candidates), "alpha": inf.alpha},
    )
    for name, draw, reps, sigma, require_true in runs:
        if reps == 0:
            report[name] = {"n_tests": 0}
            continue
        table, failures = replicate_tests(
            cv_test,
            {},
            draw,
            reps,
            seeds[name],
            sigma,
            inf.search(),
            f"cv {name}",
            require_true=require_true,
        )
        table["experiment"] = name
        tables.append(table)
        report[name] = {**rejection_summary(table, inf.alpha), "failures": failures}
    report["power"]["delta"] = cv.power_delta
    return pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(), report
