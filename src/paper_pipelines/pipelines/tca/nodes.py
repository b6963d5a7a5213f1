"""tca nodes: typed blocks in, the method called, data out (no I/O, no plotting, no per-domain loops)."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, seed_everything
from paper_pipelines.pipelines.tca import adaptation, data, digits_c, figures, report, source_model
from paper_pipelines.pipelines.tca.data import CifarCFolder
from paper_pipelines.pipelines.tca.parameters import (
    DataParams,
    EvaluationParams,
    LinearTCAParams,
    RealDataParams,
    RuntimeParams,
    Seed,
    SourceParams,
    TTAParams,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_source_data(
    cifar_c_folder: CifarCFolder | None,
    data_params: DataParams,
    real_data: RealDataParams,
    seed: Seed,
) -> dict[str, Any]:
    """sklearn digits at image_size, stratified source (train) / target-content (test) split; at paper
    scale, the manifest of the user's CIFAR-10-C domains instead (no source split)."""
    if real_data.enabled:
        folder = data.require_input(cifar_c_folder, "tca.cifar_c_folder", "CIFAR-10-C folder")
        manifest = folder.manifest(
            list(data_params.corruptions),
            list(data_params.severities),
            real_data.max_per_domain,
            seed,
        )
        return {"kind": "real", "domains": manifest}
    images, labels = data.load_digits_images(data_params.image_size)
    train_idx, test_idx = data.stratified_split(labels, data_params.test_frac, seed)
    logger.info(
        "digits: %d source (train) and %d target (test) images", len(train_idx), len(test_idx)
    )
    return {
        "kind": "digits",
        "X_train": digits_c.to_uint8(images[train_idx]),
        "y_train": labels[train_idx],
        "X_test": digits_c.to_uint8(images[test_idx]),
        "y_test": labels[test_idx],
    }


# ---------------------------------------------------------------- preprocess
def make_corrupted_sets(
    source_splits: dict[str, Any], data_params: DataParams, seed: Seed
) -> dict[str, Any]:
    """Digits-C domains (corruption x severity) as uint8 images, or the CIFAR-10-C manifest as listed."""
    if source_splits["kind"] == "real":
        return {"kind": "real", "domains": source_splits["domains"]}
    clean = source_splits["X_test"].astype("float32") / 255.0
    domains = digits_c.make_domains(
        clean, list(data_params.corruptions), list(data_params.severities), seed
    )
    return {"kind": "digits", "domains": domains, "labels": source_splits["y_test"]}


