"""omnibench nodes: typed blocks in, the method modules called, data out (no I/O, no plotting here)."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.lm import CausalLM
from paper_pipelines.common.runtime import apply_runtime, substream

from . import agents as ag
from . import capabilities, data, figures, report, study
from .discovery import discover_subtasks as discover
from .parameters import (
    AgentParams,
    CapabilityParams,
    CompositionParams,
    DataParams,
    DiscoveryParams,
    EvaluationParams,
    RuntimeParams,
    Seed,
    SynthesisParams,
    TrainParams,
)

logger = logging.getLogger(__name__)


def _records(frame: pd.DataFrame) -> list[dict]:
    """JSON-lines tables back to the list of dicts the modules use."""
    return frame.to_dict("records")


# ---------------------------------------------------------------- ingest
def load_desktop(
    apps_spec: dict, authored_tasks_spec: list, data_params: DataParams
) -> tuple[dict, list[dict]]:
    """The authored desktop and tasks, checked before anything is written (bad specs raise here)."""
    desktop = data.load_desktop(apps_spec, data_params.apps, data_params.files_per_type)
    tasks = (
        data.parse_authored_tasks(authored_tasks_spec, desktop)
        if data_params.authored_tasks
        else []
    )
    logger.info(
        "desktop: %d apps, %d files, %d authored tasks",
        len(desktop["apps"]),
        len(desktop["files"]),
        len(tasks),
    )
    return desktop, tasks


# ---------------------------------------------------------------- preprocess: the benchmark's synthesis
def discover_subtasks(desktop: dict, discovery: DiscoveryParams, seed: Seed) -> list[dict]:
    """Process 1: candidate subtasks from exploring (or enumerating) each app."""
    return discover(
        desktop, discovery.mode, discovery.episodes_per_app, discovery.max_depth,
        discovery.max_bindings, substream(seed, "discovery"),
    )  # fmt: skip


def synthesize_subtasks(
    subtask_candidates: list[dict], desktop: dict, synthesis: SynthesisParams, seed: Seed
) -> tuple[list[dict], dict]:
    """Process 2: gold subtasks (verified or fixed) and the synthesis report."""
    records, summary = study.synthesize_all(
        desktop,
        subtask_candidates,
        synthesis.max_iters,
        synthesis.fault_rate,
        substream(seed, "synthesis"),
    )
    logger.info(
        "synthesis: %s", {k: summary[k] for k in ("n_candidates", "n_gold", "faults_caught")}
    )
    return [r for r in records if r["status"] != "discarded"], summary


def compose_tasks(
    gold_subtasks: list[dict],
    desktop: dict,
    composition: CompositionParams,
    capabilities_params: CapabilityParams,
    seed: Seed,
) -> tuple[list[dict], dict]:
    """Process 3: tasks rejection-sampled into target levels (part of them the capability filters)."""
    return study.compose_benchmark(
        gold_subtasks,
        desktop,
        composition,
        capabilities_params.suites,
        substream(seed, "composition"),
    )


def validate_tasks(
    tasks_raw: list[dict],
    composition_stats: dict,
    authored_tasks: list[dict],
    gold_subtasks: list[dict],
    desktop: dict,
    composition: CompositionParams,
    evaluation: EvaluationParams,
) -> tuple[pd.DataFrame, dict]:
    """Process 4: the benchmark (JSON lines) and the acceptance report."""
    tasks, acceptance = study.validate_benchmark(
        tasks_raw, authored_tasks, gold_subtasks, desktop, composition.bins.model_dump(),
        evaluation.max_steps, evaluation.wait_limit,
    )  # fmt: skip
    return pd.DataFrame(tasks), {**acceptance, **composition_stats}


def build_capability_suites(
    tasks: pd.DataFrame, capabilities_params: CapabilityParams, seed: Seed
) -> dict:
    """The ten capability suites (task ids) from their level filters."""
    return capabilities.build_suites(
        _records(tasks),
        capabilities_params.suites,
        capabilities_params.per_capability,
        substream(seed, "suites"),
    )


# ---------------------------------------------------------------- train: planners and agents
def compose_training_sets(
    gold_subtasks: list[dict],
    desktop: dict,
    composition: CompositionParams,
    train: TrainParams,
    seed: Seed,
) -> dict:
    """Graph-structured and chain-only training tasks, and held-out branched test tasks."""
    return study.training_sets(
        gold_subtasks, desktop, composition, train.holdout_categories,
        train.n_train_tasks, train.n_test_tasks, substream(seed, "train"),
    )  # fmt: skip


def train_planner(training_tasks: dict, gold_subtasks: list[dict], train: TrainParams) -> dict:
    """The learned planner's dependency classifier, fitted on graph tasks and on chain tasks."""
    return study.train_planners(training_tasks, gold_subtasks, train.c)


