"""op1 against si4pipeline, per component, side by side in one run (CPU seconds, BLAS single-threaded).

For the same null datasets (p = 10, 3 % missing, sigma = 1; one random selected feature each, drawn as in
benchmarks/si_pipeline_anchor.py) both implementations run the parametric test; every component's event
is timed on both sides, with the number of calls, and the floor is one plain pipeline evaluation of the
official package per searched interval (``search_count x manager(X, y)``). Writes
data/08_reporting/si_pipeline_profile/summary.json and prints a markdown table.

    .venv/bin/python benchmarks/si_pipeline_op1_profile.py --datasets 10 --n 100 200
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_VENV = Path(os.environ.get("SI4PIPELINE_VENV", ROOT / ".ci" / "venvs" / "si4pipeline"))
HYPER = {
    "soft_ipod": {"lam": 0.02},
    "marginal_screening": {"k": 5},
    "stepwise": {"k": 3},
    "lasso": {"alpha": 0.08},
}
LABELS = {"stepwise_feature_selection": "stepwise"}


def timed_engine(clock: dict, calls: dict):
    """op1's engine with every component event wrapped by a CPU-time counter."""
    from paper_pipelines.pipelines.si_pipeline.dags import namespaced
    from paper_pipelines.pipelines.si_pipeline.engine import DagSelectiveTest

    engine = DagSelectiveTest(namespaced("op1"))

    def wrap(event, label):
        def timed(*args, **kwargs):
            t0 = time.process_time()
            try:
                return event(*args, **kwargs)
            finally:
                clock[label] += time.process_time() - t0
                calls[label] += 1

        return timed

    steps = []
    for s in engine.steps:
        if s.spec.event is not None:
            label = LABELS.get(s.spec.name, s.spec.name) + ".event"
            s = dataclasses.replace(
                s, spec=dataclasses.replace(s.spec, event=wrap(s.spec.event, label))
            )
        steps.append(s)
    engine.steps = steps
    return engine


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--datasets", type=int, default=10)
    ap.add_argument("--n", type=int, nargs="+", default=[100, 200])
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--venv", type=Path, default=DEFAULT_VENV)
    ap.add_argument(
        "--out", type=Path, default=ROOT / "data/08_reporting/si_pipeline_profile/summary.json"
    )
    args = ap.parse_args(argv)
    py = args.venv / "bin" / "python"
    if not py.exists():
        print(f"SKIPPED: no si4pipeline virtualenv at {args.venv}")
        return 0
    from paper_pipelines.pipelines.si_pipeline.data import synthetic_data

    load_before = os.getloadavg()
    clock: dict = defaultdict(float)
    calls: dict = defaultdict(int)
    engine = timed_engine(clock, calls)
    ours, theirs = {}, {}
    with tempfile.TemporaryDirectory(prefix="si_profile_") as tmp:
        for n in args.n:
            kept, attempt = 0, 0
            while kept < args.datasets:
                rng = np.random.default_rng([args.seed, n, 10, attempt])
                attempt += 1
                X, y, _ = synthetic_data(rng, n, 10, 0.0, 3, 0.03)
                state = engine.run(X, y, HYPER)
                if not state["features"]:
                    continue
                j = int(rng.integers(len(state["features"])))
                ident = f"n{n}_{kept:03d}"
                np.savez(Path(tmp) / f"{ident}.npz", X=X, y=y, feature=state["features"][j])
                clock.clear()
                calls.clear()
                t0 = time.process_time()
                res = engine.test(X, y, HYPER, sigma=1.0, features=[j])[0]
                ours[ident] = {
                    "cpu_s": time.process_time() - t0,
                    "search_count": res.result.search_count,
                    "p": res.result.p_value,
                    "components": {k: {"cpu_s": clock[k], "calls": calls[k]} for k in clock},
                }
                kept += 1
        out = Path(tmp) / "official.jsonl"
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
        driver = Path(__file__).with_name("si_pipeline_op1_profile_driver.py")
        subprocess.run([str(py), str(driver), tmp, str(out)], check=True, env=env)
        for line in out.read_text().splitlines():
            r = json.loads(line)
            theirs[r["id"]] = r
    load_after = os.getloadavg()
    summary = {"load_average_before_after": [load_before, load_after], "groups": {}}
    for n in args.n:
        ids = [
            i for i in ours if i.startswith(f"n{n}_") and "error" not in theirs.get(i, {"error": 1})
        ]
        comps = sorted(
            {k for i in ids for k in ours[i]["components"]}
            | {k for i in ids for k in theirs[i]["components"] if k.endswith(".event")}
        )
        g = {
            "datasets": len(ids),
            "same_search_count": sum(
                ours[i]["search_count"] == theirs[i]["search_count"] for i in ids
            ),
            "max_p_diff": max(abs(ours[i]["p"] - theirs[i]["p"]) for i in ids),
            "ours_cpu_s_per_test": float(np.mean([ours[i]["cpu_s"] for i in ids])),
            "official_cpu_s_per_test": float(np.mean([theirs[i]["cpu_s"] for i in ids])),
            "floor_cpu_s_per_test": float(
                np.mean([theirs[i]["search_count"] * theirs[i]["plain_eval_cpu_s"] for i in ids])
            ),
            "search_count_per_test": float(np.mean([ours[i]["search_count"] for i in ids])),
            "components": {},
        }
        g["speedup"] = g["official_cpu_s_per_test"] / g["ours_cpu_s_per_test"]
        # outside the component events: the line search and its p-value bounds, eta, the set-up
        for side, rows in (("ours", ours), ("official", theirs)):
            g[f"rest_{side}_cpu_s_per_test"] = float(
                np.mean(
                    [
                        rows[i]["cpu_s"]
                        - sum(
                            v["cpu_s"]
                            for k, v in rows[i]["components"].items()
                            if k.endswith(".event")
                        )
                        for i in ids
                    ]
                )
            )
        for k in comps:
            o = [ours[i]["components"].get(k, {"cpu_s": 0.0, "calls": 0}) for i in ids]
            t = [theirs[i]["components"].get(k, {"cpu_s": 0.0, "calls": 0}) for i in ids]
            plain = [
                theirs[i]["components"].get(
                    k.replace(".event", ".plain"), {"cpu_s": 0.0, "calls": 0}
                )
                for i in ids
            ]
            g["components"][k] = {
                "ours_cpu_s_per_test": float(np.mean([x["cpu_s"] for x in o])),
                "official_cpu_s_per_test": float(np.mean([x["cpu_s"] for x in t])),
                "calls_per_test_ours": float(np.mean([x["calls"] for x in o])),
                "calls_per_test_official": float(np.mean([x["calls"] for x in t])),
                "official_plain_cpu_s_per_test": float(np.mean([x["cpu_s"] for x in plain])),
            }
        summary["groups"][f"op1/n={n}"] = g
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(summary, indent=2))
    print(f"load average before {load_before}, after {load_after}")
    for key, g in summary["groups"].items():
        print(
            f"\n{key}: {g['datasets']} datasets, same search count {g['same_search_count']}, "
            f"max |p diff| {g['max_p_diff']:.2g}, ours {g['ours_cpu_s_per_test']:.4f} s, official "
            f"{g['official_cpu_s_per_test']:.4f} s ({g['speedup']:.2f}x), floor "
            f"{g['floor_cpu_s_per_test']:.4f} s, {g['search_count_per_test']:.1f} intervals/test"
        )
        print(
            "| component | calls/test (ours, official) | ours CPU s/test | official CPU s/test | ratio |"
        )
        print("|---|---|---|---|---|")
        for k, v in g["components"].items():
            ratio = v["official_cpu_s_per_test"] / max(v["ours_cpu_s_per_test"], 1e-12)
            print(
                f"| {k} | {v['calls_per_test_ours']:.1f}, {v['calls_per_test_official']:.1f} | "
                f"{v['ours_cpu_s_per_test']:.4f} | {v['official_cpu_s_per_test']:.4f} | {ratio:.1f}x |"
            )
        ro, rt = g["rest_ours_cpu_s_per_test"], g["rest_official_cpu_s_per_test"]
        print(
            f"| rest (search, bounds, eta) | - | {ro:.4f} | {rt:.4f} | {rt / max(ro, 1e-12):.1f}x |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
