"""Schedules declared in conf/base/schedules.yml, validated before anything runs.

One file feeds the embedded scheduler (``python -m paper_pipelines.ops schedule``), the cron-style
``--once`` mode and the Airflow DAG generator (``python -m paper_pipelines.ops airflow``).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from paper_pipelines.pipeline_registry import MAIN_JOB, paper_slugs

SCHEDULES_FILE = "schedules.yml"
# Kedro's save/load version format (kedro.io.core.generate_timestamp): 2026-01-31T03.00.00.123Z
VERSION_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}\.\d{2}\.\d{2}\.\d{3}Z$")
NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class ScheduleError(ValueError):
    """A schedules file that cannot be used; the message names the entry, the key and the fix."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SchedulerSettings(_Strict):
    """The ``scheduler:`` block: process-wide settings."""

    timezone: str = "UTC"
    history: str = "data/09_tracking/schedule_history.jsonl"
    logs: str = "data/09_tracking/schedule_logs"
    max_parallel: int = Field(1, ge=1, le=16)

    @field_validator("timezone")
    @classmethod
    def _known_timezone(cls, value: str) -> str:
        from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError(
                f"unknown time zone {value!r} (use an IANA name such as UTC)"
            ) from None
        return value


class ScheduleEntry(_Strict):
    """One scheduled retraining: which pipeline, where, when, with what, and how hard to try."""

    name: str
    pipeline: str
    env: str = "base"
    cron: str
    enabled: bool = True
    params: dict[str, str | int | float | bool] = Field(default_factory=dict)
    load_versions: dict[str, str] = Field(default_factory=dict)
    retries: int = Field(1, ge=0, le=10)
    retry_backoff_seconds: float = Field(300.0, ge=0)
    timeout_seconds: float = Field(7200.0, gt=0)
    misfire_grace_seconds: int = Field(3600, ge=1)
    quarantine_failed: bool = True
    description: str = ""

    @field_validator("name")
    @classmethod
    def _slug_name(cls, value: str) -> str:
        if not NAME_RE.match(value):
            raise ValueError(
                "entry names are lower-case letters, digits and _ (they become job and dag ids)"
            )
        return value

    @field_validator("pipeline")
    @classmethod
    def _known_pipeline(cls, value: str) -> str:
        known = paper_slugs()
        if value != "__default__" and value not in known:
            raise ValueError(
                f"unknown pipeline {value!r}; known pipelines: {', '.join(known)} (and __default__)"
            )
        return value

    @field_validator("cron")
    @classmethod
    def _valid_cron(cls, value: str) -> str:
        from apscheduler.triggers.cron import CronTrigger

        try:
            CronTrigger.from_crontab(value, timezone="UTC")
        except ValueError as exc:
            raise ValueError(
                f"bad cron expression {value!r}: {exc}. Use five fields: minute hour day-of-month "
                'month day-of-week, e.g. "0 3 * * 0" for Sundays at 03:00'
            ) from None
        return value

    @field_validator("params")
    @classmethod
    def _scalar_params(cls, value: dict[str, Any]) -> dict[str, Any]:
        for key, item in value.items():
            if isinstance(item, str) and ("," in item or "=" in item):
                raise ValueError(
                    f"params value for {key!r} contains ',' or '=', which `kedro run --params` cannot carry"
                )
        return value

    @field_validator("load_versions")
    @classmethod
    def _kedro_versions(cls, value: dict[str, str]) -> dict[str, str]:
        for dataset, version in value.items():
            if not VERSION_RE.match(version):
                raise ValueError(
                    f"load version {version!r} for {dataset!r} is not a Kedro version "
                    "(YYYY-MM-DDTHH.MM.SS.mmmZ, the folder name under the dataset)"
                )
        return value

    @model_validator(mode="after")
    def _params_belong_to_the_paper(self) -> ScheduleEntry:
        slug = self.namespace
        stray = sorted(k for k in self.params if k.split(".")[0] != slug)
        if stray:
            raise ValueError(
                f"params {stray} do not belong to pipeline {self.pipeline!r}: a paper's parameters "
                f"are dotted keys under its slug, e.g. '{slug}.seed'"
            )
        return self

    @property
    def namespace(self) -> str:
        """The paper namespace this entry runs (``__default__`` is the main job)."""
        return MAIN_JOB if self.pipeline == "__default__" else self.pipeline

    def trigger(self, timezone: str):
        """The APScheduler cron trigger for this entry."""
        from apscheduler.triggers.cron import CronTrigger

        return CronTrigger.from_crontab(self.cron, timezone=timezone)

    def command(self, python: str) -> list[str]:
        """The fresh-process `kedro run` command this entry launches."""
        # `--pipelines` (plural): Kedro 1.7 deprecates `--pipeline`, which the scheduler would log on every run.
        cmd = [python, "-m", "kedro", "run", f"--pipelines={self.pipeline}", f"--env={self.env}"]
        if self.params:
            cmd.append(
                "--params=" + ",".join(f"{k}={_cli_value(v)}" for k, v in self.params.items())
            )
        if self.load_versions:
            cmd.append(
                "--load-versions=" + ",".join(f"{k}:{v}" for k, v in self.load_versions.items())
            )
        return cmd


