"""The run history: one JSON line per scheduled attempt, skip or miss, appended and never rewritten."""

from __future__ import annotations

import fcntl
import json
import threading
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# Outcomes an attempt or event can have. "success" and "failed"/"timeout"/"killed" are attempts;
# "skipped" (a previous run of the entry still running) and "missed" (past the misfire grace) are not.
ATTEMPT_OUTCOMES = ("success", "failed", "timeout", "killed", "cancelled", "error")
EVENT_OUTCOMES = ("skipped", "missed")

_lock = threading.Lock()


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class History:
    """Append-only JSONL file; safe for the scheduler's threads and for concurrent processes."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def append(self, record: dict[str, Any]) -> dict[str, Any]:
        record = {"logged_at": now_iso(), **record}
        line = json.dumps(record, sort_keys=False, default=str)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with _lock, self.path.open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)  # a cron --once and a scheduler may share the file
            handle.write(line + "\n")
            handle.flush()
            fcntl.flock(handle, fcntl.LOCK_UN)
        return record

    def read(self) -> list[dict[str, Any]]:
        if not self.path.is_file():
            return []
        records = []
        for number, line in enumerate(self.path.read_text().splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:  # a line cut by a crash must not hide the rest
                records.append({"outcome": "corrupt", "line": number})
        return records

    def for_entry(self, name: str) -> list[dict[str, Any]]:
        return [r for r in self.read() if r.get("entry") == name]

    def last_scheduled_for(self, name: str) -> str | None:
        """The latest cron time the entry ran for (any outcome) or was recorded as missed."""
        times = [
            datetime.fromisoformat(r["scheduled_for"])
            for r in self.for_entry(name)
            if r.get("scheduled_for") and r.get("outcome") in (*ATTEMPT_OUTCOMES, "missed")
        ]
        return max(times).isoformat() if times else None


def format_status(
    records: Iterable[dict[str, Any]], next_runs: dict[str, str | None], last: int = 15
) -> str:
    """A per-entry summary (last outcome, last success, next run) and the latest history lines."""
    records = list(records)
    lines = ["Schedule status", ""]
    header = f"{'entry':<22} {'pipeline/env':<18} {'last outcome':<13} {'last success':<30} {'next run':<25}"
    lines += [header, "-" * len(header)]
    entries = dict.fromkeys([*next_runs, *(r.get("entry") for r in records if r.get("entry"))])
    for name in entries:
        mine = [r for r in records if r.get("entry") == name]
        finals = [r for r in mine if r.get("final") or r.get("outcome") in EVENT_OUTCOMES]
        last_outcome = finals[-1]["outcome"] if finals else "-"
        successes = [r for r in mine if r.get("outcome") == "success"]
        last_success = successes[-1].get("started_at", "-") if successes else "-"
        where = (
            f"{mine[-1]['pipeline']}/{mine[-1]['env']}" if mine and "pipeline" in mine[-1] else "-"
        )
        nxt = next_runs.get(name) or ("(not scheduled)" if name not in next_runs else "-")
        lines.append(f"{name:<22} {where:<18} {last_outcome:<13} {last_success:<30} {nxt:<25}")
    lines += ["", f"Last {min(last, len(records))} history lines:"]
    for r in records[-last:]:
        duration = r.get("duration_s")
        duration = f"{duration:8.1f}s" if isinstance(duration, (int, float)) else " " * 9
        attempt = f"{r.get('attempt', '-')}/{r.get('attempts', '-')}"
        record = r.get("save_version") or "-"
        lines.append(
            f"  {r.get('started_at') or r.get('logged_at', '-'):<30} {r.get('entry', '-'):<20} "
            f"{r.get('outcome', '-'):<10} try {attempt:<5} {duration} run_record {record}"
            + (f"  ({r['reason']})" if r.get("reason") else "")
        )
    return "\n".join(lines)
