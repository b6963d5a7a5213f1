"""Thin node functions of the ata pipeline: unpack parameters, call the method, return data."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from torch import nn

from paper_pipelines.common.params import validate_params
from paper_pipelines.common.runtime import resolve_device, seed_everything, set_torch_threads
from paper_pipelines.pipelines.ata import cost_model, evaluation, optimisation
from paper_pipelines.pipelines.ata.allocation import proxy_loss
from paper_pipelines.pipelines.ata.baselines import fta_allocation, uta_allocations
from paper_pipelines.pipelines.ata.params import (
    DataParams,
    EvalParams,
    OptimParams,
    SimParams,
    WorkersParams,
)
from paper_pipelines.pipelines.ata.simulator import simulate_policies

logger = logging.getLogger(__name__)


def check_parameters(
    workers: dict, data: dict, optim: dict, sim: dict, eval_: dict
) -> dict[str, Any]:
    """Validate every block before anything runs or is written; later nodes read this config."""
    config = {
        "workers": validate_params(WorkersParams, workers, "ata.workers"),
        "data": validate_params(DataParams, data, "ata.data"),
        "optim": validate_params(OptimParams, optim, "ata.optim"),
        "sim": validate_params(SimParams, sim, "ata.sim"),
        "eval": validate_params(EvalParams, eval_, "ata.eval"),
    }
    resolve_device(config["optim"].device)
    return config


def ingest_digits(config: dict[str, Any]) -> pd.DataFrame:
    """Ingest: sklearn digits as a table of 64 pixel columns and a label."""
    frame = optimisation.load_digits_frame()
    logger.info("Loaded digits: %d samples, %d features", len(frame), frame.shape[1] - 1)
    return frame


def make_worker_profiles(config: dict[str, Any]) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Ingest: per-worker shift, spread, mean mu_i and alpha_i; instance constants alpha, eta, a*."""
    w: WorkersParams = config["workers"]
    if w.means is not None:
        mu = np.asarray(w.means, dtype=float)
    else:
        mu = cost_model.mean_task_times(w.n, w.scale, w.shift_factor)
    speed_rank = np.arange(1, w.n + 1)
    if w.shuffle_ids:
        # Worker ids carry no information about speed (guards against index-order tie advantages).
        perm = np.random.default_rng([w.seed, 11]).permutation(w.n)
        mu, speed_rank = mu[perm], speed_rank[perm]
    shift, spread = cost_model.split_mean(mu, w.shift_factor)
    alpha_i = cost_model.sub_exponential_norms(spread, w.family, w.lognormal_sigma, w.pareto_shape)
    profiles = pd.DataFrame(
        {
            "worker": np.arange(w.n),
            "input_order": speed_rank,
            "shift": shift,
            "spread": spread,
            "mu": mu,
            "alpha": alpha_i,
        }
    )
    a_star = fta_allocation(mu, w.B)
    meta = {
        "n": w.n,
        "B": w.B,
        "family": w.family,
        "alpha": float(alpha_i.max()),
        "eta": float((alpha_i / mu).max()),
        "a_star": a_star.tolist(),
        "proxy_star": proxy_loss(a_star, mu),
        "sandwich_upper": float(1.0 + 4.0 * (alpha_i / mu).max() * np.log(w.B)),
    }
    logger.info(
        "Worker instance: n=%d B=%d alpha=%.3f eta=%.3f", w.n, w.B, meta["alpha"], meta["eta"]
    )
    return profiles, meta


def preprocess_digits(digits: pd.DataFrame, config: dict[str, Any]) -> dict[str, np.ndarray]:
    """Preprocess: stratified split and standardisation."""
    d: DataParams = config["data"]
    return optimisation.split_and_scale(digits, d.holdout_frac, d.seed)


def train_sgd_trajectory(
    train_data: dict[str, np.ndarray], config: dict[str, Any]
) -> tuple[pd.DataFrame, nn.Module]:
    """Train: the shared optimisation trajectory (K Adam steps on B task gradients each)."""
    o: OptimParams = config["optim"]
    set_torch_threads(o.torch_threads)
    seed_everything(o.seed)
    trajectory, model = optimisation.train_trajectory(
        train_data,
        model_kind=o.model,
        hidden=o.hidden,
        lr=o.lr,
        B=config["workers"].B,
        K=config["sim"].K,
        samples_per_task=o.samples_per_task,
        log_every=o.log_every,
        seed=o.seed,
        device=resolve_device(o.device),
    )
    logger.info(
        "Trajectory: train loss %.4f -> %.4f over %d steps",
        trajectory["train_loss"].iloc[0],
        trajectory["train_loss"].iloc[-1],
        int(trajectory["k"].iloc[-1]),
    )
    return trajectory, model


def _width(value: float | str, auto: float) -> float:
    return auto if value == "auto" else float(value)


