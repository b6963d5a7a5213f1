"""The benchmark built end to end from the concept modules: synthesis, composition, validation, agent
runs, scores and the training study. The nodes call these; each takes plain data and a generator."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.progress import progress

from . import agents as ag
from .metrics import max_same_app_run, score_episode
from .planner import LearnedResolver, fit_resolver, reference_examples
from .synthesis import bind, gold_check_rates, synthesis_report, synthesize
from .taskgraph import (
    DIMENSIONS,
    complexity_levels,
    complexity_measures,
    compose_instruction,
    compose_task,
    feasible,
    sample_targets,
    structural_problems,
    with_inputs,
    wl_hash,
)

logger = logging.getLogger(__name__)


def synthesize_all(
    desktop: dict, candidates: list[dict], max_iters: int, fault_rate: float, rng
) -> tuple[list[dict], dict]:
    """Process 2 over every candidate; gold = verified or fixed ones; the report adds the re-checks."""
    records = [synthesize(desktop, c, max_iters, fault_rate, rng) for c in candidates]
    gold = [r for r in records if r["status"] != "discarded"]
    report = synthesis_report(records)
    report.update(gold_check_rates(desktop, gold))
    report["n_gold"] = len(gold)
    report["discovered_effects"] = len(candidates)
    report["documented_effects"] = sum(len(a["effects"]) for a in desktop["apps"].values())
    return records, report


def caps_for(max_nodes: int, n_categories: int) -> dict[str, int]:
    return {
        "edges": 2 * (max_nodes - 1),
        "nodes": max_nodes,
        "categories": n_categories,
        "depth": max_nodes,
        "width": max_nodes,
    }


def compose_benchmark(
    gold: list[dict],
    desktop: dict,
    composition,
    suites: dict[str, dict[str, list[str]]],
    rng: np.random.Generator,
    prefix: str = "t",
) -> tuple[list[dict], dict]:
    """Process 3: one rejection-sampled task per target, with its instruction."""
    bins = composition.bins.model_dump()
    caps = caps_for(composition.max_nodes, len({g["category"] for g in gold}))
    gold_by_id = {g["id"]: g for g in gold}
    targets = sample_targets(
        composition.n_tasks, suites, composition.capability_share, rng,
        lambda target: feasible(target, bins, caps),
    )  # fmt: skip
    tasks = []
    for k, target in enumerate(progress(targets, "omnibench compose", logger=logger)):
        task = compose_task(
            gold,
            desktop["files"],
            target,
            bins,
            caps,
            composition.max_tries,
            f"{prefix}{k:05d}",
            rng,
        )
        if task is not None:
            task["instruction"] = compose_instruction(task, gold_by_id, rng)
            tasks.append(task)
    stats = {
        "targets": len(targets),
        "composed": len(tasks),
        "composition_hit_rate": len(tasks) / max(len(targets), 1),
    }
    return tasks, stats


def node_checks(task: dict, gold_by_id: dict[str, dict]) -> dict[str, list[dict]]:
    """Each node's evaluation function bound to its parameters."""
    return {
        n["id"]: bind(gold_by_id[n["subtask"]]["evaluation"], n["params"]) for n in task["nodes"]
    }


def gold_execution_completes(
    task: dict, desktop: dict, gold_by_id: dict, max_steps: int, wait_limit: int
) -> bool:
    """Machine acceptance: the gold trajectories in a topological order complete every subtask."""
    agent = ag.OracleAgent("gold", gold_by_id, "contiguous", 0.0, np.random.default_rng(0))
    episode = ag.run_episode(
        agent, task, desktop, node_checks(task, gold_by_id), max_steps, wait_limit
    )
    return episode["outcome"] == "Success"


