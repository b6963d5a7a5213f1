"""OmniEval on hand-made DAGs (spec check 3): chain, diamond and flat graphs, both released-code quirks."""

import itertools

import networkx as nx
import numpy as np
import pytest

from paper_pipelines.pipelines.omnibench import omnieval as oe
from paper_pipelines.pipelines.omnibench.simulator import OmniSim
from paper_pipelines.pipelines.omnibench.taskgraph import node_depths

CHAIN = (["a", "b", "c"], [["a", "b"], ["b", "c"]])
DIAMOND = (["a", "b", "c", "d"], [["a", "b"], ["a", "c"], ["b", "d"], ["c", "d"]])
FLAT = (["a", "b", "c"], [])


def _depths(graph):
    return node_depths(*graph)


@pytest.mark.parametrize(
    ("graph", "done", "ours", "compat"),
    [
        (CHAIN, set(), 0.0, 0.0),
        (CHAIN, {"a"}, 1 / 3, 1 / 3),
        (CHAIN, {"a", "b"}, 2 / 3, 1.0),  # quirk 1: the deepest level is never checked
        (CHAIN, {"a", "b", "c"}, 1.0, 1.0),
        (CHAIN, {"b", "c"}, 0.0, 0.0),  # levels count from the top only
        (
            FLAT,
            set(),
            0.0,
            1.0,
        ),  # quirk 1 again: a depth-1 task always scores 1 in the released code
        (FLAT, {"a", "b"}, 0.0, 1.0),
        (FLAT, {"a", "b", "c"}, 1.0, 1.0),
        (DIAMOND, {"a", "b"}, 1 / 3, 1 / 3),
        (DIAMOND, {"a", "b", "c"}, 2 / 3, 1.0),
        (DIAMOND, {"a", "b", "c", "d"}, 1.0, 1.0),
    ],
)
def test_completion_and_the_released_value(graph, done, ours, compat):
    depths = _depths(graph)
    assert oe.completion(depths, done) == pytest.approx(ours)
    assert oe.completion_code_compat(depths, done) == pytest.approx(compat)


def test_completed_levels_counts_and_empty_graph():
    assert oe.completed_levels(_depths(DIAMOND), {"a", "b", "c"}) == 2
    assert oe.completed_levels_code_compat(_depths(CHAIN), {"a"}) == 1
    assert oe.completion({}, set()) == 0.0 and oe.completion_code_compat({}, set()) == 0.0


def test_depths_start_at_one_and_cycles_fail():
    assert _depths(DIAMOND) == {"a": 1, "b": 2, "c": 2, "d": 3}
    assert _depths(FLAT) == {"a": 1, "b": 1, "c": 1}
    with pytest.raises(ValueError, match="cycle"):
        node_depths(["a", "b"], [["a", "b"], ["b", "a"]])


@pytest.mark.parametrize(
    ("apps", "expected"),
    [([], 0), (["x"], 1), (["x", "x", "y", "x"], 2), (["x", "y", "y", "y"], 3), (["x", "y"], 1)],
)
def test_longest_same_app_run(apps, expected):
    assert oe.longest_same_app_run(apps) == expected


def test_lmax_on_hand_made_graphs():
    # diamond with apps A B A B: a, c, b, d keeps A A together -> 2
    apps = {"a": "A", "b": "B", "c": "A", "d": "B"}
    assert oe.max_same_app_run(*DIAMOND, apps) == 2
    # a chain A -> B -> A has one order: runs of 1
    assert oe.max_same_app_run(*CHAIN, {"a": "A", "b": "B", "c": "A"}) == 1
    assert oe.max_same_app_run(*FLAT, {"a": "A", "b": "B", "c": "A"}) == 2
    assert oe.max_same_app_run([], [], {}) == 0
    assert oe.max_run_order([], [], {}) == (0, [])


def _brute_force(nodes, edges, apps):
    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from(map(tuple, edges))
    return max(
        oe.longest_same_app_run([apps[n] for n in order])
        for order in nx.all_topological_sorts(graph)
    )


@pytest.mark.parametrize("seed", range(6))
def test_lmax_equals_enumerating_every_topological_order(seed):
    rng = np.random.default_rng(seed)
    nodes = [f"n{i}" for i in range(6)]
    edges = [
        [f"n{i}", f"n{j}"] for i, j in itertools.combinations(range(6), 2) if rng.random() < 0.3
    ]
    apps = {n: "AB"[int(rng.integers(2))] for n in nodes}
    lmax, order = oe.max_run_order(nodes, edges, apps)
    assert lmax == _brute_force(nodes, edges, apps)
    position = {n: k for k, n in enumerate(order)}
    assert sorted(order) == sorted(nodes)
    assert all(position[u] < position[v] for u, v in edges)
    assert oe.longest_same_app_run([apps[n] for n in order]) == lmax