def simulate_allocations(
    profiles: pd.DataFrame, meta: dict[str, Any], config: dict[str, Any]
) -> pd.DataFrame:
    """Train: every policy (ATA, ATA-Empirical and the baselines) on common random task times."""
    w: WorkersParams = config["workers"]
    s: SimParams = config["sim"]
    return simulate_policies(
        profiles["shift"].to_numpy(),
        profiles["spread"].to_numpy(),
        w.family,
        B=w.B,
        K=s.K,
        policies=list(s.policies),
        seed=s.seed,
        alpha=_width(s.alpha, meta["alpha"]),
        eta=_width(s.eta, meta["eta"]),
        conf_scale=s.conf_scale,
        tie_break=s.tie_break,
        uta_mode=s.uta_mode,
        block=s.block,
        lognormal_sigma=w.lognormal_sigma,
        pareto_shape=w.pareto_shape,
    )


def evaluate(
    round_log: pd.DataFrame,
    trajectory: pd.DataFrame,
    profiles: pd.DataFrame,
    meta: dict[str, Any],
    config: dict[str, Any],
) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame, Figure, Figure, Figure]:
    """Evaluate: metrics (contract keys first), results table, loss curves and the three figures."""
    w: WorkersParams = config["workers"]
    e: EvalParams = config["eval"]
    table = evaluation.policy_summary(round_log, e.regret_window)
    shift, spread = profiles["shift"].to_numpy(), profiles["spread"].to_numpy()
    mu = profiles["mu"].to_numpy()
    rng = np.random.default_rng([e.seed, 3])
    allocations = {
        "a_star": np.asarray(meta["a_star"]),
        "uniform": uta_allocations(w.n, w.B, 1, rng, "even")[0],
        "random": uta_allocations(w.n, w.B, 1, rng, "random")[0],
    }
    sandwich = evaluation.sandwich_check(
        allocations,
        shift,
        spread,
        w.family,
        meta["eta"],
        w.B,
        e.mc_draws,
        e.seed,
        w.lognormal_sigma,
        w.pareto_shape,
    )
    losses = trajectory["train_loss"].to_numpy()
    by_policy = table.set_index("policy")

    def window(policy: str, column: str) -> float | None:
        return float(by_policy.loc[policy, column]) if policy in by_policy.index else None

    metrics: dict[str, Any] = {
        "worker_time_ratio_gta_over_ata_emp": evaluation.ratio(
            table, "GTA", "ATA_EMP", "worker_time"
        ),
        "worker_time_ratio_uta_over_ata_emp": evaluation.ratio(
            table, "UTA", "ATA_EMP", "worker_time"
        ),
        "runtime_ratio_ata_emp_over_fta": evaluation.ratio(table, "ATA_EMP", "FTA", "runtime"),
        "runtime_ratio_ata_over_fta": evaluation.ratio(table, "ATA", "FTA", "runtime"),
        "proxy_ratio_last20_ata_emp": window("ATA_EMP", "proxy_ratio_last"),
        "final_loss_over_initial": float(losses[-1] / losses[0]),
        "worker_time_ratio_ata_over_fta": evaluation.ratio(table, "ATA", "FTA", "worker_time"),
        "worker_time_ratio_ata_emp_over_fta": evaluation.ratio(
            table, "ATA_EMP", "FTA", "worker_time"
        ),
        "worker_time_ratio_gta_over_fta": evaluation.ratio(table, "GTA", "FTA", "worker_time"),
        "worker_time_ratio_uta_over_fta": evaluation.ratio(table, "UTA", "FTA", "worker_time"),
        "runtime_ratio_gta_over_fta": evaluation.ratio(table, "GTA", "FTA", "runtime"),
        "runtime_ratio_uta_over_fta": evaluation.ratio(table, "UTA", "FTA", "runtime"),
        "proxy_ratio_first20_ata_emp": window("ATA_EMP", "proxy_ratio_first"),
        "proxy_ratio_first20_ata": window("ATA", "proxy_ratio_first"),
        "proxy_ratio_last20_ata": window("ATA", "proxy_ratio_last"),
        "frac_optimal_last20_ata_emp": window("ATA_EMP", "frac_optimal_last"),
        "frac_optimal_last20_ata": window("ATA", "frac_optimal_last"),
        "regret_window": e.regret_window,
        "initial_train_loss": float(losses[0]),
        "final_train_loss": float(losses[-1]),
        "final_holdout_acc": float(trajectory["holdout_acc"].iloc[-1]),
        "sandwich": sandwich,
        "sandwich_holds": all(v["holds"] for v in sandwich.values()),
        "instance": {
            "n": w.n,
            "B": w.B,
            "K": int(round_log["k"].max()),
            "family": w.family,
            "alpha": meta["alpha"],
            "eta": meta["eta"],
            "proxy_star": meta["proxy_star"],
            "mean_mu": float(mu.mean()),
        },
    }
    table["final_train_loss"] = float(losses[-1])
    stamped = evaluation.time_stamped_loss(round_log, trajectory)
    figures = (
        evaluation.loss_plot(stamped, "runtime", "cumulative wall-clock runtime"),
        evaluation.loss_plot(stamped, "worker_time", "cumulative total worker time"),
        evaluation.regret_plot(round_log),
    )
    logger.info(
        "ATA metrics: %s", {k: v for k, v in metrics.items() if k.endswith(("fta", "ata_emp"))}
    )
    return (metrics, table, stamped, *figures)