def validate_benchmark(
    tasks_raw: list[dict],
    authored: list[dict],
    gold: list[dict],
    desktop: dict,
    bins: dict[str, Any],
    max_steps: int,
    wait_limit: int,
) -> tuple[list[dict], dict]:
    """Process 4: structure, bins, gold execution and WL de-duplication; the acceptance report."""
    gold_by_id = {g["id"]: g for g in gold}
    kept, seen = [], set()
    counts = {"structural": 0, "gold_execution": 0, "duplicate": 0}
    in_bins = []
    candidates = [*tasks_raw, *(with_inputs(t, gold_by_id) for t in authored)]
    for task in progress(candidates, "omnibench validate", logger=logger):
        if structural_problems(task, gold_by_id, desktop["files"]):
            counts["structural"] += 1
            continue
        if not gold_execution_completes(task, desktop, gold_by_id, max_steps, wait_limit):
            counts["gold_execution"] += 1
            continue
        digest = wl_hash(task)
        if digest in seen:
            counts["duplicate"] += 1
            continue
        seen.add(digest)
        measures = complexity_measures(task)
        levels = complexity_levels(measures, bins)
        if task.get("targets"):
            in_bins.append(levels == task["targets"])
        ids = [n["id"] for n in task["nodes"]]
        lmax = max_same_app_run(ids, task["edges"], {n["id"]: n["app"] for n in task["nodes"]})
        kept.append(
            {**task, "measures": measures, "levels": levels, "wl_hash": digest, "lmax": lmax}
        )
    structural_ok = len(candidates) - counts["structural"]
    report = {
        "n_candidates": len(candidates),
        "n_validated": len(kept),
        "rejected": counts,
        "machine_acceptance": (structural_ok - counts["gold_execution"]) / structural_ok
        if structural_ok
        else float("nan"),
        "in_bin_rate": float(np.mean(in_bins)) if in_bins else float("nan"),
        "n_authored": sum(t["source"] == "authored" for t in kept),
    }
    return kept, report


# ---------------------------------------------------------------- agents
def make_agent(
    name: str, gold_by_id: dict, retriever, planner: dict, noise_p: float, rng, generate=None
) -> ag.Agent:
    """One of the six scripted agents by name (spec's baselines), or the LM agent on ``generate``."""
    if name == "random":
        return ag.RandomAgent(rng)
    if name == "oracle_contiguous":
        return ag.OracleAgent(name, gold_by_id, "contiguous", 0.0, rng)
    if name == "oracle_random_order":
        return ag.OracleAgent(name, gold_by_id, "random", 0.0, rng)
    if name == "noisy_oracle":
        return ag.OracleAgent(name, gold_by_id, "contiguous", noise_p, rng)
    if name == "instruction_planner":
        return ag.PlannerAgent(name, retriever, ag.resolve_rule, 0.0, rng)
    if name == "learned_planner":
        return ag.PlannerAgent(name, retriever, LearnedResolver(planner.get("graph")), 0.0, rng)
    if name == "lm_agent":
        if generate is None:
            raise ValueError("lm_agent needs a model: pass generate (prompt -> reply)")
        return ag.LMAgent(generate)
    raise ValueError(f"unknown agent {name!r}")


def run_agents(
    tasks: list[dict],
    gold: list[dict],
    desktop: dict,
    planner: dict,
    names: list[str],
    noise_p: float,
    retrieval: str,
    max_steps: int,
    wait_limit: int,
    seed_stream,
    lm_generate=None,
    lm_task_ids: set[str] | None = None,
) -> list[dict]:
    """Every agent on every task (the LM agent on ``lm_task_ids`` only); one record per (agent, task)."""
    gold_by_id = {g["id"]: g for g in gold}
    retriever = ag.Retriever(gold, retrieval)
    out = []
    for name in names:
        agent = make_agent(
            name, gold_by_id, retriever, planner, noise_p, seed_stream(name), lm_generate
        )
        todo = tasks
        if name == "lm_agent" and lm_task_ids is not None:
            todo = [t for t in tasks if t["task_id"] in lm_task_ids]
        for task in progress(todo, f"omnibench {name}", logger=logger):
            episode = ag.run_episode(
                agent, task, desktop, node_checks(task, gold_by_id), max_steps, wait_limit
            )
            out.append(episode)
    return out


