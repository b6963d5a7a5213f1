"""Task graphs: the five complexity measures, binning, resource edges, composition and validation."""

import numpy as np
import pytest

from paper_pipelines.pipelines.omnibench import taskgraph as tg

BINS = {"edges": (1, 3), "nodes": (2, 4), "categories": (1, 2), "depth": (2, 3), "width": (1, 2)}
CAPS = {"edges": 14, "nodes": 8, "categories": 8, "depth": 8, "width": 8}


def _node(i, category, inputs, output, app="app"):
    return {
        "id": i,
        "subtask": f"{app}.{i}",
        "app": app,
        "category": category,
        "inputs": inputs,
        "output": output,
        "params": {},
    }


def _diamond():
    nodes = [
        _node("a", "image", ["Desktop/x.png"], "o/a"),
        _node("b", "image", ["o/a"], "o/b"),
        _node("c", "mail", ["o/a"], "o/c"),
        _node("d", "archive", ["o/b", "o/c"], "o/d"),
    ]
    return {"nodes": nodes, "edges": tg.resource_edges(nodes)}


def test_resource_edges_follow_outputs_into_inputs():
    task = _diamond()
    assert task["edges"] == [["a", "b"], ["a", "c"], ["b", "d"], ["c", "d"]]
    dup = [_node("a", "x", [], "o/a"), _node("b", "x", ["o/a", "o/a"], "o/b")]
    assert tg.resource_edges(dup) == [["a", "b"]]


def test_measures_of_a_diamond():
    assert tg.complexity_measures(_diamond()) == {
        "edges": 4,
        "nodes": 4,
        "categories": 3,
        "depth": 3,
        "width": 2,
    }
    flat = {"nodes": [_node(i, "image", [], f"o/{i}") for i in "abc"], "edges": []}
    assert tg.complexity_measures(flat) == {
        "edges": 0,
        "nodes": 3,
        "categories": 1,
        "depth": 1,
        "width": 3,
    }


@pytest.mark.parametrize(
    ("value", "level"), [(0, "easy"), (1, "easy"), (2, "medium"), (3, "medium"), (4, "hard")]
)
def test_edges_bins_are_the_papers(value, level):
    assert tg.complexity_level(value, (1, 3)) == level


def test_levels_and_level_ranges():
    assert tg.complexity_levels(tg.complexity_measures(_diamond()), BINS) == {
        "edges": "hard", "nodes": "medium", "categories": "hard", "depth": "medium", "width": "medium",
    }  # fmt: skip
    assert tg.level_range("edges", "easy", BINS, CAPS) == (0, 1)
    assert tg.level_range("nodes", "easy", BINS, CAPS) == (1, 2)
    assert tg.level_range("depth", "medium", BINS, CAPS) == (3, 3)
    assert tg.level_range("width", "hard", BINS, CAPS) == (3, 8)


def test_feasibility_rules_out_impossible_targets():
    easy = dict.fromkeys(tg.DIMENSIONS, "easy")
    assert tg.feasible(easy, BINS, CAPS)
    assert not tg.feasible({**easy, "width": "hard"}, BINS, CAPS)  # 3 nodes on a level, <= 2 nodes
    assert not tg.feasible({**easy, "depth": "hard"}, BINS, CAPS)
    assert not tg.feasible({**easy, "edges": "hard"}, BINS, CAPS)
    assert not tg.feasible({**easy, "categories": "hard"}, BINS, CAPS)
    hard = dict.fromkeys(tg.DIMENSIONS, "hard")
    assert tg.feasible(hard, BINS, CAPS)
    assert not tg.feasible(hard, BINS, {**CAPS, "nodes": 5})  # depth 4 + width 3 - 1 > 5 nodes
    assert tg.feasible(hard, BINS, {**CAPS, "nodes": 6})
    assert not tg.feasible({**easy, "nodes": "medium", "depth": "hard"}, BINS, {**CAPS, "depth": 3})


