"""Scheduler semantics with a stand-in for `python -m kedro run` (a shell script, a second or two).

The real `kedro run` subprocess is exercised in test_runs.py; here the interpreter the jobs start is
replaced by a script whose behaviour the test sets, so retries, backoff, timeouts, overlaps, the
--once window and quarantine are checked quickly and exactly.
"""

import json
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from paper_pipelines.ops.history import History, format_status
from paper_pipelines.ops.jobs import JobContext, quarantine, run_entry
from paper_pipelines.ops.scheduler import EmbeddedScheduler, due_entries, run_once
from paper_pipelines.ops.schedules import parse_schedules

FAKE = """#!/usr/bin/env bash
# Stands in for `python -m kedro run ...`; FAKE_* variables say what to do.
echo "$$ $(date +%s.%N) $*" >> "$FAKE_DIR/starts"
n=$(wc -l < "$FAKE_DIR/starts")
sleep "${FAKE_SLEEP:-0}" &
echo $! > "$FAKE_DIR/sleep_pid"
wait
echo "$$ $(date +%s.%N)" >> "$FAKE_DIR/ends"
if [ "$n" -le "${FAKE_FAIL_FIRST:-0}" ]; then echo "RuntimeError: planned failure $n"; exit 1; fi
echo "done"
"""


@pytest.fixture
def fake(tmp_path, monkeypatch):
    """A project folder, a fake interpreter, and a helper that builds schedules for it."""
    project = tmp_path / "project"
    (project / "conf/base").mkdir(parents=True)
    script = tmp_path / "fake_python"
    script.write_text(FAKE)
    script.chmod(0o755)
    monkeypatch.setenv("FAKE_DIR", str(tmp_path))

    def schedules(**entry):
        body = {"pipeline": "ata", "cron": "0 3 * * 0", "retry_backoff_seconds": 0, **entry}
        return parse_schedules({"schedules": {"job": body}})

    return project, str(script), schedules, tmp_path


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


def test_failed_run_is_retried_with_backoff_then_succeeds(fake, monkeypatch):
    project, python, schedules, tmp = fake
    monkeypatch.setenv("FAKE_FAIL_FIRST", "2")
    s = schedules(retries=2, retry_backoff_seconds=0.3)
    ctx = JobContext(project, s, python=python)
    t0 = time.perf_counter()
    assert run_entry(ctx, s.get("job")) == "success"
    assert time.perf_counter() - t0 >= 0.3 + 0.6  # backoff 0.3 then 0.6 s
    records = ctx.history.read()
    assert [(r["attempt"], r["outcome"], r["final"]) for r in records] == [
        (1, "failed", False),
        (2, "failed", False),
        (3, "success", True),
    ]
    assert "planned failure 1" in records[0]["reason"]
    assert all((project / r["log"]).is_file() for r in records)
    assert records[0]["command"][:4] == ["-m", "kedro", "run", "--pipelines=ata"]


def test_failure_after_all_retries_is_recorded_failed(fake, monkeypatch):
    project, python, schedules, _ = fake
    monkeypatch.setenv("FAKE_FAIL_FIRST", "9")
    s = schedules(retries=1)
    ctx = JobContext(project, s, python=python)
    assert run_entry(ctx, s.get("job")) == "failed"
    records = ctx.history.read()
    assert [r["outcome"] for r in records] == ["failed", "failed"]
    assert records[-1]["final"] is True and records[-1]["attempt"] == 2
    status = format_status(records, {"job": None})
    assert "job" in status and "failed" in status


def test_timeout_stops_the_whole_process_group(fake, monkeypatch):
    project, python, schedules, tmp = fake
    monkeypatch.setenv("FAKE_SLEEP", "60")
    s = schedules(retries=0, timeout_seconds=1)
    ctx = JobContext(project, s, python=python)
    t0 = time.perf_counter()
    assert run_entry(ctx, s.get("job")) == "timeout"
    assert time.perf_counter() - t0 < 15
    sleep_pid = int((tmp / "sleep_pid").read_text())
    deadline = time.time() + 5
    while time.time() < deadline and _alive(sleep_pid):
        time.sleep(0.1)
    assert not _alive(sleep_pid), "the run's child process survived the timeout"
    (record,) = ctx.history.read()
    assert record["outcome"] == "timeout" and "timeout_seconds=1" in record["reason"]


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    return "\nState:\tZ" not in state


