"""The metrics contract, the claims, the capability and complexity tables, the metrics dict and the
results table (one row per agent, then one per resolver of the training study)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.claims import Claim
from paper_pipelines.common.reporting import check_metrics_contract, results_table

from .capabilities import bootstrap_ci
from .taskgraph import DIMENSIONS, LEVELS

# The metrics contract (keys in omnibench.metrics).
METRICS: tuple[str, ...] = (
    "verified_subtask_rate",
    "in_bin_rate",
    "coherence_oracle_random_order",
    "completion_random",
    "success_gap_easy_hard_noisy_oracle",
    "capability_profile_max_diff",
    "completion_gain_graph_over_chain",
)
SCORES = ("completion", "completion_code_compat", "coherence", "success", "subtask_recall", "steps")

# Spec checks 1, 2 and 4 gate; 5-7 are reported (the issue: not measured in the spec's work). The paper's
# per-agent numbers come from real MLLM agents and were not retrievable here; the only paper numbers
# we carry are those of its abstract (91 % human acceptance of synthesized tasks).
SPEC = "spec acceptance check"
CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="synthesis_cross_verification",
        statement="Cross-verification keeps >= 95 % of the candidate subtasks and catches >= 90 % of the "
        "injected synthesis faults; every kept subtask passes its gold replay and rejects every negative.",
        condition="verified_subtask_rate >= 0.95 and fault_catch_rate >= 0.9 "
        "and gold_replay_pass_rate == 1 and negative_rejection_rate == 1",
        source=f"{SPEC} 1; paper Sec. 3 (iterative synthesis with cross-verification)",
    ),
    Claim(
        id="complexity_is_controllable",
        statement="Every validated task has all five complexity measures in the requested bins and the "
        "gold execution completes >= 98 % of the composed tasks (machine acceptance; the paper's 91 % "
        "is a human study with no offline analogue).",
        condition="in_bin_rate == 1 and machine_acceptance >= 0.98",
        paper={"human_acceptance": 0.91},
        source=f"{SPEC} 2; abstract (91 % human acceptance rate)",
    ),
    Claim(
        id="graph_metrics_separate_agents",
        statement="oracle_contiguous scores completion 1 on every task and coherence 1 wherever coherence "
        "is defined (L_max >= 2); the random-order oracle completes every task with mean coherence "
        "<= 0.9 on multi-app tasks; the random agent's mean completion is <= 0.1.",
        condition="completion_oracle_contiguous_min == 1 and coherence_oracle_contiguous_min == 1 "
        "and completion_oracle_random_order_min == 1 and coherence_oracle_random_order <= 0.9 "
        "and completion_random <= 0.1",
        source=f"{SPEC} 4; paper Sec. 4 (completion / coherence)",
    ),
    Claim(
        id="success_falls_with_instruction_complexity",
        statement="Success on Hard-instruction (many-node) tasks is at least 0.15 below Easy ones for "
        "noisy_oracle (p = 0.05) and instruction_planner.",
        condition="success_gap_easy_hard_noisy_oracle >= 0.15 "
        "and success_gap_easy_hard_instruction_planner >= 0.15",
        source=f"{SPEC} 5; paper: agents degrade as graph complexity grows",
        gates=False,
    ),
    Claim(
        id="success_monotone_in_levels",
        statement="For noisy_oracle and instruction_planner mean success is Easy >= Medium >= Hard for "
        "nodes, edges and depth.",
        condition="monotone_noisy_oracle_nodes and monotone_noisy_oracle_edges "
        "and monotone_noisy_oracle_depth and monotone_instruction_planner_nodes "
        "and monotone_instruction_planner_edges and monotone_instruction_planner_depth",
        source=f"{SPEC} 5",
        gates=False,
    ),
    Claim(
        id="capability_profiles_differ",
        statement="All ten capability suites are non-empty (per_capability tasks each) and the "
        "per-capability completion of instruction_planner and noisy_oracle differ by >= 0.1 somewhere.",
        condition="min_suite_fill >= 1 and capability_profile_max_diff >= 0.1",
        source=f"{SPEC} 6; paper Sec. 5: capability profiles differ across agents",
        gates=False,
    ),
    Claim(
        id="graph_training_transfers",
        statement="The planner trained on graph-structured tasks beats the one trained on chains by "
        ">= 0.1 mean completion on held-out branched tasks of held-out app categories.",
        condition="completion_gain_graph_over_chain >= 0.1",
        source=f"{SPEC} 7; abstract: training on graph-structured data improves generalisation",
        gates=False,
    ),
)

# The figure the scoreboard shows for this paper.
HEADLINE_FIGURE = "complexity_plot"


def capability_scores(
    task_scores: pd.DataFrame, suites: dict[str, list[str]], n_boot: int, ci: float, rng
) -> pd.DataFrame:
    """Per (agent, capability): mean completion, coherence, success and a bootstrap CI of completion."""
    rows = []
    for agent, frame in task_scores.groupby("agent", sort=False):
        by_task = frame.set_index("task_id")
        for capability, ids in suites.items():
            sub = by_task.loc[[i for i in ids if i in by_task.index]]
            lo, hi = bootstrap_ci(sub["completion"].to_numpy(), n_boot, ci, rng)
            rows.append(
                {
                    "agent": agent,
                    "capability": capability,
                    "n_tasks": len(sub),
                    "completion": float(sub["completion"].mean()) if len(sub) else np.nan,
                    "completion_ci_low": lo,
                    "completion_ci_high": hi,
                    "coherence": float(sub["coherence"].mean()) if len(sub) else np.nan,
                    "success": float(sub["success"].mean()) if len(sub) else np.nan,
                }
            )
    return pd.DataFrame(rows)


def complexity_curves(task_scores: pd.DataFrame) -> pd.DataFrame:
    """Mean completion / success / recall by agent x dimension x level (the score-vs-level curves)."""
    rows = []
    for dim in DIMENSIONS:
        grouped = task_scores.groupby(["agent", f"{dim}_level"], sort=False)
        for (agent, level), frame in grouped:
            rows.append(
                {
                    "agent": agent,
                    "dimension": dim,
                    "level": level,
                    "n_tasks": len(frame),
                    "completion": float(frame["completion"].mean()),
                    "success": float(frame["success"].mean()),
                    "subtask_recall": float(frame["subtask_recall"].mean()),
                }
            )
    frame = pd.DataFrame(rows)
    frame["level"] = pd.Categorical(frame["level"], LEVELS, ordered=True)
    return frame.sort_values(["agent", "dimension", "level"]).reset_index(drop=True)


def _curve(curves: pd.DataFrame, agent: str, dim: str, metric: str) -> dict[str, float]:
    sub = curves[(curves.agent == agent) & (curves.dimension == dim)]
    return {str(r.level): float(getattr(r, metric)) for r in sub.itertuples()}


def monotone(values: dict[str, float]) -> bool:
    """Easy >= Medium >= Hard over the levels present (at least two)."""
    present = [values[lv] for lv in LEVELS if lv in values]
    return len(present) >= 2 and all(a >= b for a, b in zip(present[:-1], present[1:], strict=True))


def build_metrics(
    synthesis: dict,
    acceptance: dict,
    task_scores: pd.DataFrame,
    capability: pd.DataFrame,
    curves: pd.DataFrame,
    transfer: pd.DataFrame,
    suites: dict[str, list[str]],
    per_capability: int,
) -> dict[str, Any]:
    """The contract keys plus the numbers behind every claim."""
    m: dict[str, Any] = {
        k: synthesis[k]
        for k in (
            "verified_subtask_rate",
            "fault_catch_rate",
            "faults_injected",
            "gold_replay_pass_rate",
            "negative_rejection_rate",
            "n_candidates",
            "n_gold",
            "documented_effects",
        )
    }
    m["discovery_coverage"] = synthesis["n_candidates"] / synthesis["documented_effects"]
    for k in (
        "in_bin_rate",
        "machine_acceptance",
        "composition_hit_rate",
        "n_validated",
        "n_authored",
    ):
        m[k] = acceptance[k]
    agents = list(dict.fromkeys(task_scores["agent"]))
    for agent in agents:
        frame = task_scores[task_scores.agent == agent]
        for score in SCORES:
            m[f"{score}_{agent}"] = float(frame[score].mean())
        m[f"completion_{agent}_min"] = float(frame["completion"].min())
        defined = frame[frame.lmax >= 2]
        m[f"coherence_{agent}_min"] = float(defined["coherence"].min()) if len(defined) else np.nan
        multi = frame[(frame.n_apps >= 2) & (frame.lmax >= 2)]
        m[f"coherence_{agent}_multi_app"] = (
            float(multi["coherence"].mean()) if len(multi) else np.nan
        )
        for dim in DIMENSIONS:
            success = _curve(curves, agent, dim, "success")
            for level, value in success.items():
                m[f"success_{agent}_{dim}_{level}"] = value
            m[f"monotone_{agent}_{dim}"] = monotone(success)
        nodes = _curve(curves, agent, "nodes", "success")
        m[f"success_gap_easy_hard_{agent}"] = nodes.get("easy", np.nan) - nodes.get("hard", np.nan)
    # the contract's coherence of the random-order oracle: tasks with >= 2 apps where L_max >= 2
    m["coherence_oracle_random_order"] = m.get("coherence_oracle_random_order_multi_app", np.nan)
    for key in ("success_gap_easy_hard_noisy_oracle", "success_gap_easy_hard_instruction_planner"):
        m.setdefault(key, np.nan)
    for agent in ("noisy_oracle", "instruction_planner"):
        for dim in ("nodes", "edges", "depth"):
            m.setdefault(f"monotone_{agent}_{dim}", False)
    for agent in ("oracle_contiguous", "oracle_random_order", "random"):
        m.setdefault(f"completion_{agent}_min", np.nan)
        m.setdefault(f"coherence_{agent}_min", np.nan)
        m.setdefault(f"completion_{agent}", np.nan)

    sizes = {name: len(ids) for name, ids in suites.items()}
    m["suite_sizes"] = sizes
    m["min_suite_fill"] = min(sizes.values()) / per_capability if sizes else 0.0
    pivot = capability.pivot(index="capability", columns="agent", values="completion")
    if {"instruction_planner", "noisy_oracle"} <= set(pivot.columns):
        diff = (pivot["instruction_planner"] - pivot["noisy_oracle"]).abs()
        m["capability_profile_max_diff"] = float(diff.max())
        m["capability_profile_argmax"] = str(diff.idxmax()) if diff.notna().any() else None
    else:
        m["capability_profile_max_diff"] = np.nan
    m["capability_completion"] = {
        agent: {cap: float(v) for cap, v in pivot[agent].items()} for agent in pivot.columns
    }

    means = transfer.groupby("resolver")["completion"].mean()
    m["completion_graph_trained"] = float(means.get("graph_trained", np.nan))
    m["completion_chain_trained"] = float(means.get("chain_trained", np.nan))
    m["completion_rule_resolver"] = float(means.get("rule", np.nan))
    m["completion_gain_graph_over_chain"] = (
        m["completion_graph_trained"] - m["completion_chain_trained"]
    )
    m["n_transfer_tasks"] = int(transfer["task_id"].nunique()) if len(transfer) else 0
    return check_metrics_contract(m, METRICS, "omnibench")


def build_results(task_scores: pd.DataFrame, transfer: pd.DataFrame) -> pd.DataFrame:
    """One row per agent (benchmark means), then the training study's resolvers (held-out tasks)."""
    rows = []
    for agent, frame in task_scores.groupby("agent", sort=False):
        row = {"method": agent, "evaluated_on": "benchmark", "n_tasks": len(frame)}
        row.update({s: float(frame[s].mean()) for s in SCORES})
        rows.append(row)
    for resolver, frame in transfer.groupby("resolver", sort=False):
        row = {
            "method": f"planner_{resolver}",
            "evaluated_on": "held_out_branched",
            "n_tasks": len(frame),
        }
        row.update({s: float(frame[s].mean()) for s in SCORES if s in frame})
        rows.append(row)
    return results_table(rows)