def test_wl_hash_ignores_node_ids_but_not_subtasks():
    task = _diamond()
    renamed = {
        "nodes": [{**n, "id": n["id"] + "x"} for n in task["nodes"]],
        "edges": [[u + "x", v + "x"] for u, v in task["edges"]],
    }
    assert tg.wl_hash(task) == tg.wl_hash(renamed)
    other = {**task, "nodes": [{**task["nodes"][0], "subtask": "app.z"}, *task["nodes"][1:]]}
    assert tg.wl_hash(task) != tg.wl_hash(other)
    assert set(tg.to_networkx(task).nodes) == {"a", "b", "c", "d"}


def test_structural_problems(gold_by_id, desktop):
    files = desktop["files"]
    sub = gold_by_id["photo_lab.grayscale"]
    a = tg.bind_node(sub, "a", {"src": "Desktop/photo1.png", "dst": "Desktop/out/a.png"})
    b = tg.bind_node(sub, "b", {"src": "Desktop/out/a.png", "dst": "Desktop/out/b.png"})
    good = {"nodes": [a, b], "edges": [["a", "b"]]}
    assert tg.structural_problems(good, gold_by_id, files) == []
    assert tg.structural_problems({**good, "edges": [["a", "z"]]}, gold_by_id, files) == [
        "edge a -> z names a missing node"
    ]
    assert tg.structural_problems(
        {**good, "edges": [["a", "b"], ["b", "a"]]}, gold_by_id, files
    ) == ["the task graph has a cycle"]
    unresolved = tg.structural_problems({**good, "edges": []}, gold_by_id, files)
    assert unresolved[0] == "node b: input Desktop/out/a.png is not resolvable"
    assert unresolved[-1] == "edges differ from the resource matching"
    bad_sub = {**good, "nodes": [{**a, "subtask": "nope.x"}, b]}
    assert tg.structural_problems(bad_sub, gold_by_id, files) == [
        "node a: subtask nope.x is not a gold subtask"
    ]


def test_with_inputs_fills_resources_from_the_subtask(gold_by_id):
    node = {"id": "n", "subtask": "word_writer.insert_image", "app": "word_writer", "category": "document",
            "params": {"src": "s.docx", "picture": "p.png", "dst": "d.docx"}}  # fmt: skip
    filled = tg.with_inputs({"nodes": [node], "edges": []}, gold_by_id)["nodes"][0]
    assert filled["inputs"] == ["s.docx", "p.png"] and filled["output"] == "d.docx"
    unknown = tg.with_inputs({"nodes": [{**node, "subtask": "x.y"}], "edges": []}, gold_by_id)[
        "nodes"
    ][0]
    assert unknown["inputs"] == [] and unknown["output"] == "d.docx"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_composition_lands_in_the_requested_bins(gold, desktop, seed):
    rng = np.random.default_rng(seed)
    targets = [
        {
            "edges": "hard",
            "nodes": "hard",
            "categories": "medium",
            "depth": "hard",
            "width": "medium",
        },
        {"edges": "easy", "nodes": "easy", "categories": "easy", "depth": "easy", "width": "easy"},
        {
            "edges": "medium",
            "nodes": "medium",
            "categories": "hard",
            "depth": "medium",
            "width": "medium",
        },
        {"edges": "hard", "nodes": "hard", "categories": "easy", "depth": "easy", "width": "hard"},
    ]
    for k, target in enumerate(targets):
        task = tg.compose_task(gold, desktop["files"], target, BINS, CAPS, 300, f"t{k}", rng)
        assert task is not None, target
        assert tg.complexity_levels(tg.complexity_measures(task), BINS) == target
        assert task["targets"] == target and task["source"] == "composed"
        assert tg.structural_problems(task, {g["id"]: g for g in gold}, desktop["files"]) == []
    easy = dict.fromkeys(tg.DIMENSIONS, "easy")
    assert (
        tg.compose_task(gold, desktop["files"], {**easy, "width": "hard"}, BINS, CAPS, 5, "x", rng)
        is None
    )


