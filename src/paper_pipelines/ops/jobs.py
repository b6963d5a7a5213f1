"""Run one schedule entry: a fresh `kedro run` subprocess per attempt, retries, timeout, history.

Each attempt is its own process (no leaked torch state, no shared Kedro registry) in its own
process group, so a timeout can stop the run and everything it started. After an attempt the
run record written by ``paper_pipelines.hooks.RunRecordHooks`` is linked into the history. A run
that did not succeed has its partial outputs moved aside (quarantined), so the latest loadable
version of every model and metric stays the last good one.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from pathlib import Path
from typing import Any

from paper_pipelines.ops.history import History, now_iso
from paper_pipelines.ops.schedules import VERSION_RE, ScheduleEntry, Schedules

logger = logging.getLogger(__name__)

RUN_RECORD_DIR = "09_tracking/run_record.json"
QUARANTINE_DIR = "09_tracking/quarantine"
_RECORD_LOG_RE = re.compile(r"Run record (\d{4}-\d{2}-\d{2}T[\d.]+Z) saved")
# A stopped run gets this long to exit after SIGTERM before SIGKILL.
TERMINATE_GRACE_S = 10.0


@dataclass
class JobContext:
    """What every attempt needs: where the project is, where history and logs go, how to stop."""

    project_path: Path
    schedules: Schedules
    python: str = sys.executable
    stop: threading.Event = field(default_factory=threading.Event)
    running: dict[str, subprocess.Popen] = field(default_factory=dict)

    @property
    def history(self) -> History:
        return History(self.project_path / self.schedules.scheduler.history)

    @property
    def logs_root(self) -> Path:
        return self.project_path / self.schedules.scheduler.logs


@lru_cache(maxsize=32)
def data_root(project_path: Path, env: str) -> Path:
    """The env's data root (globals ``data_root``: data, or data/fast in the fast env)."""
    from kedro.config import OmegaConfigLoader

    try:
        loader = OmegaConfigLoader(
            conf_source=str(project_path / "conf"),
            base_env="base",
            default_run_env="local",
            env=env,
            merge_strategy={"globals": "soft"},
        )
        root = loader["globals"].get("data_root", "data")
    except Exception:  # no conf or no globals file: Kedro's default layout
        root = "data"
    return project_path / root


def version_time(version: str) -> datetime:
    return datetime.strptime(version, "%Y-%m-%dT%H.%M.%S.%fZ").replace(tzinfo=UTC)


def _record_versions(root: Path) -> set[str]:
    folder = root / RUN_RECORD_DIR
    return {p.name for p in folder.iterdir() if p.is_dir()} if folder.is_dir() else set()


def _read_record(root: Path, version: str) -> dict[str, Any] | None:
    path = root / RUN_RECORD_DIR / version / "run_record.json"
    try:
        return json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None


def find_run_record(
    root: Path, before: set[str], log_text: str, entry: ScheduleEntry
) -> tuple[str | None, dict[str, Any] | None]:
    """The run record this attempt wrote: named in its log, else the one new record of its pipeline."""
    named = _RECORD_LOG_RE.findall(log_text)
    candidates = [v for v in named if (root / RUN_RECORD_DIR / v).is_dir()]
    if not candidates:
        for version in sorted(_record_versions(root) - before):
            record = _read_record(root, version)
            if (
                record
                and record.get("pipelines") == [entry.pipeline]
                and record.get("env") == entry.env
            ):
                candidates.append(version)
    if not candidates:
        return None, None
    version = candidates[-1]
    return version, _read_record(root, version)


def quarantine(
    root: Path,
    namespace: str,
    entry_name: str,
    exact: str | None = None,
    window: tuple[datetime, datetime] | None = None,
) -> list[str]:
    """Move a failed run's version folders out of the datasets' version lists.

    Kedro loads the newest version folder of a versioned dataset, so a half-written run would
    otherwise become "latest". Folders named ``exact`` (the failed run's save version, from its run
    record) or, when no record exists (killed run), with a version inside ``window``, below a
    ``<namespace>`` folder, move to data_root/09_tracking/quarantine/<entry>/<version>/.
    Nothing is deleted; run records stay where they are.
    """
    moved: list[str] = []
    if not root.is_dir():
        return moved
    skip = (root / "09_tracking").resolve()
    for current, dirs, _files in os.walk(root):
        here = Path(current)
        if here.resolve() == skip:
            dirs[:] = []
            continue
        keep = []
        for name in dirs:
            if not VERSION_RE.match(name):
                keep.append(name)
                continue
            rel = (here / name).relative_to(root)
            if namespace not in rel.parts[:-1]:
                continue
            hit = (
                name == exact
                if exact
                else (window is not None and window[0] <= version_time(name) <= window[1])
            )
            if hit:
                target = root / QUARANTINE_DIR / entry_name / name / rel.parent
                target.mkdir(parents=True, exist_ok=True)
                shutil.move(str(here / name), str(target / name))
                moved.append(rel.as_posix())
        dirs[:] = keep  # never walk into version folders
    return moved


