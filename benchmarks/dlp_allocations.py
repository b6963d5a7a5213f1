"""dlp benchmark on SmolLM2-135M: every allocation x base pruner at S = 0.7, and a Wanda sparsity sweep.

Runs the real pipeline twice in the `bench` environment (outputs under data/bench/) and prints, per
configuration: prune wall time, its ratio to uniform Wanda, actual sparsity and perplexity; plus the
peak memory of each run from its run record. Usage: `python benchmarks/dlp_allocations.py [--only grid|sweep]`.
Takes about 15-30 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "data/bench"
RUNS = {
    "grid": "dlp.pruner.bases=[wanda,sparsegpt,magnitude]",
    "sweep": "dlp.allocation.sweep=[0.5,0.6,0.8]",
}


def latest(path: Path) -> Path:
    version = sorted(p.name for p in path.iterdir())[-1]
    return path / version / path.name


def run(name: str) -> tuple[pd.DataFrame, dict, float]:
    env = {**os.environ, "KEDRO_DISABLE_TELEMETRY": "1"}
    kedro = Path(sys.executable).with_name("kedro")
    started = time.perf_counter()
    subprocess.run(
        [str(kedro), "run", "--pipeline=dlp", "--env=bench", f"--params={RUNS[name]}"],
        cwd=ROOT,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
    )
    wall = time.perf_counter() - started
    results = pd.read_parquet(latest(BENCH / "08_reporting/dlp/results.parquet"))
    record = json.loads(latest(BENCH / "09_tracking/run_record.json").read_text())
    return results, record, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--only", choices=sorted(RUNS))
    args = parser.parse_args()
    load = os.getloadavg()[0]
    for name in [args.only] if args.only else list(RUNS):
        results, record, wall = run(name)
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
