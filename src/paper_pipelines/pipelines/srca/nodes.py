"""Node functions of the srca pipeline: typed parameter blocks in, the method modules called, data out."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.params import RuntimeParams, Seed
from paper_pipelines.common.runtime import apply_runtime
from paper_pipelines.pipelines.srca import baselines, data, figures, metrics, report, srca
from paper_pipelines.pipelines.srca.data import Datasets
from paper_pipelines.pipelines.srca.parameters import (
    BaselineParams,
    DataParams,
    EvaluationParams,
    ModelParams,
    PreprocessParams,
)
from paper_pipelines.pipelines.srca.srca import SRCAModel

Embeddings = dict[str, dict[str, np.ndarray]]


# ---------------------------------------------------------------- ingest


def make_datasets(data_params: DataParams, seed: Seed, user_table: Any) -> Datasets:
    """Ingest: build every requested data set offline (generators, statsmodels CO2, sklearn tables),
    and the user's table when `user` is listed."""
    return data.make_datasets(data_params, seed, user_table)


# ---------------------------------------------------------------- preprocess


def prepare_datasets(raw: Datasets, preprocess: PreprocessParams, seed: Seed) -> Datasets:
    """Preprocess: check each table, standardise the listed ones, draw the 50/50 train/test split."""
    return data.prepare_datasets(raw, preprocess, seed)


# ---------------------------------------------------------------- train / select


def fit_srca(
    prepared: Datasets, model: ModelParams, runtime: RuntimeParams
) -> dict[str, SRCAModel]:
    """Train: SRCA for every data set and k, on all points and on the training half."""
    apply_runtime(runtime)  # one BLAS thread is fastest on a shared 2-core machine
    return srca.fit_srca_models(prepared, model)


def fit_baselines(
    prepared: Datasets, model: ModelParams, runtime: RuntimeParams
) -> dict[str, dict[str, Any]]:
    """Train: the baselines on the same fits as SRCA: PCA (scikit-learn) and spherelets (closed form)."""
    apply_runtime(runtime)
    return baselines.fit_baseline_models(prepared, model)


def fit_manifold_baselines(
    prepared: Datasets,
    baselines_params: BaselineParams,
    evaluation: EvaluationParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> Embeddings:
    """Train: nonlinear baselines of the co-ranking comparison (scikit-learn Isomap, LLE, t-SNE, MDS)."""
    apply_runtime(runtime)
    return baselines.fit_manifold_embeddings(prepared, baselines_params, evaluation, seed)


# ---------------------------------------------------------------- evaluate


def srca_embeddings(prepared: Datasets, srca_models: dict[str, SRCAModel]) -> Embeddings:
    """Evaluate: the low-dimensional SRCA representation of every data set (official `reduced_matrix`)."""
    return srca.srca_embeddings(prepared, srca_models)


def evaluate_reconstruction(
    prepared: Datasets, srca_models: dict[str, SRCAModel], baseline_models: dict
) -> pd.DataFrame:
    """Evaluate: reconstruction MSE per data set, k, method, in-sample (Table 4.1) and out-of-sample (H.1)."""
    return metrics.reconstruction_table(prepared, srca_models, baseline_models)


def evaluate_coranking(
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    baseline_models: dict,
    manifold: Embeddings,
    evaluation: EvaluationParams,
    seed: Seed,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Evaluate: co-ranking AUCs (original vs each method's output, as `Coranking.Rmd`) and R_NX curves."""
    return metrics.coranking_tables(
        prepared, srca_models, baseline_models, manifold, evaluation, seed
    )


def evaluate_phase(
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    baseline_models: dict,
    evaluation: EvaluationParams,
) -> pd.DataFrame:
    """Evaluate: recovery of the true cycle phase from the angle on the fitted circle (k = 1)."""
    return metrics.phase_table(prepared, srca_models, baseline_models, evaluation)


def summarise_metrics(
    mse_table: pd.DataFrame,
    coranking_table: pd.DataFrame,
    phase_table: pd.DataFrame,
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    evaluation: EvaluationParams,
) -> dict:
    """Evaluate: the metrics contract (report.METRICS) plus the other checks' numbers."""
    return report.build_metrics(
        mse_table, coranking_table, phase_table, prepared, srca_models, evaluation
    )


def check_claims(metrics: dict) -> pd.DataFrame:
    """Evaluate: each claim (report.CLAIMS) with our value, the paper's, and whether it holds."""
    return evaluate_claims(report.CLAIMS, metrics, "srca")


def results_table(
    mse_table: pd.DataFrame, coranking_table: pd.DataFrame, phase_table: pd.DataFrame
) -> pd.DataFrame:
    """Evaluate: one row per method (MSE per data set and k, co-ranking AUC, phase recovery)."""
    return report.build_results(mse_table, coranking_table, phase_table)


def plot_embeddings(
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    baseline_models: dict,
    evaluation: EvaluationParams,
    seed: Seed,
) -> Figure:
    """Figure: the embedded circle/sphere of SRCA against PCA's, for srca.evaluation.plot_datasets."""
    panels = figures.embedding_panels(prepared, srca_models, baseline_models, evaluation, seed)
    return figures.embedding_figure(panels)


def plot_mse(mse_table: pd.DataFrame) -> Figure:
    """Figure: reconstruction error against k per data set and method."""
    return figures.mse_figure(mse_table)


def plot_coranking(coranking_curves: pd.DataFrame) -> Figure:
    """Figure: co-ranking R_NX(K) curves."""
    return figures.coranking_figure(coranking_curves)
