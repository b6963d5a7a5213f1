"""The benchmark assembled end to end at toy size: synthesis, composition, validation, agents, scores,
the training study, and the report's tables."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.omnibench import report, study
from paper_pipelines.pipelines.omnibench.parameters import CompositionParams
from paper_pipelines.pipelines.omnibench.taskgraph import complexity_levels, complexity_measures

SUITES = {
    "parallel_planning": {"width": ["hard"]},
    "long_instruction_following": {"nodes": ["hard"]},
}


@pytest.fixture(scope="module")
def bench():
    from tests.pipelines.omnibench.conftest import _desktop, _gold

    desktop, gold = _desktop(), _gold()
    composition = CompositionParams(n_tasks=24, max_tries=60)
    raw, stats = study.compose_benchmark(
        gold, desktop, composition, SUITES, np.random.default_rng(0)
    )
    tasks, acceptance = study.validate_benchmark(
        raw, [], gold, desktop, composition.bins.model_dump(), 200, 20
    )
    return desktop, gold, composition, raw, stats, tasks, acceptance


def test_synthesize_all_reports_and_rechecks(desktop):
    from paper_pipelines.pipelines.omnibench import discovery

    cands = discovery.discover_subtasks(desktop, "enumerate", 1, 2, 2, np.random.default_rng(0))[:6]
    records, rep = study.synthesize_all(desktop, cands, 3, 0.5, np.random.default_rng(1))
    assert len(records) == 6 and rep["n_candidates"] == 6
    assert rep["n_gold"] == 6 - rep["n_discarded"] and rep["documented_effects"] == 40
    assert rep["discovered_effects"] == 6 and rep["gold_replay_pass_rate"] == 1.0
    assert rep["faults_injected"] >= 1


def test_caps():
    assert study.caps_for(8, 5) == {
        "edges": 14,
        "nodes": 8,
        "categories": 5,
        "depth": 8,
        "width": 8,
    }


def test_composition_and_validation(bench):
    desktop, gold, composition, raw, stats, tasks, acceptance = bench
    assert stats["targets"] == 24 and stats["composed"] == len(raw) > 5
    assert stats["composition_hit_rate"] == pytest.approx(len(raw) / 24)
    assert all(t["instruction"].endswith(".") for t in raw)
    assert acceptance["n_candidates"] == len(raw) and acceptance["machine_acceptance"] == 1.0
    assert acceptance["in_bin_rate"] == 1.0 and acceptance["n_authored"] == 0
    assert acceptance["n_validated"] == len(tasks) == len(raw) - acceptance["rejected"]["duplicate"]
    bins = composition.bins.model_dump()
    for task in tasks:
        assert (
            task["levels"] == complexity_levels(complexity_measures(task), bins) == task["targets"]
        )
        assert task["lmax"] >= 1 and len(task["wl_hash"]) == 32
    # the first share of targets follows the capability filters
    assert raw[0]["targets"]["width"] == "hard" or raw[0]["targets"]["nodes"] == "hard"


def test_validation_rejects_bad_and_duplicate_tasks(bench):
    desktop, gold, composition, raw, *_ = bench
    broken = {**raw[0], "task_id": "broken", "edges": [*raw[0]["edges"], ["n0", "zz"]]}
    twin = {**raw[0], "task_id": "twin"}
    tasks, rep = study.validate_benchmark(
        [raw[0], broken, twin], [], gold, desktop, composition.bins.model_dump(), 200, 20
    )
    assert [t["task_id"] for t in tasks] == [raw[0]["task_id"]]
    assert rep["rejected"] == {"structural": 1, "gold_execution": 0, "duplicate": 1}
    assert rep["machine_acceptance"] == 1.0 and rep["in_bin_rate"] == 1.0
    gold_by_id = {g["id"]: g for g in gold}
    assert study.gold_execution_completes(raw[0], desktop, gold_by_id, 200, 20)
    assert not study.gold_execution_completes(raw[0], desktop, gold_by_id, 3, 20)
    empty, rep = study.validate_benchmark(
        [], [], gold, desktop, composition.bins.model_dump(), 200, 20
    )
    assert empty == [] and np.isnan(rep["machine_acceptance"]) and np.isnan(rep["in_bin_rate"])


def test_agents_scores_and_report_tables(bench):
    desktop, gold, composition, raw, stats, tasks, acceptance = bench
    names = [
        "random",
        "oracle_contiguous",
        "oracle_random_order",
        "noisy_oracle",
        "instruction_planner",
        "learned_planner",
    ]
    trajectories = study.run_agents(
        tasks,
        gold,
        desktop,
        {"graph": None},
        names,
        0.05,
        "tfidf",
        200,
        20,
        lambda n: np.random.default_rng(len(n)),
    )
    assert len(trajectories) == 6 * len(tasks)
    scores = study.score_trajectories(trajectories, tasks)
    by = scores.groupby("agent")
    assert (
        by["completion"].min()["oracle_contiguous"] == 1.0
        and by["completion"].max()["random"] == 0.0
    )
    assert by["steps"].max()["random"] == 21
    assert set(scores.columns) >= {"edges", "nodes_level", "lmax", "n_apps", "coherence", "success"}
    oracle = scores[scores.agent == "oracle_contiguous"]
    assert (oracle[oracle.lmax >= 2]["coherence"] == 1.0).all()
    assert (scores["n_apps"] >= 1).all()
    with pytest.raises(ValueError, match="unknown agent"):
        study.make_agent("gpt", {}, None, {}, 0.0, np.random.default_rng(0))
    suites = {"a": [t["task_id"] for t in tasks[:3]], "b": [t["task_id"] for t in tasks[3:6]]}
    caps = report.capability_scores(scores, suites, 50, 0.95, np.random.default_rng(0))
    assert len(caps) == 12 and (caps[caps.agent == "oracle_contiguous"]["completion"] == 1.0).all()
    curves = report.complexity_curves(scores)
    assert set(curves["dimension"]) == {"edges", "nodes", "categories", "depth", "width"}
    transfer = pd.DataFrame(
        {
            "resolver": ["graph_trained", "chain_trained"],
            "task_id": ["x", "x"],
            "completion": [0.8, 0.5],
        }
    )
    metrics = report.build_metrics(
        {"verified_subtask_rate": 1.0, "fault_catch_rate": 1.0, "faults_injected": 1, "gold_replay_pass_rate": 1.0,
         "negative_rejection_rate": 1.0, "n_candidates": 40, "n_gold": 40, "documented_effects": 40},
        {**acceptance, **stats}, scores, caps, curves, transfer, suites, 3,
    )  # fmt: skip
    assert set(report.METRICS) <= set(metrics)
    assert metrics["completion_gain_graph_over_chain"] == pytest.approx(0.3)
    assert metrics["completion_random"] == 0.0 and metrics["min_suite_fill"] == 1.0
    results = report.build_results(scores, transfer)
    assert (
        list(results["method"])[:6] == names
        and results["method"].iloc[-1] == "planner_chain_trained"
    )


def test_monotone():
    assert report.monotone({"easy": 0.9, "medium": 0.5, "hard": 0.5})
    assert not report.monotone({"easy": 0.4, "medium": 0.5, "hard": 0.1})
    assert report.monotone({"easy": 0.4, "hard": 0.1}) and not report.monotone({"easy": 0.4})


def test_training_sets_and_transfer(bench):
    desktop, gold, composition, *_ = bench
    sets = study.training_sets(
        gold, desktop, composition, ["media", "archive"], 6, 3, np.random.default_rng(0)
    )
    assert len(sets["graph"]) == 6 and len(sets["chain"]) == 6 and len(sets["test"]) == 3
    assert all(
        n["category"] not in ("media", "archive")
        for t in sets["graph"] + sets["chain"]
        for n in t["nodes"]
    )
    assert all(t["measures"]["width"] == 1 for t in sets["chain"])
    assert all(any(n["category"] in ("media", "archive") for n in t["nodes"]) for t in sets["test"])
    assert all(t["measures"]["width"] >= 2 and t["measures"]["edges"] >= 2 for t in sets["test"])
    planner = study.train_planners(sets, gold, 1.0)
    assert planner["n_tasks_graph"] == 6 and planner["n_examples_chain"] > 0
    table = study.transfer_study(sets, planner, gold, desktop, "tfidf", 200, 20)
    assert list(dict.fromkeys(table["resolver"])) == ["graph_trained", "chain_trained", "rule"]
    assert len(table) == 9 and table["completion"].between(0, 1).all()


def test_the_lm_agent_runs_only_on_its_tasks_and_acts_on_the_model_s_reply(bench):
    """A scripted 'model' that clicks the first control: the LM agent's replies reach the simulator."""
    desktop, gold, composition, raw, stats, tasks, acceptance = bench
    prompts = []

    def generate(prompt):
        prompts.append(prompt)
        label = prompt.split("- [", 1)[1].split("]", 1)[0]
        return f"I will press it: click_input({label})"

    chosen = {tasks[0]["task_id"], tasks[2]["task_id"]}
    trajectories = study.run_agents(
        tasks, gold, desktop, {"graph": None}, ["lm_agent", "random"], 0.05, "tfidf", 200, 20,
        lambda n: np.random.default_rng(0), generate, chosen,
    )  # fmt: skip
    lm = [t for t in trajectories if t["agent"] == "lm_agent"]
    assert {t["task_id"] for t in lm} == chosen
    assert sum(t["agent"] == "random" for t in trajectories) == len(tasks)
    # the same click every step makes no progress: the stop rule ends it after 20 steps
    assert all(t["steps"] == 21 for t in lm) and len(prompts) == 2 * 21
    assert prompts[0].startswith(f"Task: {tasks[0]['instruction']}")
    with pytest.raises(ValueError, match="lm_agent needs a model"):
        study.make_agent("lm_agent", {}, None, {}, 0.0, np.random.default_rng(0))


def test_lm_generator_is_greedy_and_answers_one_prompt_with_a_string():
    from paper_pipelines.common.lm import load_causal_lm
    from paper_pipelines.pipelines.omnibench import agents as ag

    generate = ag.lm_generator(load_causal_lm("tiny_random"), 3, "Reply with one action.", "cpu")
    first = generate("Task: open the file")
    assert isinstance(first, str) and first == generate("Task: open the file")


def test_lm_agent_without_a_model_names_the_catalog_entry():
    from paper_pipelines.common.params import RuntimeParams
    from paper_pipelines.pipelines.omnibench import nodes
    from paper_pipelines.pipelines.omnibench.parameters import AgentParams, EvaluationParams

    with pytest.raises(ValueError, match="omnibench.agent_lm holds no model"):
        nodes.run_agents(
            pd.DataFrame(), {}, [], {}, {}, None, AgentParams(names=["lm_agent"]),
            EvaluationParams(), 0, RuntimeParams(),
        )  # fmt: skip
