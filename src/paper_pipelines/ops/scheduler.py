"""The embedded scheduler (APScheduler 3) and the cron-style ``--once`` mode.

Every due entry runs through :func:`paper_pipelines.ops.jobs.run_entry` in a worker thread, which
starts a fresh `kedro run` subprocess per attempt. APScheduler's ``max_instances=1`` skips a
firing while the previous run of the same entry is still going (logged and written to the
history as ``skipped``), ``coalesce=True`` folds a backlog of firings into one run, and
``misfire_grace_time`` drops firings that are too late (history: ``missed``).
"""

from __future__ import annotations

import logging
import signal
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from paper_pipelines.ops.jobs import JobContext, run_entry, skipped
from paper_pipelines.ops.schedules import ScheduleEntry, Schedules, fire_times, next_fire_time

logger = logging.getLogger(__name__)


def latest_fire_time(entry: ScheduleEntry, timezone: str, now: datetime) -> datetime | None:
    """The cron time this firing belongs to (the latest one not after now, within the grace)."""
    times = fire_times(entry, timezone, now - timedelta(seconds=entry.misfire_grace_seconds), now)
    return times[-1] if times else None


def _utc_iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


class EmbeddedScheduler:
    """APScheduler BackgroundScheduler with one job per enabled entry.

    ``triggers`` maps entry names to APScheduler triggers that replace the cron trigger; tests use
    an ``IntervalTrigger`` of a second or two instead of waiting for a cron minute.
    """

    def __init__(
        self,
        project_path: Path | str,
        schedules: Schedules,
        only: list[str] | None = None,
        python: str = sys.executable,
        triggers: dict[str, Any] | None = None,
    ) -> None:
        from apscheduler.executors.pool import ThreadPoolExecutor
        from apscheduler.schedulers.background import BackgroundScheduler

        self.schedules = schedules
        self.ctx = JobContext(Path(project_path).resolve(), schedules, python=python)
        self.entries = [e for e in schedules.enabled if not only or e.name in only]
        unknown = sorted(set(only or ()) - {e.name for e in schedules.entries})
        if unknown:
            raise ValueError(
                f"unknown schedule entries {unknown}; entries: {[e.name for e in schedules.entries]}"
            )
        self.triggers = triggers or {}
        self.timezone = schedules.scheduler.timezone
        self._scheduler = BackgroundScheduler(
            timezone=self.timezone,
            executors={"default": ThreadPoolExecutor(schedules.scheduler.max_parallel)},
        )

    def start(self) -> None:
        from apscheduler.events import EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED

        for entry in self.entries:
            self._scheduler.add_job(
                self._run,
                trigger=self.triggers.get(entry.name) or entry.trigger(self.timezone),
                args=[entry],
                id=entry.name,
                name=f"{entry.pipeline} ({entry.env})",
                max_instances=1,
                coalesce=True,
                misfire_grace_time=entry.misfire_grace_seconds,
            )
        self._scheduler.add_listener(self._on_event, EVENT_JOB_MAX_INSTANCES | EVENT_JOB_MISSED)
        self._scheduler.start()
        for job in self._scheduler.get_jobs():
            logger.info("Scheduled %s: %s, next run %s", job.id, job.name, job.next_run_time)
        logger.info(
            "Scheduler started with %d entr%s",
            len(self.entries),
            "y" if len(self.entries) == 1 else "ies",
        )

    def next_runs(self) -> dict[str, str | None]:
        return {
            job.id: job.next_run_time.isoformat() if job.next_run_time else None
            for job in self._scheduler.get_jobs()
        }

    def _run(self, entry: ScheduleEntry) -> str:
        now = datetime.now(UTC)
        fired = (
            latest_fire_time(entry, self.timezone, now) if entry.name not in self.triggers else None
        )
        return run_entry(self.ctx, entry, _utc_iso(fired or now), trigger="scheduler")

    def _on_event(self, event) -> None:
        from apscheduler.events import EVENT_JOB_MAX_INSTANCES

        entry = next((e for e in self.entries if e.name == event.job_id), None)
        if entry is None:
            return
        if event.code == EVENT_JOB_MAX_INSTANCES:
            when = event.scheduled_run_times[-1] if event.scheduled_run_times else datetime.now(UTC)
            skipped(
                self.ctx, entry, _utc_iso(when), "the previous run of this entry is still running"
            )
        else:
            skipped(
                self.ctx,
                entry,
                _utc_iso(event.scheduled_run_time),
                f"missed by more than misfire_grace_seconds={entry.misfire_grace_seconds}",
                outcome="missed",
            )

    def shutdown(self, wait: bool = True) -> None:
        """Stop firing; runs in progress are stopped (SIGTERM, then SIGKILL) and recorded as cancelled."""
        self.ctx.stop.set()
        if self._scheduler.running:
            self._scheduler.shutdown(wait=wait)
        logger.info("Scheduler stopped")

    def serve_forever(self) -> None:
        """Start and block until SIGINT/SIGTERM."""
        done = threading.Event()

        def _stop(signum, _frame):
            logger.info("Signal %d: stopping the scheduler", signum)
            done.set()

        signal.signal(signal.SIGINT, _stop)
        signal.signal(signal.SIGTERM, _stop)
        self.start()
        while not done.wait(1.0):
            pass
        self.shutdown(wait=True)