def test_composition_is_deterministic(gold, desktop):
    target = dict.fromkeys(tg.DIMENSIONS, "medium")
    one = tg.compose_task(
        gold, desktop["files"], target, BINS, CAPS, 200, "t", np.random.default_rng(5)
    )
    two = tg.compose_task(
        gold, desktop["files"], target, BINS, CAPS, 200, "t", np.random.default_rng(5)
    )
    assert one == two and one is not None


def test_grow_graph_links_and_chains(gold, desktop):
    rng = np.random.default_rng(0)
    chain = tg.grow_graph(gold, desktop["files"], 5, 1.0, 1.0, "c", rng)
    edges = tg.resource_edges(chain)
    assert len(chain) == 5 and edges == [[f"n{i}", f"n{i + 1}"] for i in range(4)]
    free = tg.grow_graph(gold, desktop["files"], 5, 0.0, 0.0, "f", rng)
    assert tg.resource_edges(free) == [] and all(
        p.startswith("Desktop/out/f_n") for p in [n["output"] for n in free]
    )


def test_instruction_refers_to_intermediate_results(gold_by_id):
    sub = gold_by_id["photo_lab.grayscale"]
    nodes = [
        tg.bind_node(sub, "n0", {"src": "Desktop/photo1.png", "dst": "Desktop/out/a.png"}),
        tg.bind_node(sub, "n1", {"src": "Desktop/photo2.jpg", "dst": "Desktop/out/b.png"}),
        tg.bind_node(sub, "n2", {"src": "Desktop/out/b.png", "dst": "Desktop/out/c.png"}),
        tg.bind_node(sub, "n3", {"src": "Desktop/out/a.png", "dst": "Desktop/out/d.png"}),
    ]
    task = {"nodes": nodes, "edges": tg.resource_edges(nodes)}
    text = tg.compose_instruction(
        task,
        {**gold_by_id, "photo_lab.grayscale": {**sub, "phrasings": []}},
        np.random.default_rng(0),
    )
    clauses = text.split(". Then ")
    assert len(clauses) == 4 and text.endswith(".")
    assert (
        clauses[0]
        == "In PhotoLab, convert Desktop/photo1.png to grayscale and save it as Desktop/out/a.png"
    )
    assert (
        clauses[2]
        == "in PhotoLab, convert the previous result to grayscale and save it as Desktop/out/c.png"
    )
    assert "the image from an earlier step" in clauses[3]


def test_sample_targets_follow_filters_and_feasibility():
    suites = {"p": {"width": ["hard"]}, "q": {"nodes": ["easy"], "edges": ["easy"]}}
    rng = np.random.default_rng(0)
    targets = tg.sample_targets(10, suites, 0.4, rng, lambda t: t["depth"] != "hard")
    assert [t["width"] for t in targets[:4:2]] == ["hard", "hard"]
    assert targets[1]["nodes"] == "easy" and targets[3]["edges"] == "easy"
    assert all(t["depth"] != "hard" for t in targets)
    assert set(targets[0]) == set(tg.DIMENSIONS)


def test_with_inputs_defaults_missing_params_to_empty(gold_by_id):
    known = {"id": "k", "subtask": "word_writer.insert_image", "app": "word_writer",
             "category": "document", "params": {"src": "s.docx"}}  # fmt: skip
    unknown = {**known, "id": "u", "subtask": "x.y", "params": {}}
    filled = tg.with_inputs({"nodes": [unknown, known], "edges": []}, gold_by_id)["nodes"]
    # every node is kept (an unknown subtask does not end the list), missing values are ""
    assert [n["id"] for n in filled] == ["u", "k"]
    assert filled[0]["inputs"] == [] and filled[0]["output"] == ""
    assert filled[1]["inputs"] == ["s.docx", ""] and filled[1]["output"] == ""