def _cli_value(value: Any) -> str:
    # OmegaConf parses the dotlist values as YAML: lower-case booleans round-trip.
    return str(value).lower() if isinstance(value, bool) else str(value)


class Schedules(_Strict):
    """The whole file: scheduler settings and the entries (defaults already applied)."""

    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)
    entries: tuple[ScheduleEntry, ...] = ()

    @property
    def enabled(self) -> list[ScheduleEntry]:
        return [e for e in self.entries if e.enabled]

    def get(self, name: str) -> ScheduleEntry:
        for entry in self.entries:
            if entry.name == name:
                return entry
        raise ScheduleError(
            f"no schedule entry named {name!r}; entries: {', '.join(e.name for e in self.entries)}"
        )


def parse_schedules(
    raw: dict[str, Any] | None, conf_root: Path | None = None, source: str = SCHEDULES_FILE
) -> Schedules:
    """Validate the raw YAML mapping; raise ScheduleError naming every problem at once."""
    raw = raw or {}
    unknown = sorted(set(raw) - {"scheduler", "defaults", "schedules"})
    problems: list[str] = []
    if unknown:
        problems.append(
            f"unknown top-level key(s) {unknown} (allowed: scheduler, defaults, schedules)"
        )
    defaults = raw.get("defaults") or {}
    entries_raw = raw.get("schedules") or {}
    if not isinstance(entries_raw, dict):
        problems.append("'schedules' must be a mapping of entry name -> settings")
        entries_raw = {}
    try:
        settings = SchedulerSettings.model_validate(raw.get("scheduler") or {})
    except ValidationError as exc:
        problems += _messages(exc, "scheduler")
        settings = SchedulerSettings()
    entries: list[ScheduleEntry] = []
    for name, body in entries_raw.items():
        merged = {**defaults, **(body or {}), "name": str(name)}
        try:
            entries.append(ScheduleEntry.model_validate(merged))
        except ValidationError as exc:
            problems += _messages(exc, f"schedules.{name}")
    if conf_root is not None:
        for entry in entries:
            if entry.env not in ("base", "local") and not (conf_root / entry.env).is_dir():
                envs = sorted(p.name for p in conf_root.iterdir() if p.is_dir())
                problems.append(
                    f"schedules.{entry.name}.env = {entry.env!r}: no folder conf/{entry.env} (environments: {', '.join(envs)})"
                )
        if not problems:
            for entry in entries:
                problems += entry_parameter_problems(conf_root, entry)
    if problems:
        raise ScheduleError(
            f"{source} is invalid, nothing was run:\n  - " + "\n  - ".join(problems)
        )
    return Schedules(scheduler=settings, entries=tuple(entries))


