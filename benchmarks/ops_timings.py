"""Operations timings: scheduler start-up, DaskRunner vs sequential on ata (fast), Airflow validation.

    .venv/bin/python benchmarks/ops_timings.py [--repeats 3] [--skip-dask] [--skip-airflow]

Runs everything in a throw-away project copy (tests.kedro_helpers.make_project_copy), so the
repository's data/ is untouched. Prints the load average with the figures: on a shared 2-core
machine wall times scale with the load. The Airflow part needs the separate Airflow venv
(default /work/venvs/airflow, or PAPER_PIPELINES_AIRFLOW_PYTHON); it is skipped without it.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.kedro_helpers import make_project_copy  # noqa: E402

PY = sys.executable
ENV = {**os.environ, "KEDRO_DISABLE_TELEMETRY": "1", "DO_NOT_TRACK": "1"}


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def timed(cmd: list[str], cwd: Path) -> tuple[float, str]:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, env=ENV, capture_output=True, text=True, timeout=900)
    wall = time.perf_counter() - t0
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
    return wall, done.stdout + done.stderr


def scheduler_startup(project: Path, repeats: int) -> dict:
    walls, inside = [], []
    for _ in range(repeats):
        wall, out = timed([PY, "-m", "paper_pipelines.ops", "schedule", "--dry-run"], project)
        walls.append(wall)
        match = re.search(r"Scheduler start-up: ([\d.]+) s from CLI start", out)
        inside.append(float(match.group(1)) if match else None)
    return {
        "command_wall_s_median": round(statistics.median(walls), 2),
        "cli_start_to_jobs_scheduled_s_median": round(statistics.median(x for x in inside if x), 2),
        "runs": repeats,
    }


def latest_record(project: Path) -> dict:
    folder = project / "data/fast/09_tracking/run_record.json"
    version = sorted(p.name for p in folder.iterdir())[-1]
    return json.loads((folder / version / "run_record.json").read_text())


def metrics_of(project: Path, version: str) -> dict:
    return json.loads(
        (project / "data/fast/08_reporting/ata/metrics.json" / version / "metrics.json").read_text()
    )


def dask_vs_sequential(project: Path) -> dict:
    base = [PY, "-m", "kedro", "run", "--pipeline=ata", "--env=fast"]
    seq_wall, _ = timed(base, project)
    seq = latest_record(project)
    dask_wall, _ = timed(
        [*base, "--runner=paper_pipelines.runners.DaskRunner", "--runner-params=n_workers=2"],
        project,
    )
    dask = latest_record(project)
    return {
        "sequential": {"command_wall_s": round(seq_wall, 1), "pipeline_s": seq["wall_seconds"]},
        "dask_2_workers": {
            "command_wall_s": round(dask_wall, 1),
            "pipeline_s": dask["wall_seconds"],
        },
        "same_metrics": metrics_of(project, seq["save_version"])
        == metrics_of(project, dask["save_version"]),
    }


def airflow(project: Path) -> dict:
    airflow_python = Path(
        os.environ.get("PAPER_PIPELINES_AIRFLOW_PYTHON", "/work/venvs/airflow/bin/python")
    )
    dags = project / "airflow_dags"
    gen_wall, _ = timed(
        [PY, "-m", "paper_pipelines.ops", "airflow", "--target-dir", str(dags)], project
    )
    result = {
        "generate_wall_s": round(gen_wall, 1),
        "dag_files": sorted(p.name for p in dags.glob("*.py")),
    }
    if not airflow_python.exists():
        result["dagbag"] = f"skipped: no {airflow_python}"
        return result
    with tempfile.TemporaryDirectory() as home:
        env = {**ENV, "AIRFLOW_HOME": home}
        t0 = time.perf_counter()
        done = subprocess.run(
            [str(airflow_python), str(ROOT / "tests/ops/airflow_dagbag_check.py"), str(dags)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        wall = time.perf_counter() - t0
    report = json.loads(done.stdout.strip().splitlines()[-1])
    result["dagbag"] = {
        "wall_s": round(wall, 1),
        "airflow_import_s": report["import_s"],
        "parse_s": report["parse_s"],
        "import_errors": report["import_errors"],
        "dag_ids": sorted(report["dags"]),
    }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skip-dask", action="store_true")
    parser.add_argument("--skip-airflow", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        project = make_project_copy(Path(tmp) / "project")
        report: dict = {"load_average_start": load()}
        report["scheduler_startup"] = scheduler_startup(project, args.repeats)
        if not args.skip_dask:
            report["ata_fast_dask_vs_sequential"] = dask_vs_sequential(project)
        if not args.skip_airflow:
            report["airflow"] = airflow(project)
        report["load_average_end"] = load()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
