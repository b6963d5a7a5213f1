"""{{ cookiecutter.pipeline_name }} nodes: typed blocks in, the method called, data out (no I/O, no plotting)."""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream

from . import baselines, data, figures, method, report
from .parameters import DataParams, EvaluationParams, MethodParams, RuntimeParams, Seed


# ---------------------------------------------------------------- ingest
def generate_data(data_params: DataParams, seed: Seed) -> pd.DataFrame:
    """The raw table the paper's method reads."""
    return data.make_table(data_params.n, data_params.d, data_params.noise, substream(seed, "data"))


# ---------------------------------------------------------------- preprocess
def split_data(table: pd.DataFrame, data_params: DataParams, seed: Seed) -> dict[str, Any]:
    """Train/test split, standardised with the training statistics."""
    return data.split(table, data_params.test_frac, substream(seed, "split"))


# ---------------------------------------------------------------- train
def train_method(
    splits: dict[str, Any], method_params: MethodParams, runtime: RuntimeParams
) -> dict:
    apply_runtime(runtime)
    return {"coef": method.fit(splits["X_train"], splits["y_train"], method_params.ridge).tolist()}


def train_baselines(splits: dict[str, Any]) -> dict:
    return {"mean": baselines.fit_mean(splits["y_train"])}


# ---------------------------------------------------------------- evaluate
def evaluate_methods(
    splits: dict[str, Any], method_fit: dict, baseline_fits: dict, evaluation: EvaluationParams
) -> pd.DataFrame:
    """One row per method: the paper's method and every baseline on the same test split."""
    return report.results(splits, method_fit, baseline_fits, evaluation.metric)


def summarise(results: pd.DataFrame) -> dict[str, Any]:
    return report.metrics(results)


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim of the paper with our value, the paper's, and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "{{ cookiecutter.pipeline_name }}")


def plot_errors(results: pd.DataFrame) -> Figure:
    return figures.error_by_method(results)