def _stop_process(proc: subprocess.Popen) -> None:
    """SIGTERM then SIGKILL the attempt's process group (the run and any workers it started)."""
    for sig, wait_s in ((signal.SIGTERM, TERMINATE_GRACE_S), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait_s)
            return
        except subprocess.TimeoutExpired:
            continue


def run_attempt(
    ctx: JobContext, entry: ScheduleEntry, attempt: int, scheduled_for: str, trigger: str
) -> dict[str, Any]:
    """One `kedro run` of the entry; returns (and appends to history) what happened."""
    root = data_root(ctx.project_path, entry.env)
    before = _record_versions(root)
    started_at = datetime.now(UTC)
    stamp = started_at.strftime("%Y%m%dT%H%M%S.%fZ")
    log_path = ctx.logs_root / entry.name / f"{stamp}_try{attempt}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    cmd = entry.command(ctx.python)
    env = {
        **os.environ,
        "KEDRO_DISABLE_TELEMETRY": "1",
        "DO_NOT_TRACK": "1",
        "PYTHONUNBUFFERED": "1",
        "COLUMNS": "250",  # the rich log handler must not wrap the run-record line we parse
        "PAPER_PIPELINES_RUN_LABEL": entry.name,  # the run's hook quarantines under the entry's name
    }
    logger.info(
        "Schedule %s: try %d/%d: %s", entry.name, attempt, entry.retries + 1, " ".join(cmd[1:])
    )
    t0 = time.perf_counter()
    outcome, returncode, reason = "error", None, None
    with log_path.open("w") as log:
        try:
            proc = subprocess.Popen(
                cmd,
                cwd=ctx.project_path,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,  # own process group: a timeout stops the whole run
            )
        except OSError as exc:
            proc, reason = None, f"could not start: {exc}"
        if proc is not None:
            ctx.running[entry.name] = proc
            try:
                deadline = t0 + entry.timeout_seconds
                while True:
                    try:
                        returncode = proc.wait(timeout=0.5)
                        break
                    except subprocess.TimeoutExpired:
                        if ctx.stop.is_set():
                            _stop_process(proc)
                            returncode, outcome, reason = (
                                proc.returncode,
                                "cancelled",
                                "scheduler stopped",
                            )
                            break
                        if time.perf_counter() > deadline:
                            _stop_process(proc)
                            returncode = proc.returncode
                            outcome, reason = (
                                "timeout",
                                f"exceeded timeout_seconds={entry.timeout_seconds:g}",
                            )
                            break
            finally:
                ctx.running.pop(entry.name, None)
            if outcome == "error":  # finished on its own
                if returncode == 0:
                    outcome = "success"
                elif returncode is not None and returncode < 0:
                    outcome, reason = "killed", f"killed by signal {-returncode}"
                else:
                    outcome = "failed"
    duration = time.perf_counter() - t0
    finished_at = datetime.now(UTC)
    log_text = log_path.read_text(errors="replace")
    version, record = find_run_record(root, before, log_text, entry)
    if outcome == "failed" and reason is None:
        reason = _last_error_line(log_text)
    # A parameter error fails identically on every try: say which entry, and do not retry it.
    config_error = outcome == "failed" and (
        "ParameterError" in log_text or "Error: Invalid parameters" in log_text
    )
    if config_error:
        reason = (
            f"invalid parameters for schedule entry {entry.name} (fix its params in schedules.yml "
            f"or the paper's parameters; not retried): {reason}"
        )
    if outcome == "success" and record is not None and record.get("status") != "success":
        outcome, reason = "failed", "run record says the run failed"  # defensive: trust the record
    quarantined: list[str] = []
    if outcome != "success" and entry.quarantine_failed:
        if record is not None:  # the run's own hook moved what it could; anything left goes now
            quarantined = list(record.get("quarantined") or []) + quarantine(
                root, entry.namespace, entry.name, exact=version
            )
        else:  # no record (killed, timed out): everything this attempt could have written
            window = (started_at - timedelta(seconds=1), finished_at + timedelta(seconds=1))
            quarantined = quarantine(root, entry.namespace, entry.name, window=window)
        if quarantined:
            logger.warning(
                "Schedule %s: moved %d partial output version(s) to quarantine",
                entry.name,
                len(quarantined),
            )
    metrics_key = f"{entry.namespace}.metrics"
    result = {
        "entry": entry.name,
        "pipeline": entry.pipeline,
        "env": entry.env,
        "trigger": trigger,
        "scheduled_for": scheduled_for,
        "attempt": attempt,
        "attempts": entry.retries + 1,
        "outcome": outcome,
        "returncode": returncode,
        "reason": reason,
        "retryable": not config_error,
        "started_at": started_at.isoformat(timespec="milliseconds"),
        "finished_at": finished_at.isoformat(timespec="milliseconds"),
        "duration_s": round(duration, 3),
        "save_version": version,
        "run_record": (root / RUN_RECORD_DIR / version / "run_record.json")
        .relative_to(ctx.project_path)
        .as_posix()
        if version
        else None,
        "run_status": record.get("status") if record else None,
        # A failed run's record names the versions it would have written; only a success wrote them.
        "metrics_version": (record or {}).get("outputs", {}).get(metrics_key)
        if outcome == "success"
        else None,
        "quarantined": quarantined,
        "log": log_path.relative_to(ctx.project_path).as_posix(),
        "command": cmd[1:],
    }
    return result


