"""cross_geometric nodes: typed blocks in, the method modules called, data out (no I/O, no plotting)."""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream

from . import figures, plan, report
from . import hyperbolicity as hyp
from . import snapshots as snaps
from .baselines import fit_and_score_gae
from .parameters import (
    DataParams,
    EvaluationParams,
    GeometryParams,
    LossParams,
    ModelParams,
    RuntimeParams,
    Seed,
    SnapshotParams,
    TrainParams,
)
from .training import train_and_score, train_jobs


# ---------------------------------------------------------------- ingest
def load_dynamic_graphs(
    htgn_snapshots: Any, data: DataParams, snapshots: SnapshotParams, seed: Seed
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every source's events (source, u, v, t) and node regions, checked (NaNs, empty test
    snapshots) before anything is written."""
    events, regions = plan.load_sources(data, htgn_snapshots, substream(seed, "data"))
    for source in data.sources:
        built = plan.snapshots_of(source, events, regions, snapshots.n_snapshots)
        snaps.check_test_snapshots(built, snapshots.test_length, source)
    return events, regions


# ---------------------------------------------------------------- preprocess
def build_snapshot_graphs(
    events: pd.DataFrame, regions: pd.DataFrame, data: DataParams, snapshots: SnapshotParams
) -> dict[str, Any]:
    """Per source: undirected snapshots on one relabelled node set, with the node regions."""
    return {s: plan.snapshots_of(s, events, regions, snapshots.n_snapshots) for s in data.sources}


def compute_tree_scores(graphs: dict[str, Any], geometry: GeometryParams, seed: Seed) -> dict:
    """[T, N] local hyperbolicity per source (the costly step; versioned for --from-nodes reuse)."""
    rng = substream(seed, "tree_scores")
    return {
        source: hyp.tree_scores(
            g["edges"],
            g["num_nodes"],
            geometry.score,
            geometry.k_hop,
            geometry.quadruples,
            rng,
            geometry.exact_diameter_max,
            desc=f"tree scores {source}",
        )  # fmt: skip
        for source, g in graphs.items()
    }


def make_evaluation_edges(
    graphs: dict[str, Any], snapshots: SnapshotParams, evaluation: EvaluationParams, seed: Seed
) -> dict[str, list[dict]]:
    """Per source and test snapshot: all links, new links and seeded 1:1 non-edges."""
    rng = substream(seed, "evaluation_edges")
    return {
        source: snaps.evaluation_edges(
            g, snapshots.test_length, evaluation.negatives_per_positive, rng
        )
        for source, g in graphs.items()
    }


# ---------------------------------------------------------------- train
def _train_mode(mode, graphs, tree, tests, model, geometry, loss, train, snapshots, runtime, seed):
    device = apply_runtime(runtime)
    settings = plan.settings(mode, model, geometry, loss, train)
    runs = plan.mode_runs(mode, list(graphs), train, seed)
    states, log, scored = train_and_score(
        graphs, tree, tests, settings, runs, snapshots.test_length, device, n_jobs=train.n_jobs
    )
    return states, pd.DataFrame(log), scored


def train_euclid(
    graphs: dict,
    tree: dict,
    tests: dict,
    model: ModelParams,
    geometry: GeometryParams,
    loss: LossParams,
    train: TrainParams,
    snapshots: SnapshotParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[dict, pd.DataFrame, list]:
    """The Euclidean model (GRUGCN-like): alpha = 0 everywhere."""
    blocks = (model, geometry, loss, train, snapshots, runtime, seed)
    return _train_mode("euclid", graphs, tree, tests, *blocks)


def train_hyperbolic(
    graphs: dict,
    tree: dict,
    tests: dict,
    model: ModelParams,
    geometry: GeometryParams,
    loss: LossParams,
    train: TrainParams,
    snapshots: SnapshotParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[dict, pd.DataFrame, list]:
    """The hyperbolic model (HTGN-like): alpha = 1 everywhere."""
    blocks = (model, geometry, loss, train, snapshots, runtime, seed)
    return _train_mode("hyperbolic", graphs, tree, tests, *blocks)


def train_hybrid_const(
    graphs: dict,
    tree: dict,
    tests: dict,
    model: ModelParams,
    geometry: GeometryParams,
    loss: LossParams,
    train: TrainParams,
    snapshots: SnapshotParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[dict, pd.DataFrame, list]:
    """Both views fused with a fixed gate (model.const_gate)."""
    blocks = (model, geometry, loss, train, snapshots, runtime, seed)
    return _train_mode("hybrid_const", graphs, tree, tests, *blocks)


def train_hybrid_gate(
    graphs: dict,
    tree: dict,
    tests: dict,
    model: ModelParams,
    geometry: GeometryParams,
    loss: LossParams,
    train: TrainParams,
    snapshots: SnapshotParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[dict, pd.DataFrame, list]:
    """CGDyn-R: the per-node gate on both views and the tree score."""
    blocks = (model, geometry, loss, train, snapshots, runtime, seed)
    return _train_mode("hybrid_gate", graphs, tree, tests, *blocks)


def train_ablations(
    graphs: dict,
    tree: dict,
    tests: dict,
    model: ModelParams,
    geometry: GeometryParams,
    loss: LossParams,
    train: TrainParams,
    snapshots: SnapshotParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[pd.DataFrame, list]:
    """CGDyn-R with one switch off at a time (tree score, attention, lambda_node, lambda_chg)."""
    device = apply_runtime(runtime)
    runs = plan.ablation_runs(train, seed)
    jobs = [
        (ablation, plan.settings("hybrid_gate", model, geometry, loss, train, ablation), run)
        for ablation in train.ablations
        for run in runs
    ]
    done = train_jobs(
        graphs, tree, tests, jobs, snapshots.test_length, device, train.n_jobs, "ablations"
    )
    logs = [row for r in done for row in r["log"]]
    return (
        pd.DataFrame(logs, columns=["method", "source", "seed", "epoch", "loss"]),
        [r["scored"] for r in done],
    )


def train_static_baseline(
    graphs: dict,
    tests: dict,
    model: ModelParams,
    train: TrainParams,
    snapshots: SnapshotParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[dict, list]:
    """Static GAE on the union of the training snapshots, per main source and seed."""
    device = apply_runtime(runtime)
    runs = plan.mode_runs("static_gae", list(graphs), train, seed)
    return fit_and_score_gae(
        graphs, tests, runs, model.dim, train.gae_epochs, train.lr, snapshots.test_length, device,
        train.n_jobs,
    )  # fmt: skip


# ---------------------------------------------------------------- evaluate
def evaluate_link_prediction(
    euclid: list,
    hyperbolic: list,
    hybrid_const: list,
    hybrid_gate: list,
    ablations: list,
    static_gae: list,
) -> pd.DataFrame:
    """AUC and AP, all links and new links, per method, source and seed (means over test snapshots)."""
    scored = [*euclid, *hyperbolic, *hybrid_const, *hybrid_gate, *ablations, *static_gae]
    return report.build_results(scored)


def analyse_geometry_gate(
    graphs: dict, tree: dict, hybrid_gate: list, snapshots: SnapshotParams
) -> pd.DataFrame:
    """Per node: its region, its mean tree score and its mean learned gate over the training span."""
    return report.gate_table(graphs, tree, hybrid_gate, snapshots.test_length)


def summarise(results: pd.DataFrame, gates: pd.DataFrame) -> dict[str, Any]:
    """The headline numbers (report.METRICS)."""
    return report.build_metrics(results, gates)


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim of the paper with our value, the paper's, and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "cross_geometric")


def plot_gate(gates: pd.DataFrame) -> Figure:
    """The learned gate against the tree score, coloured by the true region."""
    return figures.gate_figure(gates)


def plot_auc(results: pd.DataFrame) -> Figure:
    """AUC per method and source (mean and spread over seeds)."""
    return figures.auc_figure(results)
