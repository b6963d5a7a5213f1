"""leaf_matching nodes: typed blocks in, the method modules called, data out (no I/O, no plotting here)."""

from __future__ import annotations

import logging

import pandas as pd
import torch
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream

from . import figures, report, study
from .data import load_graph
from .parameters import (
    BaselineParams,
    DataParams,
    EvaluationParams,
    ModelParams,
    RuntimeParams,
    Seed,
    SplitParams,
    TuningParams,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_graphs(
    data: DataParams, split: SplitParams, seed: Seed, user_edges: pd.DataFrame | None
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Raw edges of the hierarchy study's graph and of the real graph, checked to have links to observe."""
    out = []
    for key in study.STUDIES:
        spec = getattr(data, key)
        edges = load_graph(spec.source, spec, substream(seed, "data", key), user_edges)
        study.check_graph(edges, key, getattr(split, f"{key}_mu"))
        logger.info("%s graph (%s): %d raw edges", key, spec.source, len(edges))
        out.append(edges)
    return out[0], out[1]


def generate_scaling_graphs(data: DataParams, seed: Seed) -> pd.DataFrame:
    """Erdos-Renyi edges (n_nodes, src, dst) of the scalability study, one graph per size."""
    return study.scaling_graphs(data.scaling, seed)


# ---------------------------------------------------------------- preprocess
def split_observed_links(
    hierarchy_edges: pd.DataFrame, real_edges: pd.DataFrame, split: SplitParams, seed: Seed
) -> dict:
    """Observed (first mu of the shuffled edges) / test split per study and mu, plus validation carve-outs."""
    return study.make_splits({"hierarchy": hierarchy_edges, "real": real_edges}, split, seed)


# ---------------------------------------------------------------- train
def train_leaf_matching(
    link_splits: dict, model: ModelParams, seed: Seed, runtime: RuntimeParams
) -> tuple[dict, pd.DataFrame]:
    """Leaf matching by greedy decentralised search at every T, on every split; per-epoch log."""
    device = apply_runtime(runtime)
    return study.train_leaf_matching(link_splits, model, seed, device)


def tune_link_model(
    link_splits: dict,
    model: ModelParams,
    tuning: TuningParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> tuple[pd.DataFrame, dict]:
    """(alpha, gamma) selected on the validation carve-out, then refit on all observed links."""
    device = apply_runtime(runtime)
    return study.tune_link_model(link_splits, model, tuning, seed, device)


def train_baselines(
    link_splits: dict,
    baselines: BaselineParams,
    model: ModelParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> dict:
    """Every baseline's scores on the same test pairs (other spaces share leaf matching's likelihood)."""
    apply_runtime(runtime)
    return study.train_baselines(link_splits, baselines, model, seed)


def measure_scaling(
    scaling_graphs: pd.DataFrame,
    split: SplitParams,
    model: ModelParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    """Seconds per epoch against the number of observed edges on Erdos-Renyi graphs."""
    device = apply_runtime(runtime)
    return study.measure_scaling(scaling_graphs, split.scaling_mu, model.scaling, seed, device)


# ---------------------------------------------------------------- evaluate
def evaluate_link_prediction(
    link_splits: dict,
    leaf_coordinates: dict,
    tuned_coordinates: dict,
    baseline_scores: dict,
    evaluation: EvaluationParams,
) -> pd.DataFrame:
    """ROC-AUC, AP, F1, Hits@K, MRR of every method on every split (all test positives vs negatives)."""
    torch.set_num_threads(1)
    fits = {**leaf_coordinates, **tuned_coordinates}
    return study.evaluate(link_splits, fits, baseline_scores, evaluation.hits_k)


def summarise_metrics(
    link_metrics: pd.DataFrame,
    tuning: pd.DataFrame,
    scaling: pd.DataFrame,
    model: ModelParams,
    evaluation: EvaluationParams,
) -> dict:
    """The metrics contract and the numbers behind every claim."""
    return report.build_metrics(link_metrics, tuning, scaling, model, evaluation)


def tabulate_results(link_metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per method, study and mu."""
    return report.build_results(link_metrics)


def check_claims(metrics: dict) -> pd.DataFrame:
    """Each claim with our value, the paper's, and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "leaf_matching")


def plot_data_efficiency(link_metrics: pd.DataFrame) -> Figure:
    return figures.data_efficiency_figure(link_metrics)


def plot_scaling(scaling: pd.DataFrame) -> Figure:
    return figures.scaling_figure(scaling)