def _last_error_line(log_text: str) -> str | None:
    lines = [ln.strip() for ln in log_text.splitlines() if ln.strip()]
    for line in reversed(lines):
        if "Error" in line or "Exception" in line:
            return line[-300:]
    return lines[-1][-300:] if lines else None


def run_entry(
    ctx: JobContext, entry: ScheduleEntry, scheduled_for: str | None = None, trigger: str = "cron"
) -> str:
    """All attempts of one scheduled run: retry with exponential backoff; the final outcome."""
    scheduled_for = scheduled_for or now_iso()
    lock_path = ctx.logs_root / f"{entry.name}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with lock_path.open("w") as lock:
        try:  # one run per entry across processes too (a cron --once beside a scheduler)
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            skipped(ctx, entry, scheduled_for, "another process is running this entry")
            return "skipped"
        try:
            return _attempts(ctx, entry, scheduled_for, trigger)
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def skipped(
    ctx: JobContext, entry: ScheduleEntry, scheduled_for: str, reason: str, outcome: str = "skipped"
) -> None:
    """Record a firing that did not start a run (overlap or misfire), and say so in the log."""
    logger.warning("Schedule %s: run due %s %s: %s", entry.name, scheduled_for, outcome, reason)
    ctx.history.append(
        {
            "entry": entry.name,
            "pipeline": entry.pipeline,
            "env": entry.env,
            "scheduled_for": scheduled_for,
            "outcome": outcome,
            "reason": reason,
        }
    )


def _attempts(ctx: JobContext, entry: ScheduleEntry, scheduled_for: str, trigger: str) -> str:
    attempts = entry.retries + 1
    outcome = "error"
    for attempt in range(1, attempts + 1):
        try:
            result = run_attempt(ctx, entry, attempt, scheduled_for, trigger)
        except Exception as exc:  # the scheduler must survive anything one run does
            logger.exception("Schedule %s: try %d could not run", entry.name, attempt)
            result = {
                "entry": entry.name,
                "pipeline": entry.pipeline,
                "env": entry.env,
                "trigger": trigger,
                "scheduled_for": scheduled_for,
                "attempt": attempt,
                "attempts": attempts,
                "outcome": "error",
                "reason": repr(exc),
                "started_at": now_iso(),
            }
        outcome = result["outcome"]
        last = (
            outcome in ("success", "cancelled")
            or not result.get("retryable", True)
            or attempt == attempts
        )
        result["final"] = last
        ctx.history.append(result)
        level = logging.INFO if outcome == "success" else logging.WARNING
        logger.log(
            level,
            "Schedule %s: try %d/%d %s in %.1f s (run record %s)%s",
            entry.name,
            attempt,
            attempts,
            outcome,
            result.get("duration_s") or 0.0,
            result.get("save_version"),
            f": {result['reason']}" if result.get("reason") else "",
        )
        if last:
            break
        backoff = entry.retry_backoff_seconds * 2 ** (attempt - 1)
        logger.info("Schedule %s: retrying in %.0f s", entry.name, backoff)
        if ctx.stop.wait(backoff):
            ctx.history.append(
                {
                    "entry": entry.name,
                    "pipeline": entry.pipeline,
                    "env": entry.env,
                    "scheduled_for": scheduled_for,
                    "outcome": "cancelled",
                    "reason": "scheduler stopped before the retry",
                    "final": True,
                }
            )
            return "cancelled"
    return outcome