def entry_parameter_problems(conf_root: Path, entry: ScheduleEntry) -> list[str]:
    """The entry's ``params`` checked as `kedro run --params` would be, before anything is scheduled.

    The paper's parameters for the entry's environment are loaded with the entry's params on top and
    put through the same check a run makes before its first node (unknown block or key with a
    did-you-mean, ranges, choices, types), so a typo fails here and not at 03:00 as a "success".
    """
    from kedro.config import OmegaConfigLoader
    from kedro.framework.project import pipelines as registry
    from kedro.framework.startup import bootstrap_project

    from paper_pipelines.common.params import ParameterError, check_parameters, nest_dotted
    from paper_pipelines.pipeline_registry import paper_slugs

    bootstrap_project(conf_root.parent)
    from kedro.framework.project import settings

    loader = OmegaConfigLoader(
        conf_source=str(conf_root),
        env=entry.env,
        runtime_params=nest_dotted(dict(entry.params)),
        **{k: v for k, v in settings.CONFIG_LOADER_ARGS.items() if k != "custom_resolvers"},
    )
    try:
        check_parameters(loader["parameters"], [registry[entry.namespace]], paper_slugs())
    except (ParameterError, ValueError) as exc:
        first, *rest = str(exc).splitlines()
        # the run's own hint names the parameter files; for an entry the fix is its params
        lines = [
            ln.strip() for ln in [first, *rest] if ln.strip() and not ln.startswith("Fix it in")
        ]
        return [
            f"schedules.{entry.name}.params (pipeline {entry.namespace}, env {entry.env}): "
            f"{' '.join(lines)} Fix the entry's params in schedules.yml."
        ]
    return []


def _messages(exc: ValidationError, prefix: str) -> list[str]:
    lines = []
    for err in exc.errors():
        loc = ".".join([prefix, *(str(p) for p in err["loc"])])
        msg = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            lines.append(f"{loc}: unknown key")
        elif err["type"] == "missing":
            lines.append(f"{loc}: required but missing")
        else:
            lines.append(f"{loc} = {err.get('input')!r}: {msg}")
    return lines


def load_schedules(
    project_path: Path | str = ".", conf_env: str | None = None, path: Path | str | None = None
) -> Schedules:
    """Read schedules from ``path``, or from conf/ through Kedro's config loader.

    Through conf/, conf/<env>/schedules.yml (default env: local) is soft-merged over
    conf/base/schedules.yml, so a machine can disable or re-time an entry without editing base.
    """
    project_path = Path(project_path).resolve()
    conf_root = project_path / "conf"
    if path is not None:
        path = Path(path)
        if not path.is_file():
            raise ScheduleError(f"schedules file {path} does not exist")
        return parse_schedules(yaml.safe_load(path.read_text()), conf_root, source=str(path))
    if not (conf_root / "base" / SCHEDULES_FILE).is_file():
        raise ScheduleError(f"no {conf_root / 'base' / SCHEDULES_FILE}; see docs/operations.md")
    from kedro.config import OmegaConfigLoader

    loader = OmegaConfigLoader(
        conf_source=str(conf_root),
        base_env="base",
        default_run_env="local",
        env=conf_env,
        config_patterns={"schedules": ["schedules*", "schedules/**"]},
        merge_strategy={"schedules": "soft"},
    )
    return parse_schedules(
        loader["schedules"],
        conf_root,
        source=f"conf/{{base,{conf_env or 'local'}}}/{SCHEDULES_FILE}",
    )


def fire_times(
    entry: ScheduleEntry, timezone: str, start: datetime, end: datetime
) -> list[datetime]:
    """Cron fire times in the half-open window (start, end]."""
    trigger = entry.trigger(timezone)
    times: list[datetime] = []
    moment = trigger.get_next_fire_time(None, start + timedelta(seconds=1))
    while moment is not None and moment <= end:
        times.append(moment)
        moment = trigger.get_next_fire_time(moment, moment + timedelta(seconds=1))
    return times


def next_fire_time(entry: ScheduleEntry, timezone: str, now: datetime) -> datetime | None:
    return entry.trigger(timezone).get_next_fire_time(None, now)