def run_agents(
    tasks: pd.DataFrame,
    capability_suites: dict,
    gold_subtasks: list[dict],
    desktop: dict,
    planner: dict,
    agent_lm: CausalLM | None,
    agents: AgentParams,
    evaluation: EvaluationParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    """Every agent on the benchmark (or on the capability suites' tasks); one trajectory per run.

    The LM agent (``agent_lm``, a causal LM from the catalog) runs on the first
    ``agents.lm.tasks_per_capability`` tasks of each capability suite.
    """
    device = apply_runtime(runtime)
    records = _records(tasks)
    if agents.run_on == "suites":
        wanted = {i for ids in capability_suites.values() for i in ids}
        records = [t for t in records if t["task_id"] in wanted]
    generate, lm_ids = None, None
    if "lm_agent" in agents.names:
        if agent_lm is None:
            raise ValueError(
                "omnibench.agents.names includes lm_agent but the catalog entry omnibench.agent_lm "
                "holds no model: point it at one (conf/base/catalog/omnibench.yml) or drop lm_agent"
            )
        lm = agents.lm
        logger.info("lm_agent is %s on %s", agent_lm.name, device)
        generate = ag.lm_generator(agent_lm, lm.max_new_tokens, lm.system_prompt, device)
        k = lm.tasks_per_capability
        lm_ids = {i for ids in capability_suites.values() for i in ids[:k]}
    trajectories = study.run_agents(
        records, gold_subtasks, desktop, planner, agents.names, agents.noise_p, agents.retrieval,
        evaluation.max_steps, evaluation.wait_limit, lambda name: substream(seed, "agent", name),
        generate, lm_ids,
    )  # fmt: skip
    return pd.DataFrame(trajectories)


def run_transfer_study(
    training_tasks: dict,
    planner: dict,
    gold_subtasks: list[dict],
    desktop: dict,
    agents: AgentParams,
    evaluation: EvaluationParams,
) -> pd.DataFrame:
    """Held-out branched tasks run with the graph-trained, chain-trained and rule resolvers."""
    return study.transfer_study(
        training_tasks, planner, gold_subtasks, desktop, agents.retrieval,
        evaluation.max_steps, evaluation.wait_limit,
    )  # fmt: skip


# ---------------------------------------------------------------- evaluate
def score_tasks(trajectories: pd.DataFrame, tasks: pd.DataFrame) -> pd.DataFrame:
    """OmniEval's metrics per (agent, task) beside the task's complexity measures and levels."""
    return study.score_trajectories(_records(trajectories), _records(tasks))


def score_capabilities(
    task_scores_table: pd.DataFrame,
    capability_suites: dict,
    evaluation: EvaluationParams,
    seed: Seed,
) -> pd.DataFrame:
    """Per agent and capability: mean completion / coherence / success with bootstrap intervals."""
    return report.capability_scores(
        task_scores_table,
        capability_suites,
        evaluation.bootstrap,
        evaluation.ci,
        substream(seed, "bootstrap"),
    )


def complexity_curves(task_scores_table: pd.DataFrame) -> pd.DataFrame:
    """Mean metrics by dimension x level x agent."""
    return report.complexity_curves(task_scores_table)


def summarise(
    synthesis_report: dict,
    acceptance_report: dict,
    task_scores_table: pd.DataFrame,
    capability_scores_table: pd.DataFrame,
    complexity_curves_table: pd.DataFrame,
    transfer_table: pd.DataFrame,
    capability_suites: dict,
    capabilities_params: CapabilityParams,
) -> dict[str, Any]:
    """The metrics contract (report.METRICS) and the numbers behind every claim."""
    return report.build_metrics(
        synthesis_report, acceptance_report, task_scores_table, capability_scores_table,
        complexity_curves_table, transfer_table, capability_suites, capabilities_params.per_capability,
    )  # fmt: skip


def tabulate_results(task_scores_table: pd.DataFrame, transfer_table: pd.DataFrame) -> pd.DataFrame:
    """One row per agent (and per resolver of the training study)."""
    return report.build_results(task_scores_table, transfer_table)


def check_claims(metrics: dict) -> pd.DataFrame:
    """Each claim of report.CLAIMS with our values and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "omnibench")


def plot_capability_radar(capability_scores_table: pd.DataFrame) -> Figure:
    return figures.capability_radar(capability_scores_table)


def plot_complexity(complexity_curves_table: pd.DataFrame) -> Figure:
    return figures.complexity_figure(complexity_curves_table)