def score_trajectories(trajectories: list[dict], tasks: list[dict]) -> pd.DataFrame:
    """One row per (agent, task): OmniEval's metrics beside the task's measures and levels."""
    by_id = {t["task_id"]: t for t in tasks}
    rows = []
    for record in trajectories:
        task = by_id[record["task_id"]]
        ids = [n["id"] for n in task["nodes"]]
        app_of = {n["id"]: n["app"] for n in task["nodes"]}
        scores = score_episode(
            ids, task["edges"], app_of, record["executed"], record["outcome"], task["lmax"]
        )
        row = {
            "agent": record["agent"],
            "task_id": record["task_id"],
            "steps": record["steps"],
            **scores,
        }
        row["n_apps"] = len(set(app_of.values()))
        for dim in DIMENSIONS:
            row[dim] = task["measures"][dim]
            row[f"{dim}_level"] = task["levels"][dim]
        rows.append(row)
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- training analogue
def training_sets(
    gold: list[dict], desktop: dict, composition, holdout: list[str], n_train: int, n_test: int, rng
) -> dict:
    """Graph-structured and chain-only training tasks (no held-out category), and held-out branched
    test tasks that use a held-out category (instructions composed the same way as the benchmark's)."""
    seen = [g for g in gold if g["category"] not in holdout]
    bins = composition.bins.model_dump()
    caps = caps_for(composition.max_nodes, len({g["category"] for g in gold}))
    gold_by_id = {g["id"]: g for g in gold}

    def draw(pool, n, fix, prefix, keep=lambda t: True, budget=20):
        tasks = []
        for k in range(n * budget):
            if len(tasks) >= n:
                break
            target = {d: ("easy", "medium", "hard")[int(rng.integers(3))] for d in DIMENSIONS}
            target.update({d: lv[int(rng.integers(len(lv)))] for d, lv in fix.items()})
            task = compose_task(
                pool, desktop["files"], target, bins, caps, 30, f"{prefix}{k:05d}", rng
            )
            if task is not None and keep(task):
                task["instruction"] = compose_instruction(task, gold_by_id, rng)
                task["measures"] = complexity_measures(task)
                tasks.append(task)
        return tasks

    uses_holdout = lambda t: any(n["category"] in holdout for n in t["nodes"])  # noqa: E731
    return {
        "graph": draw(seen, n_train, {}, "g"),
        "chain": draw(seen, n_train, {"width": ["easy"]}, "c"),
        "test": draw(
            gold,
            n_test,
            {"width": ["medium", "hard"], "edges": ["medium", "hard"]},
            "h",
            uses_holdout,
        ),
    }


def train_planners(sets: dict, gold: list[dict], c: float) -> dict:
    """The reference resolver fitted on graph tasks and on chain tasks."""
    gold_by_id = {g["id"]: g for g in gold}
    out: dict[str, Any] = {}
    for kind in ("graph", "chain"):
        x, y = reference_examples(sets[kind], gold_by_id)
        out[kind] = fit_resolver(x, y, c)
        out[f"n_examples_{kind}"] = int(len(y))
        out[f"n_tasks_{kind}"] = len(sets[kind])
    return out


def transfer_study(
    sets: dict,
    planner: dict,
    gold: list[dict],
    desktop: dict,
    retrieval: str,
    max_steps: int,
    wait_limit: int,
) -> pd.DataFrame:
    """Held-out branched tasks executed by the planner with each resolver (and the rule)."""
    gold_by_id = {g["id"]: g for g in gold}
    retriever = ag.Retriever(gold, retrieval)
    resolvers = {
        "graph_trained": LearnedResolver(planner.get("graph")),
        "chain_trained": LearnedResolver(planner.get("chain")),
        "rule": ag.resolve_rule,
    }
    rows = []
    for name, resolver in resolvers.items():
        agent = ag.PlannerAgent(name, retriever, resolver, 0.0, np.random.default_rng(0))
        for task in sets["test"]:
            ids = [n["id"] for n in task["nodes"]]
            app_of = {n["id"]: n["app"] for n in task["nodes"]}
            episode = ag.run_episode(
                agent, task, desktop, node_checks(task, gold_by_id), max_steps, wait_limit
            )
            scores = score_episode(
                ids, task["edges"], app_of, episode["executed"], episode["outcome"]
            )
            rows.append({"resolver": name, "task_id": task["task_id"], **scores})
    return pd.DataFrame(rows)
