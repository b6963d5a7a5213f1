"""Ingest for omnibench: the authored desktop (apps as UI graphs, desktop files) and the authored tasks.

Both are checked here, in the first node, before anything is written: a ``goto`` to a screen that does
not exist, a control naming an effect the app lacks, an effect no control triggers, a dialog without an
Edit for one of its effect's slots, a task edge naming a missing node, or a cyclic task graph are errors
that name the entry and the fix.
"""

from __future__ import annotations

from collections import deque
from typing import Any

APPS_FILE = "data/authored/omnibench/apps.yml"
TASKS_FILE = "data/authored/omnibench/authored_tasks.json"
CONTROL_TYPES = {"Button", "MenuItem", "Edit", "TabItem", "ListItem"}


class SpecError(ValueError):
    """An authored app spec or task the pipeline cannot use; the message names the entry and the fix."""


def _fail(where: str, problem: str, fix: str, file: str = APPS_FILE) -> None:
    raise SpecError(f"{file}: {where}: {problem}; {fix}. Nothing was run or written.")


def validate_app(name: str, app: dict, resource_types: set[str]) -> None:
    """One app: every goto names a screen, every effect control an effect, every effect is reachable."""
    where = f"apps.{name}"
    for key in ("title", "category", "home", "screens", "effects"):
        if key not in app:
            _fail(where, f"missing key {key!r}", "add it (see the other apps)")
    screens, effects = app["screens"], app["effects"]
    if app["home"] not in screens:
        _fail(f"{where}.home", f"screen {app['home']!r} is not defined", "name one of its screens")
    triggered: dict[str, str] = {}
    for screen, controls in screens.items():
        labels = [c.get("label") for c in controls]
        if len(set(labels)) != len(labels):
            _fail(f"{where}.screens.{screen}", "duplicate control labels", "make labels unique")
        for i, control in enumerate(controls):
            at = f"{where}.screens.{screen}[{i}]"
            if control.get("type") not in CONTROL_TYPES:
                _fail(
                    at,
                    f"control type {control.get('type')!r}",
                    f"use one of {sorted(CONTROL_TYPES)}",
                )
            if "goto" in control and control["goto"] not in screens:
                _fail(
                    f"{at}.goto",
                    f"dangling screen {control['goto']!r}",
                    f"define screen {control['goto']!r} or point to one of {sorted(screens)}",
                )
            if "effect" in control:
                if control["effect"] not in effects:
                    _fail(
                        f"{at}.effect",
                        f"dangling control: effect {control['effect']!r} is not in {where}.effects",
                        "add the effect or fix the name",
                    )
                triggered[control["effect"]] = screen
            if control.get("type") == "Edit" and "slot" not in control:
                _fail(at, "an Edit control without a slot", "name the slot it fills")
    reachable = reachable_screens(app)
    for effect, spec in effects.items():
        at = f"{where}.effects.{effect}"
        if effect not in triggered:
            _fail(at, "no control triggers this effect", "add a Button with effect: " + effect)
        if triggered[effect] not in reachable:
            _fail(
                at, f"its dialog {triggered[effect]!r} is unreachable from home", "add a goto to it"
            )
        kinds = [*spec["inputs"].values(), spec["output"]]
        unknown = [k for k in kinds if k not in resource_types]
        if unknown:
            _fail(at, f"resource types {unknown} have no desktop file", "add files of that type")
        slots = {c["slot"] for c in screens[triggered[effect]] if c.get("type") == "Edit"}
        missing = [s for s in [*spec["inputs"], "dst"] if s not in slots]
        if missing:
            _fail(at, f"its dialog has no Edit for slots {missing}", "add Edit controls for them")
        for text in [spec["instruction"], *spec.get("phrasings", [])]:
            if [s for s in [*spec["inputs"], "dst"] if "{" + s + "}" not in text]:
                _fail(at, f"instruction {text!r} misses a slot", "mention every {slot}")


def reachable_screens(app: dict) -> set[str]:
    """Screens reachable from home through goto controls (breadth first)."""
    seen, queue = {app["home"]}, deque([app["home"]])
    while queue:
        for control in app["screens"][queue.popleft()]:
            target = control.get("goto")
            if target and target not in seen:
                seen.add(target)
                queue.append(target)
    return seen


