"""omnibench throughput at default scale, and parity with the released evaluator when a checkout is given.

1. Throughput: tasks synthesised (composed + validated) per second and agent steps per second (every
   default agent on the validated tasks), on the default parameters (conf/base/parameters/omnibench.yml),
   TF-IDF retrieval so no model load is timed.
2. Anchor (optional): with ``--official PATH`` (or OMNIBENCH_OFFICIAL) pointing at a read-only checkout
   of github.com/wendell0218/OmniBench, our tasks are exported in its schema (task JSON with ``dag.nodes``
   / ``dag.edges``, a subtask list with ``id`` and ``application``, one evaluation file per subtask), its
   ``evaluator/TaskDAG.py`` is loaded from the checkout, our agents' executed orders are replayed through
   ``update_node_status``, and its completion (``get_completed_levels() / depth``) and its coherence
   (longest same-app run over the executed order and over ``get_all_topo()``, re-implemented here from
   the evaluator's description because evaluator.py imports the VM) are compared with our
   ``completion_code_compat`` and ``coherence`` on every task. Nothing from the checkout is copied or
   committed. Without a checkout this part is skipped.

    .venv/bin/python benchmarks/omnibench_throughput.py [--n-tasks 1000] [--official /path/to/OmniBench]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from paper_pipelines.pipelines.omnibench import data, discovery, study
from paper_pipelines.pipelines.omnibench.metrics import score_episode
from paper_pipelines.pipelines.omnibench.parameters import CapabilityParams, CompositionParams

ROOT = Path(__file__).resolve().parents[1]
AGENTS = [
    "random",
    "oracle_contiguous",
    "oracle_random_order",
    "noisy_oracle",
    "instruction_planner",
]


def build(n_tasks: int) -> tuple[dict, list, list, dict]:
    params = yaml.safe_load((ROOT / "conf/base/parameters/omnibench.yml").read_text())["omnibench"]
    desktop = data.load_desktop(yaml.safe_load((ROOT / data.APPS_FILE).read_text()), None, 3)
    authored = data.parse_authored_tasks(json.loads((ROOT / data.TASKS_FILE).read_text()), desktop)
    rng = np.random.default_rng(0)
    cands = discovery.discover_subtasks(desktop, "explore", 60, 8, 6, rng)
    records, _ = study.synthesize_all(desktop, cands, 3, 0.15, rng)
    gold = [r for r in records if r["status"] != "discarded"]
    composition = CompositionParams(**{**params["composition"], "n_tasks": n_tasks})
    suites = CapabilityParams(**params["capabilities"]).suites
    t0 = time.perf_counter()
    raw, _ = study.compose_benchmark(gold, desktop, composition, suites, rng)
    tasks, _ = study.validate_benchmark(
        raw, authored, gold, desktop, composition.bins.model_dump(), 200, 20
    )
    seconds = time.perf_counter() - t0
    print(f"synthesis: {len(tasks)} validated tasks of {n_tasks} targets in {seconds:.1f} s "
          f"-> {len(tasks) / seconds:.1f} tasks/s")  # fmt: skip
    return desktop, gold, tasks, {"synthesis_seconds": seconds}


def agent_throughput(desktop, gold, tasks) -> list[dict]:
    t0 = time.perf_counter()
    trajectories = study.run_agents(
        tasks, gold, desktop, {"graph": None}, AGENTS, 0.05, "tfidf", 200, 20,
        lambda name: np.random.default_rng(len(name)),
    )  # fmt: skip
    seconds = time.perf_counter() - t0
    steps = sum(t["steps"] for t in trajectories)
    print(
        f"agents: {steps} steps over {len(trajectories)} episodes in {seconds:.1f} s -> {steps / seconds:.0f} steps/s"
    )
    return trajectories


def _official_taskdag(checkout: Path):
    path = checkout / "OmniBench" / "evaluator" / "TaskDAG.py"
    if not path.exists():
        path = checkout / "evaluator" / "TaskDAG.py"
    spec = importlib.util.spec_from_file_location("official_taskdag", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.TaskDAG


def _their_longest_run(ids: list[str], app: dict[str, str]) -> int:
    """The evaluator's longest same-app run (an empty sequence counts as 1, as there)."""
    best, run = 0, 1
    for k in range(1, len(ids)):
        if app[ids[k]] == app[ids[k - 1]]:
            run += 1
        else:
            best, run = max(best, run), 1
    return max(best, run)


def anchor(checkout: Path, tasks: list[dict], trajectories: list[dict], max_nodes: int) -> None:
    TaskDAG = _official_taskdag(checkout)
    by_id = {t["task_id"]: t for t in tasks}
    compared = mismatches = 0
    with tempfile.TemporaryDirectory() as tmp:
        for record in trajectories:
            task = by_id[record["task_id"]]
            if len(task["nodes"]) > max_nodes:
                continue  # get_all_topo enumerates every order (factorial)
            folder = Path(tmp) / task["task_id"]
            folder.mkdir(exist_ok=True)
            edges: dict[str, list[str]] = {}
            for u, v in task["edges"]:
                edges.setdefault(u, []).append(v)
            schema = {
                "task_instruction": task["instruction"],
                "dag": {"nodes": [n["id"] for n in task["nodes"]], "edges": edges},
            }
            (folder / "task.json").write_text(json.dumps(schema))
            for node in task["nodes"]:
                (folder / f"{node['id']}.txt").write_text("# evaluation lives in our simulator\n")
            subtasks = [{"id": n["id"], "application": n["app"]} for n in task["nodes"]]
            with contextlib.redirect_stdout(io.StringIO()):
                dag = TaskDAG(
                    task_id=task["task_id"],
                    json_path=str(folder / "task.json"),
                    subtask_eval_func_dir=str(folder),
                    subtask_list=subtasks,
                )
                for node in record["executed"]:
                    dag.update_node_status(node)
            app = {n["id"]: n["app"] for n in task["nodes"]}
            theirs_completion = dag.get_completed_levels() / dag.depth if dag.depth else 0.0
            lmax = max((_their_longest_run(o, app) for o in dag.get_all_topo()), default=1)
            theirs_coherence = (
                (_their_longest_run(dag.successful_topo, app) - 1) / (lmax - 1) if lmax > 1 else 0.0
            )
            ids = [n["id"] for n in task["nodes"]]
            ours = score_episode(
                ids, task["edges"], app, record["executed"], record["outcome"], task["lmax"]
            )
            compared += 1
            if not (
                np.isclose(ours["completion_code_compat"], theirs_completion)
                and np.isclose(ours["coherence"], theirs_coherence)
            ):
                mismatches += 1
    print(
        f"anchor: {compared} (agent, task) runs replayed through the released TaskDAG; {mismatches} mismatches"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n-tasks", type=int, default=1000)
    parser.add_argument("--official", default=os.environ.get("OMNIBENCH_OFFICIAL"))
    parser.add_argument("--anchor-max-nodes", type=int, default=7)
    args = parser.parse_args()
    desktop, gold, tasks, _ = build(args.n_tasks)
    trajectories = agent_throughput(desktop, gold, tasks)
    if not args.official:
        print("anchor: skipped (no checkout of the released evaluator; pass --official PATH)")
        return
    anchor(Path(args.official), tasks, trajectories, args.anchor_max_nodes)


if __name__ == "__main__":
    main()