# ---------------------------------------------------------------- train
def train_source_model(
    source_splits: dict[str, Any],
    source_checkpoint: dict[str, Any] | None,
    source: SourceParams,
    real_data: RealDataParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The Digits-C source CNN (or the user's ResNet checkpoint): (model record, training log)."""
    apply_runtime(runtime)
    seed_everything(seed)  # the CNN's initial weights come from torch's global generator
    if real_data.enabled:
        state = data.require_input(source_checkpoint, "tca.source_checkpoint", "checkpoint")
        return source_model.record_from_checkpoint(
            state,
            arch=real_data.arch,
            num_classes=real_data.num_classes,
            input_size=real_data.input_size,
            mean=real_data.mean,
            std=real_data.std,
        )
    return source_model.train_digits_model(source_splits, seed=seed, **source.model_dump())


def collect_tta_outputs(
    source_record: dict[str, Any],
    corrupted_sets: dict[str, Any],
    tta: TTAParams,
    linear_tca: LinearTCAParams,
    evaluation: EvaluationParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> dict[str, Any]:
    """Every TTA baseline over every domain's stream: z, logits and time per sample set."""
    device = apply_runtime(runtime)
    seed_everything(seed)
    return adaptation.collect_all_domains(
        source_record,
        corrupted_sets,
        methods=list(tta.methods),
        batch_size=tta.batch_size,
        shuffle=tta.shuffle,
        tent_lr=tta.tent_lr,
        steps=tta.steps,
        t3a_filter_k=tta.t3a_filter_k,
        memory_probe=tta.memory_probe,
        probe_severity=evaluation.metric_severity,
        tca_step=adaptation.tca_kwargs(linear_tca, linear_tca.w_solver),
        device=device,
        seed=seed,
    )


def apply_linear_tca(
    tta_outputs: dict[str, Any],
    source_record: dict[str, Any],
    linear_tca: LinearTCAParams,
    runtime: RuntimeParams,
) -> dict[str, Any]:
    """LinearTCA (on Source) and LinearTCA+ (on BN/Tent/T3A) once per domain, weights untouched."""
    device = apply_runtime(runtime)
    extra = linear_tca.extra_solver
    solvers = [linear_tca.w_solver] + ([extra] if extra and extra != linear_tca.w_solver else [])
    return adaptation.tca_on_all_domains(
        tta_outputs,
        source_record,
        solvers=solvers,
        plug_into=list(linear_tca.plug_into),
        filter_k=linear_tca.filter_k,
        proportions=linear_tca.proportions,
        w_iters=linear_tca.w_iters,
        w_lr=linear_tca.w_lr,
        eig_eps=linear_tca.eig_eps,
        chunk=linear_tca.chunk,
        device=device,
    )


# ---------------------------------------------------------------- evaluate
def forgetting_check(
    source_record: dict[str, Any],
    tca_outputs: dict[str, Any],
    corrupted_sets: dict[str, Any],
    source_splits: dict[str, Any],
    tta: TTAParams,
    evaluation: EvaluationParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> dict[str, Any]:
    """Clean accuracy after LinearTCA (bit-identical weights) vs after continual Tent over all domains."""
    device = apply_runtime(runtime)
    seed_everything(seed)
    return adaptation.forgetting_record(
        source_record,
        tca_outputs,
        corrupted_sets,
        source_splits,
        enabled=evaluation.forgetting,
        severity=evaluation.metric_severity,
        batch_size=tta.batch_size,
        shuffle=tta.shuffle,
        tent_lr=tta.tent_lr,
        steps=tta.steps,
        device=device,
        seed=seed,
    )


def build_tables(
    tta_outputs: dict[str, Any],
    tca_outputs: dict[str, Any],
    linear_tca: LinearTCAParams,
    evaluation: EvaluationParams,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-domain per-method accuracy (and seconds), and a per-method cost table."""
    accuracy = report.accuracy_table(tta_outputs, tca_outputs)
    cost = report.cost_table(
        accuracy, tta_outputs.get("memory"), evaluation.metric_severity, linear_tca.w_solver
    )
    return accuracy, cost


def build_metrics(
    accuracy_table: pd.DataFrame,
    cost_table: pd.DataFrame,
    forgetting: dict[str, Any],
    training_log: dict[str, Any],
    tta_outputs: dict[str, Any],
    linear_tca: LinearTCAParams,
    evaluation: EvaluationParams,
) -> dict[str, Any]:
    """The metrics contract (report.METRICS) and the supporting numbers."""
    return report.metrics(
        accuracy_table,
        cost_table,
        forgetting,
        training_log,
        tta_outputs.get("memory"),
        evaluation.metric_severity,
        linear_tca.w_solver,
    )


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim of the paper with our values, the paper's and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "tca")


def build_results(
    accuracy_table: pd.DataFrame, cost_table: pd.DataFrame, evaluation: EvaluationParams
) -> pd.DataFrame:
    """One row per method: accuracy per severity, gain over its base method, cost."""
    return report.results_table(accuracy_table, cost_table, evaluation.metric_severity)


def plot_accuracy(accuracy_table: pd.DataFrame, evaluation: EvaluationParams) -> Figure:
    return figures.accuracy_per_corruption(accuracy_table, evaluation.metric_severity)


def plot_severity(accuracy_table: pd.DataFrame) -> Figure:
    return figures.accuracy_by_severity(accuracy_table)


def plot_cost(cost_table: pd.DataFrame) -> Figure:
    return figures.cost_per_method(cost_table)