def load_desktop(raw: dict, apps: list[str] | None, files_per_type: int) -> dict[str, Any]:
    """The checked desktop: {"apps": {name: spec}, "files": [{path, type}], "categories": [...]}."""
    if not isinstance(raw, dict) or "apps" not in raw or "files" not in raw:
        _fail("top level", "needs keys 'apps' and 'files'", "restore the authored file")
    per_type: dict[str, int] = {}
    files = []
    for entry in raw["files"]:
        if per_type.get(entry["type"], 0) < files_per_type:
            per_type[entry["type"]] = per_type.get(entry["type"], 0) + 1
            files.append({"path": entry["path"], "type": entry["type"]})
    chosen = list(raw["apps"]) if apps is None else list(apps)
    unknown = [a for a in chosen if a not in raw["apps"]]
    if unknown:
        raise SpecError(
            f"omnibench.data.apps names unknown apps {unknown}; choose among {sorted(raw['apps'])}"
        )
    for name in chosen:
        validate_app(name, raw["apps"][name], set(per_type))
    specs = {name: raw["apps"][name] for name in chosen}
    categories = sorted({spec["category"] for spec in specs.values()})
    return {"apps": specs, "files": files, "categories": categories}


def topological_order(nodes: list[str], edges: list[tuple[str, str]]) -> list[str] | None:
    """Kahn's order of the node ids (ties in listed order), or None when the graph has a cycle."""
    indegree = dict.fromkeys(nodes, 0)
    for _, v in edges:
        indegree[v] += 1
    queue = deque(n for n in nodes if indegree[n] == 0)
    order = []
    while queue:
        u = queue.popleft()
        order.append(u)
        for a, b in edges:
            if a == u:
                indegree[b] -= 1
                if indegree[b] == 0:
                    queue.append(b)
    return order if len(order) == len(nodes) else None


def parse_authored_tasks(raw: list, desktop: dict) -> list[dict]:
    """Authored tasks in the released evaluator's schema -> our task dicts, checked structurally."""
    tasks = []
    for k, entry in enumerate(raw or []):
        where = f"tasks[{k}] ({entry.get('task_id', '?')})"
        nodes = list(entry["dag"]["nodes"])
        edges = [(u, v) for u, vs in entry["dag"]["edges"].items() for v in vs]
        for u, v in edges:
            for end in (u, v):
                if end not in nodes:
                    _fail(
                        f"{where}.dag.edges",
                        f"edge {u} -> {v} names subtask {end!r}, which is not in dag.nodes {nodes}",
                        "add the node or remove the edge",
                        TASKS_FILE,
                    )
        if topological_order(nodes, edges) is None:
            _fail(
                f"{where}.dag",
                "the task graph has a cycle",
                "remove an edge of the cycle",
                TASKS_FILE,
            )
        by_id = {s["id"]: s for s in entry["subtasks"]}
        task_nodes = []
        for node in nodes:
            if node not in by_id:
                _fail(
                    f"{where}.subtasks",
                    f"node {node!r} has no subtask entry",
                    "add one",
                    TASKS_FILE,
                )
            app, _, effect = by_id[node]["subtask"].partition(".")
            if app not in desktop["apps"] or effect not in desktop["apps"][app]["effects"]:
                _fail(
                    f"{where}.subtasks.{node}",
                    f"unknown subtask {by_id[node]['subtask']!r}",
                    "use <app>.<effect> from apps.yml",
                    TASKS_FILE,
                )
            task_nodes.append(
                {
                    "id": node,
                    "subtask": by_id[node]["subtask"],
                    "app": app,
                    "category": desktop["apps"][app]["category"],
                    "params": dict(by_id[node]["parameters"]),
                }
            )
        tasks.append(
            {
                "task_id": entry["task_id"],
                "instruction": entry["task_instruction"],
                "source": "authored",
                "nodes": task_nodes,
                "edges": [list(e) for e in edges],
                "targets": None,
            }
        )
    return tasks
