"""omnibench end to end in the fast environment, through a real KedroSession in a project copy."""

import copy
import functools
import json

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError, check_parameters
from paper_pipelines.pipeline_registry import paper_slugs
from paper_pipelines.pipelines.omnibench import create_pipeline
from paper_pipelines.pipelines.omnibench.report import CLAIMS, METRICS
from tests.kedro_helpers import (
    block_network,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "omnibench"
AGENTS = [
    "random",
    "oracle_contiguous",
    "oracle_random_order",
    "noisy_oracle",
    "instruction_planner",
    "learned_planner",
    "lm_agent",
]


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below (about 6 s of pipeline time), with sockets blocked."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest(path):
    return path / versions_of(path)[-1] / path.name


def _table(project, rel):
    return pd.read_parquet(_latest(project / "data/fast" / rel))


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / "data/fast"
    for name in (
        "08_reporting/omnibench/metrics.json",
        "08_reporting/omnibench/results.parquet",
        "08_reporting/omnibench/claims.parquet",
        "08_reporting/omnibench/capability_radar_plot.png",
        "08_reporting/omnibench/complexity_plot.png",
        "07_model_output/omnibench/gold_subtasks.json",
        "07_model_output/omnibench/synthesis_report.json",
        "05_model_input/omnibench/tasks.jsonl",
        "06_models/omnibench/planner.skops",
        "07_model_output/omnibench/trajectories.jsonl",
        "07_model_output/omnibench/task_scores_table.parquet",
        "07_model_output/omnibench/capability_scores_table.parquet",
        "07_model_output/omnibench/complexity_curves_table.parquet",
        "01_raw/omnibench/desktop.json",
    ):
        assert len(versions_of(root / name)) == 1, name


def test_tasks_are_json_lines_of_task_graphs(fast_run):
    lines = (
        _latest(fast_run / "data/fast/05_model_input/omnibench/tasks.jsonl")
        .read_text()
        .splitlines()
    )
    tasks = [json.loads(line) for line in lines]
    assert len(tasks) >= 10 and sum(t["source"] == "authored" for t in tasks) == 3
    for task in tasks:
        assert set(task["levels"]) == {"edges", "nodes", "categories", "depth", "width"}
        assert task["measures"]["nodes"] == len(task["nodes"])
        if task["targets"]:
            assert task["levels"] == task["targets"]
    assert len({t["wl_hash"] for t in tasks}) == len(tasks)


def test_metrics_contract_and_gating_claims(fast_run):
    metrics = latest_json(fast_run / "data/fast/08_reporting/omnibench/metrics.json")
    assert set(METRICS) <= set(metrics)
    assert metrics["verified_subtask_rate"] >= 0.95 and metrics["in_bin_rate"] == 1.0
    assert (
        metrics["completion_random"] <= 0.1 and metrics["completion_oracle_contiguous_min"] == 1.0
    )
    claims = _table(fast_run, "08_reporting/omnibench/claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool and list(claims["gates"]) == [c.gates for c in CLAIMS]
    assert claims[claims.gates]["holds"].all(), claims[["claim", "ours"]]


def test_results_have_one_row_per_agent_and_resolver(fast_run):
    results = _table(fast_run, "08_reporting/omnibench/results.parquet")
    assert list(results["method"]) == [
        *AGENTS,
        "planner_graph_trained",
        "planner_chain_trained",
        "planner_rule",
    ]
    by = results.set_index("method")
    assert by.loc["oracle_contiguous", "success"] == 1.0 and by.loc["random", "success"] == 0.0
    # the LM agent runs on the first task of each capability suite only (a model is slow)
    assert 1 <= by.loc["lm_agent", "n_tasks"] <= 10 < by.loc["random", "n_tasks"]
    scores = _table(fast_run, "07_model_output/omnibench/task_scores_table.parquet")
    assert set(scores["agent"]) == set(AGENTS)
    caps = _table(fast_run, "07_model_output/omnibench/capability_scores_table.parquet")
    assert caps["capability"].nunique() == 10 and {
        "completion_ci_low",
        "completion_ci_high",
    } <= set(caps)


def test_bad_app_spec_fails_before_anything_is_written(fast_run):
    """A dangling screen in the authored apps.yml stops the run in its first node."""
    path = fast_run / "data/authored/omnibench/apps.yml"
    original = path.read_text()
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data/fast")}
    path.write_text(original.replace("goto: filters}", "goto: filterz}", 1))
    try:
        with pytest.raises(
            Exception, match=r"dangling screen 'filterz'.*Nothing was run or written"
        ):
            run_session(fast_run, SLUG, env="fast")
    finally:
        path.write_text(original)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {str(p.relative_to(fast_run)) for p in files_under(fast_run / "data/fast")} - {
        str(p.relative_to(fast_run)) for p in before
    }
    assert all("omnibench" not in p for p in new), new


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda t: t.replace('"insert": ["export"]', '"insert": ["exprt"]'),
            r"names subtask 'exprt'",
        ),
        (
            lambda t: t.replace('"export": ["mail"]', '"export": ["mail"], "mail": ["insert"]'),
            r"has a cycle",
        ),
    ],
)
def test_bad_authored_tasks_fail_in_the_first_node(edit, message):
    """The first node (the one the session above runs) rejects a dangling edge and a cycle."""
    import yaml

    from paper_pipelines.pipelines.omnibench import nodes
    from paper_pipelines.pipelines.omnibench.parameters import DataParams
    from tests.kedro_helpers import PROJECT_ROOT

    apps = yaml.safe_load((PROJECT_ROOT / "data/authored/omnibench/apps.yml").read_text())
    tasks = json.loads(
        edit((PROJECT_ROOT / "data/authored/omnibench/authored_tasks.json").read_text())
    )
    with pytest.raises(ValueError, match=message):
        nodes.load_desktop(apps, tasks, DataParams())
    desktop, authored = nodes.load_desktop(apps, [], DataParams(authored_tasks=False))
    assert authored == [] and len(desktop["apps"]) == 16