def due_entries(
    ctx: JobContext, entries: list[ScheduleEntry], now: datetime
) -> list[tuple[ScheduleEntry, datetime | None, int, datetime | None]]:
    """For each entry: (entry, scheduled time to run now or None, coalesced firings, missed time).

    An entry is due when a cron time passed since its last recorded run and no longer ago than its
    misfire grace; several such times coalesce into one run. Older ones are reported as missed.
    """
    tz = ctx.schedules.scheduler.timezone
    plans = []
    for entry in entries:
        last = ctx.history.last_scheduled_for(entry.name)
        last_dt = datetime.fromisoformat(last) if last else None
        grace_start = now - timedelta(seconds=entry.misfire_grace_seconds)
        start = max(grace_start, last_dt) if last_dt else grace_start
        fires = fire_times(entry, tz, start, now)
        missed = None
        if last_dt and last_dt < grace_start:
            older = fire_times(entry, tz, last_dt, grace_start)
            missed = older[-1] if older else None
        plans.append((entry, fires[-1] if fires else None, len(fires), missed))
    return plans


def run_once(
    project_path: Path | str,
    schedules: Schedules,
    only: list[str] | None = None,
    now: datetime | None = None,
    python: str = sys.executable,
) -> dict[str, str]:
    """Run every entry that is due now, one after the other, and return their outcomes."""
    ctx = JobContext(Path(project_path).resolve(), schedules, python=python)
    entries = [e for e in schedules.enabled if not only or e.name in only]
    now = now or datetime.now(UTC)
    outcomes: dict[str, str] = {}
    t0 = time.perf_counter()
    for entry, scheduled, count, missed in due_entries(ctx, entries, now):
        if missed is not None:
            skipped(
                ctx,
                entry,
                _utc_iso(missed),
                "past misfire_grace_seconds when --once ran",
                outcome="missed",
            )
        if scheduled is None:
            logger.info(
                "Schedule %s: not due (next %s)",
                entry.name,
                next_fire_time(entry, schedules.scheduler.timezone, now),
            )
            continue
        if count > 1:
            logger.info("Schedule %s: %d firings coalesced into one run", entry.name, count)
        outcomes[entry.name] = run_entry(ctx, entry, _utc_iso(scheduled), trigger="once")
    logger.info(
        "--once finished in %.1f s: %s", time.perf_counter() - t0, outcomes or "nothing was due"
    )
    return outcomes


def run_now(
    project_path: Path | str, schedules: Schedules, name: str, python: str = sys.executable
) -> str:
    """Run one entry immediately, whatever its cron says (``ops run <entry>``)."""
    ctx = JobContext(Path(project_path).resolve(), schedules, python=python)
    return run_entry(ctx, schedules.get(name), trigger="manual")