def test_feasible_accepts_a_single_node_under_wide_easy_depth():
    # easy depth is 1..3 here: one node (depth 1, no edge) meets every easy level
    easy = dict.fromkeys(tg.DIMENSIONS, "easy")
    bins = {**BINS, "depth": (3, 4)}
    assert tg.feasible(easy, bins, CAPS)
    single = {"nodes": [_node("a", "image", [], "o/a")], "edges": []}
    assert tg.complexity_levels(tg.complexity_measures(single), bins) == easy


def test_sample_targets_filter_exactly_the_share_and_redraw_the_rest():
    suites = {"p": {"width": ["hard"]}}
    # width hard is never feasible: filtered targets keep it, the others redraw until it is not
    targets = tg.sample_targets(
        10, suites, 0.4, np.random.default_rng(0), lambda t: t["width"] != "hard"
    )
    assert [t["width"] == "hard" for t in targets] == [True] * 4 + [False] * 6
    none = tg.sample_targets(
        8, suites, 0.0, np.random.default_rng(0), lambda t: t["width"] != "hard"
    )
    assert all(t["width"] != "hard" for t in none)


def test_sample_targets_give_up_after_the_redraws():
    calls = []

    def never(target):
        calls.append(target)
        return False

    targets = tg.sample_targets(3, {}, 0.0, np.random.default_rng(0), never)
    assert len(calls) == 3 * 50 and targets == [calls[49], calls[99], calls[149]]
    calls.clear()
    tg.sample_targets(2, {}, 0.0, np.random.default_rng(0), never, redraws=5)
    assert len(calls) == 10


def test_wl_hash_is_networkx_weisfeiler_lehman_over_subtask_labels():
    import networkx as nx

    task = _diamond()
    graph = nx.DiGraph()
    graph.add_nodes_from((n["id"], {"label": n["subtask"]}) for n in task["nodes"])
    graph.add_edges_from(map(tuple, task["edges"]))
    # the spec's dedupe key: networkx's WL hash with its default iterations
    assert tg.wl_hash(task) == nx.weisfeiler_lehman_graph_hash(graph, node_attr="label")


def test_grow_graph_never_repeats_a_node_and_names_outputs_by_type(gold_by_id, desktop):
    from paper_pipelines.pipelines.omnibench.discovery import fresh_path

    gray = gold_by_id["photo_lab.grayscale"]
    one_image = [f for f in desktop["files"] if f["type"] == "image"][:1]
    # one subtask, one input file and no links: every further draw repeats the first node
    assert len(tg.grow_graph([gray], one_image, 3, 0.0, 0.0, "r", np.random.default_rng(0))) == 1
    pdf = gold_by_id["paint_pro.image_to_pdf"]
    nodes = tg.grow_graph([gray, pdf], desktop["files"], 4, 1.0, 1.0, "g", np.random.default_rng(0))
    for k, node in enumerate(nodes):
        kind = gold_by_id[node["subtask"]]["output_resources"]["dst"]
        assert node["output"] == fresh_path(f"g_n{k}", kind)


def test_feasible_allows_every_edge_of_a_triangle():
    # three nodes carry at most three edges (a -> b -> c plus a -> c): depth 3, width 1
    bins = {**BINS, "edges": (2, 4), "nodes": (2, 3)}
    target = {"edges": "medium", "nodes": "medium", "categories": "easy", "depth": "medium",
              "width": "easy"}  # fmt: skip
    assert tg.feasible(target, bins, CAPS)
    triangle = [
        _node("a", "image", [], "o/a"),
        _node("b", "image", ["o/a"], "o/b"),
        _node("c", "image", ["o/a", "o/b"], "o/c"),
    ]
    task = {"nodes": triangle, "edges": tg.resource_edges(triangle)}
    assert tg.complexity_levels(tg.complexity_measures(task), bins) == target
