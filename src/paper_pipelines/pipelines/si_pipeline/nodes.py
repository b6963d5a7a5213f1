"""Thin Kedro node functions of si_pipeline: typed parameter blocks in, the method called, data out.

Each declared DAG enters the downstream nodes as a :class:`DeclaredPipeline` (its selective test bound to
its checked hyperparameters), passed by keyword under the DAG's name; its Kedro-computed (M, O) comes as
``<dag>_state``. Seeds of the experiments are sub-streams of the one ``si_pipeline.seed``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.params import Seed
from paper_pipelines.common.runtime import substream, substream_seed
from paper_pipelines.common.tables import standardise

from . import experiments, figures, report
from .data import demo_data, mask_missing_responses
from .engine import DagSelectiveTest, DeclaredPipeline
from .parameters import (
    CalibrationParams,
    CvParams,
    DagParams,
    DataParams,
    InferenceParams,
    PowerParams,
    RealParams,
)

logger = logging.getLogger(__name__)


def _seeds(seed: int) -> dict[str, int]:
    """Integer seeds of the replicated experiments; the CV runs reuse the fixed-DAG runs' datasets."""
    return {
        "null": substream_seed(seed, "calibration"),
        "power": substream_seed(seed, "power"),
        "real": substream_seed(seed, "real"),
        "jitter": substream_seed(seed, "diabetes_jitter"),
    }


def _pipelines(inputs: dict[str, Any]) -> dict[str, DeclaredPipeline]:
    return {k: v for k, v in inputs.items() if isinstance(v, DeclaredPipeline)}


# ------------------------------------------------------------------------------------ ingest
def ingest_data(data: DataParams, seed: Seed) -> tuple[pd.DataFrame, dict]:
    """Ingest: the demo dataset (synthetic with outliers, or a diabetes subsample), fully observed."""
    X, y, truth = demo_data(
        substream(seed, "data"),
        data.source,
        data.n,
        data.p,
        data.delta,
        data.n_outliers,
        data.outlier_shift,
        _seeds(seed)["jitter"],
    )
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame["y"] = y
    logger.info("ingested %s data: n=%d, p=%d", data.source, X.shape[0], X.shape[1])
    return frame, truth


# ------------------------------------------------------------------------------------ preprocess
def preprocess(
    raw_data: pd.DataFrame, data: DataParams, seed: Seed
) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """Preprocess: standardise X and set a Binomial(n, rate) random subset of y to NaN."""
    X = raw_data.drop(columns="y").to_numpy(dtype=float)
    if data.standardise:
        X, _, _ = standardise(X)
    y, n_missing = mask_missing_responses(
        raw_data["y"].to_numpy(dtype=float), data.missing_rate, substream(seed, "missing")
    )
    DagSelectiveTest.check_data(X, y)
    snapshot = pd.DataFrame(X, columns=list(raw_data.columns[:-1]))
    snapshot["y"] = y
    logger.info("analysed data: %d rows, %d missing responses", len(y), n_missing)
    return X, y, snapshot


# ------------------------------------------------------------------------------------ select
def pipeline_declarer(
    name: str, engine: DagSelectiveTest
) -> Callable[[DagParams], DeclaredPipeline]:
    """The node function that binds DAG ``name`` (its engine) to its hyperparameter block."""

    def declare_pipeline(hyperparameters: DagParams) -> DeclaredPipeline:
        """Select: the declared DAG's selective test with its checked hyperparameters (Sec. 5)."""
        return DeclaredPipeline(name, engine, engine.check_params(hyperparameters))

    # typed by the DAG's own block model, so Kedro checks exactly the keys this DAG's nodes read
    declare_pipeline.__annotations__ = {
        "hyperparameters": engine.params_model,
        "return": DeclaredPipeline,
    }
    return declare_pipeline


def describe_dags(**dags: Any) -> dict:
    """Provenance: each declared DAG (nodes, components, hyperparameters, edges) and its (M, O)."""
    return {
        name: {**pipe.describe(), "selection": dags[f"{name}_state"]}
        for name, pipe in _pipelines(dags).items()
    }


