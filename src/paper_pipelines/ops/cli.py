"""`python -m paper_pipelines.ops <command>` (also `paper-pipelines-ops`); `paper-pipelines-schedule`.

Commands:
  schedule [--once] [--dry-run] [--only a,b]   start the embedded scheduler (or run what is due, or plan)
  run <entry>                                   run one entry now, whatever its cron says
  status [--last N]                             the run history: per entry and the latest lines
  validate                                      check conf/base/schedules.yml and print the plan
  runs <slug> [--env fast] [--metric k] [--plot out.png]   lineage across runs of one paper
  airflow [--target-dir airflow_dags]           Airflow 3 DAG files from the same schedules
  report [--env fast] [--run slug=run_id] [--check] [--only a,b] [--mutation-only]
                                                the scoreboard and the pages' results, from runs
                                                (--mutation-only: only the mutation scores, no runs)
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

from paper_pipelines.ops.schedules import ScheduleError, load_schedules, next_fire_time

logger = logging.getLogger("paper_pipelines.ops")


def _setup_logging(verbose: bool) -> None:
    # Kedro configured the root logger with its rich handler on import; plain lines read better
    # in a scheduler's log file, so replace it.
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stdout,
        force=True,
    )
    logging.getLogger("apscheduler").setLevel(logging.INFO if verbose else logging.WARNING)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--project-path", default=".", help="project root (default: the current folder)"
    )
    parser.add_argument(
        "--conf-env",
        default=None,
        help="conf/<env>/schedules.yml soft-merged over base (default: local)",
    )
    parser.add_argument(
        "--schedules", default=None, help="read this schedules file instead of conf/"
    )
    parser.add_argument("-v", "--verbose", action="store_true")


def _schedule_args(parser: argparse.ArgumentParser) -> None:
    _common(parser)
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--once", action="store_true", help="run the entries due now, then exit (for cron)"
    )
    mode.add_argument(
        "--dry-run", action="store_true", help="validate, start, print next runs, stop; run nothing"
    )
    parser.add_argument(
        "--only", default="", help="comma-separated entry names (default: all enabled)"
    )


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m paper_pipelines.ops", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _schedule_args(sub.add_parser("schedule", help="the embedded scheduler"))
    p = sub.add_parser("run", help="run one entry now")
    _common(p)
    p.add_argument("entry")
    p = sub.add_parser("status", help="print the run history")
    _common(p)
    p.add_argument("--last", type=int, default=15)
    p = sub.add_parser("validate", help="check the schedules file")
    _common(p)
    p = sub.add_parser("runs", help="lineage across runs of one paper")
    p.add_argument("slug")
    p.add_argument("--project-path", default=".")
    p.add_argument("--env", default=None, help="Kedro env whose data root to read (e.g. fast)")
    p.add_argument(
        "--metrics", default="", help="comma-separated metric keys (default: the first 6 numeric)"
    )
    p.add_argument(
        "--metric", default=None, help="metric to plot (default: the first headline metric)"
    )
    p.add_argument(
        "--plot",
        default=None,
        help="PNG path (default: <data_root>/09_tracking/lineage/<slug>_<metric>.png)",
    )
    p.add_argument("--no-plot", action="store_true")
    p.add_argument("--long", action="store_true", help="print every column, one run per block")
    p.add_argument("-v", "--verbose", action="store_true")
    p = sub.add_parser("report", help="docs/results.md and the pages' results sections, from runs")
    p.add_argument("--project-path", default=".")
    p.add_argument(
        "--env", default=None, help="Kedro env whose runs to report (default: base runs)"
    )
    p.add_argument("--run", action="append", default=[], help="slug=run_id: report that run")
    p.add_argument("--only", default="", help="comma-separated slugs (default: every paper)")
    p.add_argument("--check", action="store_true", help="verify the pages instead of writing them")
    p.add_argument(
        "--mutation-only",
        action="store_true",
        help="only the mutation scores (pages and scoreboard) from docs/mutation/; needs no runs",
    )
    p.add_argument("-v", "--verbose", action="store_true")
    p = sub.add_parser("airflow", help="generate Airflow 3 DAG files")
    _common(p)
    p.add_argument("--target-dir", default="airflow_dags")
    p.add_argument("--builtin", action="store_true", help="render without kedro-airflow")
    return parser


def _load(args):
    return load_schedules(args.project_path, args.conf_env, args.schedules)


def _plan_lines(schedules, now: datetime) -> list[str]:
    tz = schedules.scheduler.timezone
    lines = []
    for e in schedules.entries:
        nxt = next_fire_time(e, tz, now) if e.enabled else None
        state = f"next {nxt.isoformat()}" if nxt else "disabled"
        lines.append(
            f"  {e.name:<22} {e.pipeline:>6}/{e.env:<5} cron '{e.cron}'  retries {e.retries}  "
            f"timeout {e.timeout_seconds:g}s  {state}"
        )
    return lines


def cmd_schedule(args, t_start: float) -> int:
    from paper_pipelines.ops.scheduler import EmbeddedScheduler, run_once

    schedules = _load(args)
    only = [n for n in args.only.split(",") if n] or None
    if args.once:
        outcomes = run_once(args.project_path, schedules, only=only)
        return 0 if all(o in ("success", "skipped") for o in outcomes.values()) else 1
    scheduler = EmbeddedScheduler(args.project_path, schedules, only=only)
    if args.dry_run:
        scheduler.start()
        logger.info(
            "Scheduler start-up: %.2f s from CLI start to jobs scheduled",
            time.perf_counter() - t_start,
        )
        for name, when in scheduler.next_runs().items():
            print(f"{name}: next run {when}: {' '.join(schedules.get(name).command('python'))}")
        scheduler.shutdown()
        return 0
    logger.info(
        "Starting the scheduler for %s (Ctrl-C stops it)", Path(args.project_path).resolve()
    )
    scheduler.serve_forever()
    return 0


def cmd_status(args) -> int:
    from paper_pipelines.ops.history import History, format_status

    schedules = _load(args)
    history = History(Path(args.project_path).resolve() / schedules.scheduler.history)
    now = datetime.now(UTC)
    next_runs = {
        e.name: (
            nxt.isoformat()
            if (nxt := next_fire_time(e, schedules.scheduler.timezone, now))
            else None
        )
        for e in schedules.enabled
    }
    print(format_status(history.read(), next_runs, last=args.last))
    print(f"\nhistory file: {history.path}")
    return 0


def cmd_runs(args) -> int:
    import pandas as pd

    from paper_pipelines.ops.jobs import data_root
    from paper_pipelines.ops.lineage import plot_metric, project_catalog, runs_table

    project = Path(args.project_path).resolve()
    catalog = project_catalog(project, args.env, pipeline=args.slug)
    metrics = [m for m in args.metrics.split(",") if m] or None
    table = runs_table(catalog, args.slug, metrics=metrics)
    if table.empty:
        print(
            f"No run records of {args.slug} in env {args.env or 'local/base'}; run `kedro run --pipeline={args.slug}` first."
        )
        return 1
    print(f"Runs of {args.slug} ({len(table)}), oldest first:\n")
    if args.long:
        for _, row in table.iterrows():
            print(row.to_string(), "\n")
    else:
        with pd.option_context(
            "display.width", 250, "display.max_columns", 40, "display.max_colwidth", 40
        ):
            print(table.drop(columns=["runner", "metrics_version"]).to_string(index=False))
    if args.no_plot:
        return 0
    metric_cols = list(table.columns[table.columns.get_loc("metrics_version") + 1 :])
    metric = args.metric or (metric_cols[0] if metric_cols else None)
    if metric is None:
        print("\nNo numeric metrics to plot.")
        return 0
    out = (
        Path(args.plot)
        if args.plot
        else data_root(project, args.env or "local")
        / "09_tracking"
        / "lineage"
        / f"{args.slug}_{metric}.png"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    fig = plot_metric(table, metric, slug=args.slug)
    fig.savefig(out, dpi=110)
    print(f"\nPlot of {metric} over runs: {out}")
    return 0


def cmd_airflow(args) -> int:
    from paper_pipelines.ops.airflow import generate_dags

    schedules = _load(args)
    paths = generate_dags(
        args.project_path,
        schedules,
        args.target_dir,
        use_kedro_airflow=False if args.builtin else None,
    )
    for path in paths:
        print(path)
    return 0


def cmd_report(args) -> int:
    from paper_pipelines.ops.report import build, implemented_papers, update_mutation

    project = Path(args.project_path).resolve()
    slugs = [s for s in args.only.split(",") if s] or implemented_papers(project)
    run_ids = dict(item.split("=", 1) for item in args.run)
    started = time.perf_counter()
    if args.mutation_only:
        problems = update_mutation(project, slugs, check=args.check)
    else:
        problems = build(project, slugs, args.env, run_ids, check=args.check)
    for problem in problems:
        print(f"{'FAIL' if args.check else 'skipped'}: {problem}", file=sys.stderr)
    verb = "checked" if args.check else "wrote"
    print(
        f"{verb} {len(slugs) - len(problems)} of {len(slugs)} papers in {time.perf_counter() - started:.1f} s"
    )
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    t_start = time.perf_counter()
    warnings.filterwarnings("ignore", message="register_new_resolver")
    args = build_parser().parse_args(argv)
    _setup_logging(getattr(args, "verbose", False))
    try:
        if args.command == "schedule":
            return cmd_schedule(args, t_start)
        if args.command == "run":
            from paper_pipelines.ops.scheduler import run_now

            outcome = run_now(args.project_path, _load(args), args.entry)
            return 0 if outcome == "success" else 1
        if args.command == "status":
            return cmd_status(args)
        if args.command == "validate":
            schedules = _load(args)
            print(f"{len(schedules.entries)} schedule entries are valid:")
            print("\n".join(_plan_lines(schedules, datetime.now(UTC))))
            return 0
        if args.command == "runs":
            return cmd_runs(args)
        if args.command == "airflow":
            return cmd_airflow(args)
        if args.command == "report":
            return cmd_report(args)
    except ScheduleError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 2


def schedule_main(argv: list[str] | None = None) -> int:
    """`paper-pipelines-schedule [--once|--dry-run] ...` = `python -m paper_pipelines.ops schedule ...`."""
    return main(["schedule", *(sys.argv[1:] if argv is None else argv)])
