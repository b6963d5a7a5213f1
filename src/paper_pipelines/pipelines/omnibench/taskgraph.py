"""Task graphs, their five complexity measures, composition (process 3) and validation (process 4).

A task is a DAG whose nodes are bound subtasks (one app, a filled instruction template, input and output
resources) with an edge u -> v iff an output resource of u is an input resource of v. The measures are
the paper's Table 2 dimensions: dependency = |E|, instruction = |V|, knowledge = distinct app
categories, hierarchy = depth (longest path counted in nodes, a source has depth 1) and branch = width
(most nodes on one depth level), each binned Easy / Medium / Hard.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import networkx as nx
import numpy as np

from .data import topological_order
from .discovery import fresh_path
from .synthesis import bind

DIMENSIONS = ("edges", "nodes", "categories", "depth", "width")
LEVELS = ("easy", "medium", "hard")
PREVIOUS = "the previous result"
EARLIER = "the {type} from an earlier step"


# ---------------------------------------------------------------- the graph and its measures
def node_depths(nodes: list[str], edges: list[list[str]] | list[tuple[str, str]]) -> dict[str, int]:
    """Depth of each node: 1 for a source, else 1 + the deepest predecessor (as the released TaskDAG)."""
    order = topological_order(nodes, [tuple(e) for e in edges])
    if order is None:
        raise ValueError("the task graph has a cycle")
    depth = dict.fromkeys(nodes, 1)
    for u in order:
        for a, b in edges:
            if a == u:
                depth[b] = max(depth[b], depth[u] + 1)
    return depth


def complexity_measures(task: dict) -> dict[str, int]:
    """Table 2: |E|, |V|, distinct app categories, depth and width of the task graph."""
    ids = [n["id"] for n in task["nodes"]]
    depth = node_depths(ids, task["edges"])
    per_level = Counter(depth.values())
    return {
        "edges": len({tuple(e) for e in task["edges"]}),
        "nodes": len(ids),
        "categories": len({n["category"] for n in task["nodes"]}),
        "depth": max(depth.values(), default=0),
        "width": max(per_level.values(), default=0),
    }


def complexity_level(value: int, bounds: tuple[int, int] | list[int]) -> str:
    """Easy if value <= lo, Medium if value <= hi, else Hard (edges: <= 1, 2-3, >= 4 in the paper)."""
    lo, hi = bounds
    return "easy" if value <= lo else "medium" if value <= hi else "hard"


def complexity_levels(measures: dict[str, int], bins: dict[str, Any]) -> dict[str, str]:
    return {dim: complexity_level(measures[dim], bins[dim]) for dim in DIMENSIONS}


def resource_edges(nodes: list[dict]) -> list[list[str]]:
    """u -> v iff the output of u is one of v's inputs (the paper's resource matching)."""
    producer = {n["output"]: n["id"] for n in nodes}
    edges = []
    for node in nodes:
        for path in node["inputs"]:
            if path in producer and producer[path] != node["id"]:
                edge = [producer[path], node["id"]]
                if edge not in edges:
                    edges.append(edge)
    return edges


def to_networkx(task: dict) -> nx.DiGraph:
    graph = nx.DiGraph()
    for node in task["nodes"]:
        graph.add_node(node["id"], label=node["subtask"], app=node["app"])
    graph.add_edges_from(tuple(e) for e in task["edges"])
    return graph


def wl_hash(task: dict) -> str:
    """Weisfeiler-Lehman hash over subtask-id labels: equal for the same graph of the same subtasks."""
    return nx.weisfeiler_lehman_graph_hash(to_networkx(task), node_attr="label", iterations=3)


# ---------------------------------------------------------------- composition
def level_range(
    dim: str, level: str, bins: dict[str, Any], caps: dict[str, int]
) -> tuple[int, int]:
    """The values of ``dim`` that fall in ``level`` (Hard capped at ``caps[dim]``)."""
    lo, hi = bins[dim]
    floor = {"edges": 0}.get(dim, 1)
    return {"easy": (floor, lo), "medium": (lo + 1, hi), "hard": (hi + 1, caps[dim])}[level]


def feasible(targets: dict[str, str], bins: dict[str, Any], caps: dict[str, int]) -> bool:
    """Cheap necessary conditions; rejection sampling decides the rest."""
    r = {d: level_range(d, targets[d], bins, caps) for d in DIMENSIONS}
    n_lo, n_hi = r["nodes"]
    if any(r[d][0] > r[d][1] for d in DIMENSIONS):
        return False
    # at least depth - 1 edges; depth and width fit in the nodes; an edge needs two nodes
    return (
        r["depth"][0] <= n_hi
        and r["width"][0] <= n_hi
        and r["categories"][0] <= n_hi
        and r["depth"][0] - 1 <= r["edges"][1]
        and r["edges"][0] <= min(2 * (n_hi - 1), n_hi * (n_hi - 1) // 2)
        and r["depth"][0] + r["width"][0] - 1 <= n_hi
    )


def bind_node(subtask: dict, node_id: str, params: dict[str, str]) -> dict:
    return {
        "id": node_id,
        "subtask": subtask["id"],
        "app": subtask["app"],
        "category": subtask["category"],
        "params": params,
        "inputs": [params[s] for s in subtask["input_resources"]],
        "output": params["dst"],
    }


def grow_graph(
    gold: list[dict],
    files: list[dict],
    n_nodes: int,
    link_p: float,
    chain_p: float,
    task_id: str,
    rng: np.random.Generator,
) -> list[dict]:
    """Add subtasks one by one; with prob. ``link_p`` the new one consumes an earlier output (the
    latest with prob. ``chain_p``, else a random one) and is drawn among the subtasks that accept its
    type; every other input is an initial desktop file."""
    by_type: dict[str, list[str]] = {}
    for f in files:
        by_type.setdefault(f["type"], []).append(f["path"])
    nodes: list[dict] = []
    produced: list[tuple[str, str]] = []  # (path, type) in creation order
    seen = set()
    for _ in range(n_nodes * 3):
        if len(nodes) == n_nodes:
            break
        params: dict[str, str] = {}
        pool = gold
        if produced and rng.random() < link_p:
            path, kind = (
                produced[-1]
                if rng.random() < chain_p
                else produced[int(rng.integers(len(produced)))]
            )
            pool = [g for g in gold if kind in g["input_resources"].values()] or gold
            subtask = pool[int(rng.integers(len(pool)))]
            for slot, slot_kind in subtask["input_resources"].items():
                if slot_kind == kind and not params:
                    params[slot] = path
        else:
            subtask = pool[int(rng.integers(len(pool)))]
        for slot, kind in subtask["input_resources"].items():
            if slot not in params:
                params[slot] = by_type[kind][int(rng.integers(len(by_type[kind])))]
        params = {s: params[s] for s in subtask["input_resources"]}
        key = (subtask["id"], tuple(params.values()))
        if key in seen:
            continue
        seen.add(key)
        params["dst"] = fresh_path(f"{task_id}_n{len(nodes)}", subtask["output_resources"]["dst"])
        nodes.append(bind_node(subtask, f"n{len(nodes)}", params))
        produced.append((params["dst"], subtask["output_resources"]["dst"]))
    return nodes


def compose_task(
    gold: list[dict],
    files: list[dict],
    targets: dict[str, str],
    bins: dict[str, Any],
    caps: dict[str, int],
    max_tries: int,
    task_id: str,
    rng: np.random.Generator,
) -> dict | None:
    """Rejection-sample a task whose five measures fall in the ``targets`` levels (None if the budget ends)."""
    if not feasible(targets, bins, caps):
        return None
    all_categories = sorted({g["category"] for g in gold})
    n_lo, n_hi = level_range("nodes", targets["nodes"], bins, caps)
    c_lo, c_hi = level_range("categories", targets["categories"], bins, caps)
    # growth knobs steered by the targets: more links for more edges / depth, latest-output links for
    # depth and narrow graphs, fresh sources for wide ones
    link = {"easy": (0.0, 0.4), "medium": (0.3, 0.8), "hard": (0.7, 1.0)}[targets["edges"]]
    chain = {"easy": (0.0, 0.5), "medium": (0.3, 0.9), "hard": (0.7, 1.0)}[targets["depth"]]
    for _ in range(max_tries):
        n = int(rng.integers(n_lo, n_hi + 1))
        c_top = min(c_hi, n, len(all_categories))
        if c_lo > c_top:
            return None
        c = int(rng.integers(c_lo, c_top + 1))
        chosen = {str(x) for x in rng.choice(all_categories, size=c, replace=False)}
        pool = [g for g in gold if g["category"] in chosen]
        link_p = float(rng.uniform(*link)) if targets["width"] != "easy" else 1.0
        chain_p = float(rng.uniform(*chain)) if targets["width"] != "easy" else 1.0
        nodes = grow_graph(pool, files, n, link_p, chain_p, task_id, rng)
        task = {"task_id": task_id, "nodes": nodes, "edges": resource_edges(nodes)}
        if len(nodes) == n and complexity_levels(complexity_measures(task), bins) == targets:
            return {**task, "source": "composed", "targets": dict(targets)}
    return None


def compose_instruction(task: dict, gold_by_id: dict[str, dict], rng: np.random.Generator) -> str:
    """One instruction for the graph: the subtasks' phrasings in the node order, intermediate
    resources referred to, not named ("the previous result", "the image from an earlier step")."""
    produced_at = {n["output"]: j for j, n in enumerate(task["nodes"])}
    kinds = {
        n["output"]: gold_by_id[n["subtask"]]["output_resources"]["dst"] for n in task["nodes"]
    }
    sentences = []
    for j, node in enumerate(task["nodes"]):
        subtask = gold_by_id[node["subtask"]]
        options = [subtask["instruction_template"], *subtask["phrasings"]]
        template = options[int(rng.integers(len(options)))]
        values = {}
        for slot, path in node["params"].items():
            if slot != "dst" and path in produced_at:
                i = produced_at[path]
                values[slot] = PREVIOUS if i == j - 1 else EARLIER.format(type=kinds[path])
            else:
                values[slot] = path
        sentences.append(bind(template, values))
    text = ". Then ".join(s[0].lower() + s[1:] if k else s for k, s in enumerate(sentences))
    return text + "."


def sample_targets(
    n: int,
    suites: dict[str, dict[str, list[str]]],
    share: float,
    rng: np.random.Generator,
    is_feasible=lambda target: True,
    redraws: int = 50,
) -> list[dict[str, str]]:
    """Target levels: a ``share`` round-robin over the capability filters (the filtered dimensions
    fixed), every other dimension uniform over the levels, redrawn while ``is_feasible`` rejects it."""
    names = list(suites)
    targets = []
    for k in range(n):
        rule = suites[names[k % len(names)]] if names and k < share * n else {}
        for _ in range(redraws):
            target = {d: LEVELS[int(rng.integers(3))] for d in DIMENSIONS}
            for dim, allowed in rule.items():
                target[dim] = allowed[int(rng.integers(len(allowed)))]
            if is_feasible(target):
                break
        targets.append(target)
    return targets


# ---------------------------------------------------------------- validation
def structural_problems(task: dict, gold_by_id: dict[str, dict], files: list[dict]) -> list[str]:
    """Why a task is not a valid benchmark task (empty list when it is): unknown subtask, dangling or
    cyclic edges, an input that no predecessor or desktop file provides, edges that do not match the
    resources."""
    ids = [n["id"] for n in task["nodes"]]
    problems = []
    for node in task["nodes"]:
        if node["subtask"] not in gold_by_id:
            problems.append(f"node {node['id']}: subtask {node['subtask']} is not a gold subtask")
    for u, v in task["edges"]:
        if u not in ids or v not in ids:
            problems.append(f"edge {u} -> {v} names a missing node")
    if problems:
        return problems
    if topological_order(ids, [tuple(e) for e in task["edges"]]) is None:
        return ["the task graph has a cycle"]
    initial = {f["path"] for f in files}
    predecessors = {i: {u for u, v in task["edges"] if v == i} for i in ids}
    output_of = {n["id"]: n["output"] for n in task["nodes"]}
    for node in task["nodes"]:
        provided = initial | {output_of[u] for u in predecessors[node["id"]]}
        for path in node["inputs"]:
            if path not in provided:
                problems.append(f"node {node['id']}: input {path} is not resolvable")
    if sorted(map(tuple, resource_edges(task["nodes"]))) != sorted(map(tuple, task["edges"])):
        problems.append("edges differ from the resource matching")
    return problems


def with_inputs(task: dict, gold_by_id: dict[str, dict]) -> dict:
    """Fill each node's inputs / output from its subtask's resources (authored tasks list params only)."""
    nodes = []
    for node in task["nodes"]:
        subtask = gold_by_id.get(node["subtask"])
        if subtask is None:
            nodes.append({**node, "inputs": [], "output": node["params"].get("dst", "")})
            continue
        nodes.append(
            {
                **node,
                "inputs": [node["params"].get(s, "") for s in subtask["input_resources"]],
                "output": node["params"].get("dst", ""),
            }
        )
    return {**task, "nodes": nodes}