@pytest.mark.parametrize(
    ("apps", "lmax", "expected"),
    [
        (["A", "A", "B"], 3, 0.5),
        (["A", "B"], 2, 0.0),
        ([], 3, 0.0),
        (["A", "A"], 1, 0.0),
        (["A", "A", "A"], 3, 1.0),
    ],
)
def test_coherence(apps, lmax, expected):
    assert oe.coherence(apps, lmax) == pytest.approx(expected)


def _sim():
    return OmniSim({"apps": {}, "files": []})


def _exists(path):
    return [{"check": "check_file_exists", "args": {"file_path": path}}]


def test_state_machine_releases_successors_in_node_order():
    # b is listed after a: both complete in the step where their files exist; c (listed first) waits
    nodes, edges = ["c", "a", "b"], [["a", "b"], ["b", "c"]]
    ev = oe.OmniEvaluator(nodes, edges, {n: _exists(n) for n in nodes}, max_steps=10, wait_limit=5)
    assert ev.status == {"c": oe.WAITING, "a": oe.EVALUATING, "b": oe.WAITING}
    sim = _sim()
    sim.files.update({n: {"type": "t", "content": ""} for n in nodes})
    assert ev.step(sim, finished=False) == "running"
    assert ev.executed == ["a", "b"] and ev.status["c"] == oe.EVALUATING
    assert ev.step(sim, finished=True) == "Success"
    assert ev.executed == ["a", "b", "c"]


def test_a_subtask_done_before_its_prerequisite_waits():
    ev = oe.OmniEvaluator(["a", "b"], [["a", "b"]], {"a": _exists("a"), "b": _exists("b")}, 10, 5)
    sim = _sim()
    sim.files["b"] = {"type": "t", "content": ""}
    ev.step(sim, False)
    assert ev.executed == [] and ev.status["b"] == oe.WAITING
    sim.files["a"] = {"type": "t", "content": ""}
    ev.step(sim, False)
    assert ev.executed == ["a", "b"]


def test_stop_rules():
    ev = oe.OmniEvaluator(["a"], [], {"a": _exists("a")}, max_steps=3, wait_limit=10)
    outcomes = [ev.step(_sim(), False) for _ in range(4)]
    assert outcomes == ["running", "running", "running", "Fail (exceeded max steps)"]
    ev = oe.OmniEvaluator(["a"], [], {"a": _exists("a")}, max_steps=100, wait_limit=2)
    assert [ev.step(_sim(), False) for _ in range(3)][-1] == "Fail (waited too long)"
    ev = oe.OmniEvaluator(["a"], [], {"a": _exists("a")}, max_steps=100, wait_limit=2)
    assert ev.step(_sim(), True) == "Fail (finished early)" and not ev.all_completed()


def test_progress_resets_the_wait_counter():
    ev = oe.OmniEvaluator(["a", "b"], [], {"a": _exists("a"), "b": _exists("b")}, 100, 2)
    sim = _sim()
    ev.step(sim, False)
    sim.files["a"] = {"type": "t", "content": ""}
    assert ev.step(sim, False) == "running" and ev.wait_step == 0
    assert ev.step(sim, False) == "running"
    assert ev.step(sim, False) == "running"
    assert ev.step(sim, False) == "Fail (waited too long)"
    assert ev.step_count == 5


def test_score_episode_on_a_diamond():
    nodes, edges = DIAMOND
    apps = {"a": "A", "b": "B", "c": "A", "d": "B"}
    scores = oe.score_episode(nodes, edges, apps, ["a", "c", "b"], "Fail (waited too long)")
    assert scores["completion"] == pytest.approx(2 / 3)
    assert scores["completion_code_compat"] == pytest.approx(1.0)
    assert scores["coherence"] == pytest.approx(1.0) and scores["lmax"] == 2
    assert scores["success"] == 0.0 and scores["subtask_recall"] == pytest.approx(0.75)
    full = oe.score_episode(nodes, edges, apps, ["a", "b", "c", "d"], "Success", lmax=2)
    assert full["success"] == 1.0 and full["coherence"] == 0.0
    assert oe.score_episode([], [], {}, [], "Success")["subtask_recall"] == 0.0