def test_overlapping_firings_are_skipped_and_logged(fake, caplog, monkeypatch):
    from apscheduler.triggers.interval import IntervalTrigger

    project, python, schedules, tmp = fake
    monkeypatch.setenv("FAKE_SLEEP", "2.5")
    s = schedules(retries=0)
    scheduler = EmbeddedScheduler(
        project, s, python=python, triggers={"job": IntervalTrigger(seconds=1)}
    )
    scheduler.start()
    try:
        time.sleep(6)
    finally:
        scheduler.shutdown()  # stops the run in flight too
    assert not scheduler._scheduler.running
    starts = [float(line.split()[1]) for line in _lines(tmp / "starts")]
    assert 1 <= len(starts) <= 3
    assert all(b - a >= 2.5 for a, b in zip(starts, starts[1:], strict=False)), (
        "two runs overlapped"
    )
    records = History(project / s.scheduler.history).read()
    skipped = [r for r in records if r["outcome"] == "skipped"]
    assert skipped and "still running" in skipped[0]["reason"]
    assert "still running" in caplog.text
    assert {r["outcome"] for r in records} <= {"success", "skipped", "cancelled"}


def test_once_runs_what_is_due_and_coalesces(fake):
    project, python, schedules, tmp = fake
    s = schedules(cron="*/5 * * * *", misfire_grace_seconds=3600)
    now = datetime(2026, 1, 1, 12, 7, tzinfo=UTC)
    assert run_once(project, s, now=now, python=python) == {"job": "success"}
    (first,) = History(project / s.scheduler.history).read()
    assert first["scheduled_for"].startswith("2026-01-01T12:05:00")
    assert run_once(project, s, now=now, python=python) == {}  # nothing new is due
    later = now + timedelta(minutes=16)  # 12:10, 12:15, 12:20 passed: one coalesced run
    ctx = JobContext(project, s, python=python)
    (plan,) = due_entries(ctx, list(s.entries), later)
    assert plan[1].minute == 20 and plan[2] == 3
    assert run_once(project, s, now=later, python=python) == {"job": "success"}
    assert len(_lines(tmp / "starts")) == 2


def test_once_reports_a_firing_past_its_grace_as_missed(fake):
    project, python, schedules, tmp = fake
    s = schedules(cron="0 * * * *", misfire_grace_seconds=600)
    History(project / s.scheduler.history).append(
        {"entry": "job", "outcome": "success", "scheduled_for": "2026-01-01T09:00:00+00:00"}
    )
    now = datetime(2026, 1, 1, 12, 30, tzinfo=UTC)  # 12:00 is 30 min ago, grace is 10 min
    assert run_once(project, s, now=now, python=python) == {}
    records = History(project / s.scheduler.history).read()
    assert records[-1]["outcome"] == "missed" and records[-1]["scheduled_for"].startswith(
        "2026-01-01T12:00"
    )
    assert not _lines(tmp / "starts")
    run_once(project, s, now=now, python=python)  # the same miss is not recorded twice
    assert sum(r["outcome"] == "missed" for r in History(project / s.scheduler.history).read()) == 1


def test_quarantine_moves_only_the_failed_versions(tmp_path):
    root = tmp_path / "data"
    good, bad = "2026-01-01T03.00.00.000Z", "2026-01-08T03.00.00.000Z"
    for version in (good, bad):
        for rel in (
            "08_reporting/ata/metrics.json",
            "06_models/ata/trained_model.pt",
            "08_reporting/dlp/metrics.json",
        ):
            folder = root / rel / version
            folder.mkdir(parents=True)
            (folder / Path(rel).name).write_text(json.dumps({"v": version}))
    moved = quarantine(root, "ata", "job", exact=bad)
    assert sorted(moved) == [
        f"06_models/ata/trained_model.pt/{bad}",
        f"08_reporting/ata/metrics.json/{bad}",
    ]
    assert sorted(p.name for p in (root / "08_reporting/ata/metrics.json").iterdir()) == [good]
    assert (root / "08_reporting/dlp/metrics.json" / bad).is_dir()  # another paper: untouched
    kept = (
        root
        / "09_tracking/quarantine/job"
        / bad
        / "08_reporting/ata/metrics.json"
        / bad
        / "metrics.json"
    )
    assert json.loads(kept.read_text()) == {"v": bad}
    window = (datetime(2026, 1, 1, 2, tzinfo=UTC), datetime(2026, 1, 1, 4, tzinfo=UTC))
    assert len(quarantine(root, "ata", "job", window=window)) == 2
    assert not any((root / "08_reporting/ata/metrics.json").iterdir())


def test_the_schedule_command_starts_and_stops_on_sigterm(project_copy, tmp_path):
    import signal
    import subprocess
    import sys

    log = tmp_path / "scheduler.log"
    with log.open("w") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "paper_pipelines.ops",
                "schedule",
                "--project-path",
                str(project_copy),
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.time() + 60
            while time.time() < deadline and "Scheduler started" not in log.read_text():
                time.sleep(0.1)
            assert "Scheduler started with 2 entries" in log.read_text()
            proc.send_signal(signal.SIGTERM)
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    text = log.read_text()
    assert "Scheduled dlp_weekly" in text and "Scheduler stopped" in text
