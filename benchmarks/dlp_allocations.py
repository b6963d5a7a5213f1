"""dlp benchmark on SmolLM2-135M: every allocation x base pruner at S = 0.7, and a Wanda sparsity sweep.

Runs the real pipeline twice in the `bench` environment (outputs under data/bench/) and prints, per
configuration: prune wall time, its ratio to uniform Wanda, actual sparsity and perplexity; plus the
peak memory of each run from its run record. `--only lora` measures LoRA recovery (200 steps) instead;
`--only mask_rule` prunes with SparseGPT (uniform S = 0.7, perplexity on the first 8 evaluation windows)
under both of its mask rules, ours (`exact`, floor(s*n) per column block) and the released code's.
Usage: `python benchmarks/dlp_allocations.py [--only grid|sweep|lora|mask_rule]`.
Takes about 15-30 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "data/bench"
# Lists cannot go through `kedro run --params` (it splits on commas), so the runs use the Python API.
RUNS = {
    "grid": {"dlp": {"pruner": {"bases": ["wanda", "sparsegpt", "magnitude"]}}},
    "sweep": {"dlp": {"allocation": {"sweep": [0.5, 0.6, 0.8]}}},
    # LoRA recovery of the default pruned model (DLP + Wanda, S = 0.7), 200 steps of 4 x 256 tokens
    "lora": {"dlp": {"recovery": {"enabled": True}}},
}
# SparseGPT's mask rule (docs/papers/dlp.md, section 5d): the same uniform S = 0.7 prune, both rules
MASK_RULES = ("exact", "released")
for _rule in MASK_RULES:
    RUNS[f"mask_rule_{_rule}"] = {
        "dlp": {
            # every allocation runs (the pipeline asks for the paper's four); uniform's row is read
            "pruner": {"bases": ["sparsegpt"], "sparsegpt": {"mask_rule": _rule}},
            "data": {"eval_windows": 8},
        }
    }  # fmt: skip


def latest(path: Path) -> Path:
    version = sorted(p.name for p in path.iterdir())[-1]
    return path / version / path.name


def run(name: str) -> tuple[pd.DataFrame, dict, float]:
    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    os.environ.setdefault("KEDRO_DISABLE_TELEMETRY", "1")
    bootstrap_project(ROOT)
    started = time.perf_counter()
    with KedroSession.create(project_path=ROOT, env="bench", runtime_params=RUNS[name]) as session:
        session.run(pipeline_names=["dlp"])
    wall = time.perf_counter() - started
    # the full grid (allocation x base x sparsity); dlp.results holds only the headline setting
    runs = pd.read_parquet(latest(BENCH / "07_model_output/dlp/pruning_runs_table.parquet"))
    runs["dense_perplexity"] = json.loads(
        latest(BENCH / "08_reporting/dlp/metrics.json").read_text()
    )["dense_ppl"]
    record = json.loads(latest(BENCH / "09_tracking/run_record.json").read_text())
    return runs, record, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--only", choices=sorted({*RUNS, "mask_rule"} - {*map("mask_rule_{}".format, MASK_RULES)})
    )
    args = parser.parse_args()
    load = os.getloadavg()[0]
    if args.only == "mask_rule":
        for rule in MASK_RULES:
            results, _, wall = run(f"mask_rule_{rule}")
            row = results[
                (results.allocation == "uniform")
                & (results.base == "sparsegpt")
                & (results.target_sparsity == 0.7)
            ].iloc[0]
            print(
                f"mask_rule={rule}: sparsity {row['actual_sparsity']:.6f}, perplexity "
                f"{row['perplexity']:.2f} (dense {row['dense_perplexity']:.2f}); wall {wall:.0f} s, "
                f"load average at start {load:.1f}"
            )
        return
    for name in [args.only] if args.only else ["grid", "sweep"]:
        results, record, wall = run(name)
        if name == "lora":
            recovery = json.loads(
                latest(BENCH / "07_model_output/dlp/lora_recovery.json").read_text()
            )
            print(f"\n## lora (wall {wall:.0f} s, load average at start {load:.1f})")
            print(json.dumps(recovery, indent=1))
            continue
        reference = results[
            (results.allocation == "uniform")
            & (results.base == "wanda")
            & (results.target_sparsity == 0.7)
        ]["prune_seconds"].iloc[0]
        results["time_ratio_to_uniform_wanda"] = results["prune_seconds"] / reference
        columns = [
            "allocation",
            "base",
            "target_sparsity",
            "actual_sparsity",
            "perplexity",
            "prune_seconds",
            "time_ratio_to_uniform_wanda",
        ]
        print(f"\n## {name}: {RUNS[name]}  (wall {wall:.0f} s, load average at start {load:.1f})")
        print(f"dense perplexity {results['dense_perplexity'].iloc[0]:.2f}")
        print(
            f"peak memory {record['peak_memory_mb']['self']:.0f} MB; node seconds {record['node_seconds']}"
        )
        print(results[columns].round(4).to_string(index=False))


if __name__ == "__main__":
    main()
