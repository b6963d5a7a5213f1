"""Real `kedro run` subprocesses of the ata fast pipeline: scheduled success, failure with retries,
a run killed mid-way, lineage across runs, and the Dask runner on a 2-worker LocalCluster.

One project copy for the module; its first scheduled run (a fresh subprocess, ~10-30 s under
load) is the "last good" state the failure tests must preserve and the Dask run must reproduce.
"""

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from paper_pipelines.ops.cli import main
from paper_pipelines.ops.history import History
from paper_pipelines.ops.jobs import JobContext, run_entry
from paper_pipelines.ops.lineage import plot_metric, project_catalog, runs_table
from paper_pipelines.ops.scheduler import run_now
from paper_pipelines.ops.schedules import load_schedules
from tests.kedro_helpers import latest_json, make_project_copy, run_session, versions_of

SCHEDULES = """
defaults: {env: fast, retry_backoff_seconds: 0.5, timeout_seconds: 600}
schedules:
  ata_fast: {pipeline: ata, cron: "0 3 * * 0", retries: 0}
  ata_broken: {pipeline: ata, cron: "0 3 * * 0", retries: 1, params: {ata.seed: 3}}
  ata_killed: {pipeline: ata, cron: "0 3 * * 0", retries: 0}
"""
OUT = "data/fast"
METRICS = f"{OUT}/08_reporting/ata/metrics.json"
MODEL = f"{OUT}/06_models/ata/trained_model.pt"
DIGITS = f"{OUT}/01_raw/ata/digits_table.parquet"


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project copy with one successful scheduled run of ata (fast env)."""
    path = make_project_copy(tmp_path_factory.mktemp("ops") / "project")
    (path / "conf/base/schedules.yml").write_text(SCHEDULES)
    schedules = load_schedules(path)
    assert run_now(path, schedules, "ata_fast") == "success"
    return path, schedules


def _hashes(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in root.rglob("*")
        if p.is_file() and "09_tracking" not in p.parts
    }


def _latest_loadable_metrics(path: Path) -> dict:
    return project_catalog(path, "fast", pipeline="ata").load("ata.metrics")


def test_scheduled_run_links_its_run_record(project):
    path, schedules = project
    (record,) = History(path / schedules.scheduler.history).for_entry("ata_fast")
    assert record["outcome"] == "success" and record["final"] and record["returncode"] == 0
    assert record["command"] == ["-m", "kedro", "run", "--pipelines=ata", "--env=fast"]
    run_record = json.loads((path / record["run_record"]).read_text())
    assert run_record["status"] == "success" and run_record["env"] == "fast"
    assert run_record["save_version"] == record["save_version"] == record["metrics_version"]
    assert versions_of(path / METRICS) == [record["save_version"]]
    assert record["duration_s"] > 0 and (path / record["log"]).is_file()


def test_failing_run_is_retried_recorded_failed_and_last_good_stays_latest(project):
    path, schedules = project
    before = _hashes(path / OUT)
    good = _latest_loadable_metrics(path)
    metrics_versions, model_versions = versions_of(path / METRICS), versions_of(path / MODEL)

    # The entry was valid when the schedule was loaded; the paper's configuration is then broken
    # under the running scheduler, so the run itself meets the parameter error.
    conf = path / "conf/fast/parameters/ata.yml"
    saved = conf.read_text()
    assert "K: 300" in saved
    conf.write_text(saved.replace("K: 300", "K: -5"))
    try:
        assert run_now(path, schedules, "ata_broken") == "failed"
    finally:
        conf.write_text(saved)

    tries = History(path / schedules.scheduler.history).for_entry("ata_broken")
    # a parameter error fails the same way every time: one try, final, naming the entry and the key
    assert [(t["attempt"], t["outcome"], t["final"]) for t in tries] == [(1, "failed", True)]
    for t in tries:
        assert "ata.sim.K" in t["reason"] and "ata_broken" in t["reason"]
        assert t["retryable"] is False and t["metrics_version"] is None
        # a parameter error stops the run before any node: not even a run record is written
        assert t["run_record"] is None
    assert versions_of(path / METRICS) == metrics_versions
    assert versions_of(path / MODEL) == model_versions
    assert _latest_loadable_metrics(path) == good
    assert _hashes(path / OUT) == before


def test_run_killed_mid_way_leaves_earlier_versions_intact(project):
    path, schedules = project
    before = _hashes(path / OUT)
    good = _latest_loadable_metrics(path)
    digits_before = versions_of(path / DIGITS)
    ctx = JobContext(path.resolve(), schedules)
    outcome: list[str] = []
    worker = threading.Thread(
        target=lambda: outcome.append(run_entry(ctx, schedules.get("ata_killed")))
    )
    worker.start()
    deadline = time.time() + 180
    while time.time() < deadline and versions_of(path / DIGITS) == digits_before:
        time.sleep(0.05)  # wait until the run has written its first versioned output
    proc = ctx.running.get("ata_killed")
    assert proc is not None and versions_of(path / DIGITS) != digits_before, (
        "the run never started writing"
    )
    os.killpg(
        proc.pid, signal.SIGKILL
    )  # our own child's process group, as an OOM kill or crash would
    worker.join(60)

    assert outcome == ["killed"]
    (record,) = History(path / schedules.scheduler.history).for_entry("ata_killed")
    assert record["outcome"] == "killed" and record["final"]
    # the run record written at the start says the run never finished, and `ops runs` shows it
    assert json.loads((path / record["run_record"]).read_text())["status"] == "running"
    table = runs_table(project_catalog(path, "fast", pipeline="ata"), "ata")
    killed = table[table["save_version"] == record["save_version"]]
    assert killed["status"].tolist() == ["unfinished (killed or crashed)"]
    assert any(q.startswith("01_raw/ata/digits_table.parquet/") for q in record["quarantined"])
    assert versions_of(path / DIGITS) == digits_before  # partial version moved to quarantine
    assert _hashes(path / OUT) == before  # every earlier file byte-identical, nothing new left
    assert _latest_loadable_metrics(path) == good


def test_lineage_lists_runs_side_by_side_and_plots_a_metric(project, tmp_path, capsys, monkeypatch):
    from paper_pipelines.pipelines.ata import data as ata_data

    path, schedules = project

    def unreadable(name):
        raise OSError(f"{name}: disk error")

    with monkeypatch.context() as patch:  # a run that fails inside its first node
        patch.setattr(ata_data, "load_sklearn_table", unreadable)
        with pytest.raises(OSError, match="disk error"):
            run_session(path, "ata", env="fast")
    run_session(path, "ata", env="fast", runtime_params={"ata.seed": 1})  # a re-run with a new seed
    table = runs_table(project_catalog(path, "fast", pipeline="ata"), "ata")
    ok = table[table["status"] == "success"]
    assert len(ok) >= 2 and (table["status"] == "failed").sum() >= 1
    first, last = ok.iloc[0], ok.iloc[-1]
    assert first["params_hash"] != last["params_hash"]
    assert last["overrides"] == "ata.seed=1" and first["overrides"] == "-"
    assert first["metrics_version"] == first["save_version"]
    assert first["outputs"].endswith(f"@ {first['save_version']}")  # one consistent version per run
    metric = "runtime_ratio_ata_emp_over_fta"
    assert metric in table.columns and ok[metric].notna().all()
    fig = plot_metric(table, metric, slug="ata")
    assert len(fig.axes[0].lines[0].get_xdata()) == len(ok)

    png = tmp_path / "lineage.png"
    assert (
        main(
            [
                "runs",
                "ata",
                "--project-path",
                str(path),
                "--env",
                "fast",
                "--metric",
                metric,
                "--plot",
                str(png),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "Runs of ata" in printed and "ata.seed=1" in printed and "failed" in printed
    assert png.stat().st_size > 1000


def test_status_prints_the_history(project, capsys):
    path, _ = project
    assert main(["status", "--project-path", str(path)]) == 0
    out = capsys.readouterr().out
    for name in ("ata_fast", "ata_broken"):
        assert name in out
    assert "schedule_history.jsonl" in out


def test_dask_runner_on_two_workers_matches_the_sequential_run(project):
    path, schedules = project
    (sequential,) = History(path / schedules.scheduler.history).for_entry("ata_fast")
    expected = json.loads(
        (path / METRICS / sequential["save_version"] / "metrics.json").read_text()
    )
    cmd = [
        sys.executable,
        "-m",
        "kedro",
        "run",
        "--pipelines=ata",
        "--env=fast",
        "--runner=paper_pipelines.runners.DaskRunner",
        "--runner-params=n_workers=2",
    ]
    env = {**os.environ, "KEDRO_DISABLE_TELEMETRY": "1"}
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=path, env=env, capture_output=True, text=True, timeout=540)
    wall = time.perf_counter() - t0
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    record = latest_json(path / OUT / "09_tracking/run_record.json")
    assert record["runner"] == "DaskRunner" and record["status"] == "success"
    assert set(record["outputs"].values()) == {
        record["save_version"]
    }  # workers kept the driver's version
    dask_metrics = json.loads(
        (path / METRICS / record["save_version"] / "metrics.json").read_text()
    )
    assert dask_metrics == expected
    print(
        f"\nata fast: DaskRunner (2 workers) {wall:.1f} s wall vs sequential {sequential['duration_s']:.1f} s"
    )