@functools.cache
def _fast_params():
    from kedro.config import OmegaConfigLoader

    from tests.kedro_helpers import PROJECT_ROOT

    loader = OmegaConfigLoader(
        str(PROJECT_ROOT / "conf"),
        base_env="base",
        default_run_env="fast",
        merge_strategy={"parameters": "soft"},
    )
    return loader["parameters"][SLUG]


@pytest.mark.parametrize(
    ("block", "key", "value", "message"),
    [
        (
            "composition",
            "bins",
            {"edges": [3, 3]},
            r"composition\.bins\.edges = \[3, 3\] gives an empty or overlapping",
        ),
        ("composition", "bins", {"width": [2, 1]}, r"empty or overlapping Medium bin"),
        ("composition", "bins", {"nodes": [0, 2]}, r"leaves the Easy bin empty"),
        ("agents", "names", ["random", "gpt5"], r"omnibench\.agents\.names\.1"),
        (
            "capabilities",
            "suites",
            {"telepathy": {"width": ["hard"]}},
            r"omnibench\.capabilities\.suites\.telepathy",
        ),
        (
            "capabilities",
            "suites",
            {"parallel_planning": {"width": []}},
            r"every filter needs at least one level",
        ),
        ("agents", "names", ["random"], r"must include noisy_oracle"),
        ("composition", "max_nodes", 4, r"leaves the Hard nodes bin"),
    ],
)
def test_bad_parameters_name_the_key(block, key, value, message):
    params = {SLUG: copy.deepcopy(_fast_params())}
    current = params[SLUG][block].get(key)
    params[SLUG][block][key] = (
        {**current, **value} if isinstance(value, dict) and key == "bins" else value
    )
    with pytest.raises(ParameterError, match=message):
        check_parameters(params, [create_pipeline()], paper_slugs())