def selective_test(
    X: np.ndarray, y_raw: np.ndarray, inference: InferenceParams, **dags: Any
) -> pd.DataFrame:
    """Test every selected feature of every DAG (parametric, OC and naive p-values)."""
    rows = []
    for name, pipe in _pipelines(dags).items():
        state = dags[f"{name}_state"]
        rows += experiments.demo_tests(pipe, X, y_raw, state, inference)
        logger.info("DAG %s: M=%s, |O|=%d tested", name, state["features"], len(state["outliers"]))
    return pd.DataFrame(rows)


def cv_selective_test(
    X: np.ndarray,
    y_raw: np.ndarray,
    cv: CvParams,
    inference: InferenceParams,
    seed: Seed,
    **dags: DeclaredPipeline,
) -> tuple[pd.DataFrame, dict]:
    """The pipeline chosen by K-fold CV on the demo data, its CV errors, and its selective tests."""
    if not (cv.enabled and cv.demo):
        return pd.DataFrame(), {"enabled": False}
    test = experiments.cv_test(dags, cv, substream_seed(seed, "cv"))
    return experiments.cv_demo(test, X, y_raw, cv, inference)


# ------------------------------------------------------------------------------------ evaluate
def calibrate_null(
    calibration: CalibrationParams, inference: InferenceParams, seed: Seed, **dags: DeclaredPipeline
) -> tuple[pd.DataFrame, dict]:
    """Null calibration (beta = 0): FPR of parametric / OC / naive p-values, KS uniformity, exactness."""
    return experiments.null_calibration(dags, calibration, inference, _seeds(seed)["null"])


def power_curve(
    power: PowerParams, inference: InferenceParams, seed: Seed, **dags: DeclaredPipeline
) -> pd.DataFrame:
    """Power: rejection rate among tests of truly active features, per DAG and delta."""
    return experiments.power_table(dags, power, inference, _seeds(seed)["power"])


def real_data_eval(
    real: RealParams, inference: InferenceParams, seed: Seed, **dags: DeclaredPipeline
) -> pd.DataFrame:
    """Real data: rejection rates of parametric vs OC on random diabetes subsamples (sigma = 1)."""
    seeds = _seeds(seed)
    return experiments.real_table(dags, real, inference, seeds["real"], seeds["jitter"])


def cv_experiments(
    cv: CvParams,
    calibration: CalibrationParams,
    power: PowerParams,
    real: RealParams,
    inference: InferenceParams,
    seed: Seed,
    **dags: DeclaredPipeline,
) -> tuple[pd.DataFrame, dict]:
    """Null calibration, power and real-data rejection of the CV-chosen pipeline (CV inside the test)."""
    if not cv.enabled:
        return pd.DataFrame(), {"enabled": False}
    test = experiments.cv_test(dags, cv, substream_seed(seed, "cv"))
    return experiments.cv_replications(test, cv, calibration, power, real, inference, _seeds(seed))


def metrics_summary(
    null_pvalues: pd.DataFrame,
    calibration: dict,
    power: pd.DataFrame,
    real: pd.DataFrame,
    cv: dict,
) -> dict:
    """Evaluate: the metrics contract (report.METRICS) and the per-DAG numbers."""
    metrics = report.metrics_dict(null_pvalues, calibration, power, real, cv)
    logger.info(
        "null FPR parametric %.3f, OC %.3f, naive %.3f; power %.2f vs %.2f",
        metrics["null_fpr_parametric"],
        metrics["null_fpr_oc"],
        metrics["null_fpr_naive"],
        metrics["power_parametric"],
        metrics["power_oc"],
    )
    return metrics


def check_claims(metrics: dict) -> pd.DataFrame:
    """Evaluate: each claim of the paper (report.CLAIMS) with our value, the paper's, and whether it holds."""
    return evaluate_claims(report.CLAIMS, metrics, "si_pipeline")


def method_results(
    null_pvalues: pd.DataFrame,
    calibration: dict,
    power: pd.DataFrame,
    real: pd.DataFrame,
    cv: dict,
) -> pd.DataFrame:
    """Evaluate: the results table, one row per method (parametric, over_conditioning, naive)."""
    return report.method_rows(null_pvalues, calibration, power, real, cv)


def null_qq_plot(null_pvalues: pd.DataFrame) -> Figure:
    """Evaluate: QQ plot of the null p-values (sigma known)."""
    return figures.null_qq_figure(null_pvalues)


def power_plot(power: pd.DataFrame, cv: dict, inference: InferenceParams) -> Figure:
    """Evaluate: power bars of the parametric and OC tests."""
    return figures.power_figure(power, cv, inference.alpha)
