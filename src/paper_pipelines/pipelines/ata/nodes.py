"""Thin node functions of the ata pipeline: typed parameter blocks in, the method called, data out.

Every random stream is a named sub-stream of the one ``ata.seed`` (see parameters.py).
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from torch import nn

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.params import RuntimeParams, Seed
from paper_pipelines.common.reporting import to_jsonable
from paper_pipelines.common.runtime import apply_runtime, seed_everything, substream, substream_seed
from paper_pipelines.pipelines.ata import figures, optimisation, report
from paper_pipelines.pipelines.ata import metrics as measures
from paper_pipelines.pipelines.ata.data import load_digits_frame, split_and_scale, worker_profiles
from paper_pipelines.pipelines.ata.parameters import (
    DataParams,
    EvaluationParams,
    OptimParams,
    SimParams,
    WorkersParams,
)
from paper_pipelines.pipelines.ata.simulator import simulate_policies

logger = logging.getLogger(__name__)


# ingest
def ingest_digits() -> pd.DataFrame:
    """sklearn digits as a table of 64 pixel columns and a label."""
    return load_digits_frame()


def make_worker_profiles(workers: WorkersParams, seed: Seed) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The worker instance: shift, spread, mu_i, alpha_i per worker; alpha, eta, a* of the instance."""
    w = workers
    profiles, meta = worker_profiles(
        w.n,
        w.B,
        w.family,
        w.scale,
        w.shift_factor,
        w.means,
        w.lognormal_sigma,
        w.pareto_shape,
        rng=substream(seed, "workers") if w.shuffle_ids else None,
    )
    logger.info(
        "Worker instance: n=%d B=%d alpha=%.3f eta=%.3f", w.n, w.B, meta["alpha"], meta["eta"]
    )
    return profiles, to_jsonable(meta)


# preprocess
def preprocess_digits(digits: pd.DataFrame, data: DataParams, seed: Seed) -> dict[str, np.ndarray]:
    """Stratified train/holdout split, standardised with the training statistics."""
    return split_and_scale(digits, data.holdout_frac, substream_seed(seed, "data"))


# train
def train_sgd_trajectory(
    train_data: dict[str, np.ndarray],
    optim: OptimParams,
    workers: WorkersParams,
    sim: SimParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[pd.DataFrame, nn.Module]:
    """The shared optimisation trajectory: sim.K Adam steps on workers.B task gradients each."""
    device = apply_runtime(runtime)
    optim_seed = substream_seed(seed, "optim")
    seed_everything(optim_seed)
    o = optim
    trajectory, model = optimisation.train_trajectory(
        train_data,
        o.model,
        o.hidden,
        o.lr,
        workers.B,
        sim.K,
        o.samples_per_task,
        o.log_every,
        seed=optim_seed,
        device=device,
    )
    logger.info(
        "Trajectory: train loss %.4f -> %.4f", *trajectory["train_loss"].iloc[[0, -1]].tolist()
    )
    return trajectory, model


def simulate_allocations(
    profiles: pd.DataFrame, meta: dict[str, Any], workers: WorkersParams, sim: SimParams, seed: Seed
) -> pd.DataFrame:
    """Every policy (ATA, ATA-Empirical and the baselines) on common random task times."""
    s = sim
    return simulate_policies(
        profiles["shift"].to_numpy(),
        profiles["spread"].to_numpy(),
        workers.family,
        B=workers.B,
        K=s.K,
        policies=list(s.policies),
        seed=substream_seed(seed, "sim"),
        alpha=meta["alpha"] if s.alpha == "auto" else float(s.alpha),
        eta=meta["eta"] if s.eta == "auto" else float(s.eta),
        conf_scale=s.conf_scale,
        tie_break=s.tie_break,
        uta_mode=s.uta_mode,
        block=s.block,
        lognormal_sigma=workers.lognormal_sigma,
        pareto_shape=workers.pareto_shape,
    )


# evaluate
def summarise_policies(round_log: pd.DataFrame, evaluation: EvaluationParams) -> pd.DataFrame:
    """Per policy: total runtime and worker time, ratios to FTA, proxy-ratio windows."""
    return measures.policy_summary(round_log, evaluation.regret_window)


def check_sandwich(
    profiles: pd.DataFrame,
    meta: dict[str, Any],
    workers: WorkersParams,
    evaluation: EvaluationParams,
    seed: Seed,
) -> dict[str, dict[str, Any]]:
    """Monte-Carlo l(a, mu) <= E[C(a)] <= (1 + 4 eta ln B) l(a, mu) for a*, even and random allocations."""
    eval_seed = substream_seed(seed, "evaluation")
    allocations = measures.sandwich_allocations(meta["a_star"], meta["n"], meta["B"], eval_seed)
    sandwich = measures.sandwich_check(
        allocations,
        profiles["shift"].to_numpy(),
        profiles["spread"].to_numpy(),
        workers.family,
        meta["eta"],
        meta["B"],
        evaluation.mc_draws,
        eval_seed,
        workers.lognormal_sigma,
        workers.pareto_shape,
    )
    return to_jsonable(sandwich)


def stamp_loss_curves(round_log: pd.DataFrame, trajectory: pd.DataFrame) -> pd.DataFrame:
    """The shared loss trajectory against each policy's cumulative runtime and worker time."""
    return measures.time_stamped_loss(round_log, trajectory)


def report_metrics(
    summary: pd.DataFrame,
    trajectory: pd.DataFrame,
    sandwich: dict[str, dict[str, Any]],
    meta: dict[str, Any],
    profiles: pd.DataFrame,
    sim: SimParams,
    evaluation: EvaluationParams,
) -> dict[str, Any]:
    """The metrics dict (contract keys in report.METRICS)."""
    out = report.build_metrics(
        summary,
        trajectory,
        sandwich,
        meta,
        float(profiles["mu"].mean()),
        sim.K,
        evaluation.regret_window,
    )
    logger.info("ATA metrics: %s", {k: v for k, v in out.items() if k.endswith(("fta", "ata_emp"))})
    return out


def report_results(summary: pd.DataFrame, trajectory: pd.DataFrame) -> pd.DataFrame:
    """The results table, one row per policy."""
    return report.build_results(summary, trajectory)


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim of the paper with our value, the paper's, and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "ata")


def plot_loss_vs_runtime(loss_curves: pd.DataFrame) -> Figure:
    """Training loss versus cumulative wall-clock runtime."""
    return figures.loss_vs_runtime(loss_curves)


def plot_loss_vs_worker_time(loss_curves: pd.DataFrame) -> Figure:
    """Training loss versus cumulative total worker time."""
    return figures.loss_vs_worker_time(loss_curves)


def plot_proxy_regret(round_log: pd.DataFrame) -> Figure:
    """Cumulative proxy regret of every allocation policy."""
    return figures.proxy_regret(round_log)
