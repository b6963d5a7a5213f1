"""Lineage across runs: a paper's run records and versioned metrics side by side, and a metric over runs.

Everything is read through the Kedro catalog (``run_record`` and ``<slug>.metrics``, each at a
given version), so the same code works in the CLI (``python -m paper_pipelines.ops runs <slug>``)
and in notebooks/runs_and_lineage.ipynb.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pandas as pd

from paper_pipelines.ops.schedules import VERSION_RE

logger = logging.getLogger(__name__)

RUN_RECORD = "run_record"


def record_versions(catalog) -> list[str]:
    """Every saved version of the ``run_record`` dataset, oldest first."""
    dataset = catalog.get(RUN_RECORD)
    root = str(dataset._filepath)  # versioned datasets keep <filepath>/<version>/<name>
    fs = dataset._fs
    if not fs.exists(root):
        return []
    names = (str(p).rstrip("/").rsplit("/", 1)[-1] for p in fs.ls(root, detail=False))
    return sorted(n for n in names if VERSION_RE.match(n))


def load_runs(catalog, slug: str) -> list[dict[str, Any]]:
    """The run records of every run that included ``slug``, oldest first."""
    runs = []
    for version in record_versions(catalog):
        try:
            record = catalog.load(RUN_RECORD, version=version)
        except Exception as exc:  # an unreadable record is reported, not fatal
            logger.warning("Run record %s unreadable: %s", version, exc)
            continue
        if slug in (record.get("namespaces") or []) or slug in (record.get("pipelines") or []):
            runs.append(record)
    return runs


def _metrics_of(catalog, slug: str, record: dict[str, Any]) -> dict[str, Any] | None:
    """The run's metrics; {"_unreadable": reason} when its file is gone or cannot be read."""
    version = (record.get("outputs") or {}).get(f"{slug}.metrics")
    if not version or record.get("status") != "success":
        return None
    try:
        return catalog.load(f"{slug}.metrics", version=version)
    except Exception as exc:  # moved aside, deleted or damaged since: say so, never show NaN
        reason = str(exc).splitlines()[0][:160] if str(exc) else type(exc).__name__
        return {"_unreadable": reason}


def run_status(record: dict[str, Any]) -> str:
    """The record's status; a "running" record whose process is gone is a run that did not finish."""
    status = record.get("status") or "?"
    if status != "running":
        return status
    pid = record.get("pid")
    if pid:
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return "unfinished (killed or crashed)"
        except (PermissionError, ValueError):
            pass
    return "running"


def headline_keys(metrics: list[dict[str, Any]], limit: int = 6) -> list[str]:
    """Numeric top-level keys in the order the paper writes them (its headline numbers first)."""
    keys: list[str] = []
    for m in metrics:
        for key, value in m.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and key not in keys:
                keys.append(key)
    return keys[:limit]


def _short_versions(versions: dict[str, Any], slug: str) -> str:
    if not versions:
        return "-"
    return "; ".join(
        f"{k.removeprefix(slug + '.')}@{v or 'none'}" for k, v in sorted(versions.items())
    )


def _outputs_summary(outputs: dict[str, Any]) -> str:
    distinct = sorted({v for v in outputs.values() if v})
    if not outputs:
        return "-"
    if len(distinct) == 1:
        return f"{len(outputs)} @ {distinct[0]}"
    return f"{len(outputs)} @ {', '.join(distinct)}"


def runs_table(
    catalog, slug: str, metrics: list[str] | None = None, limit: int = 6
) -> pd.DataFrame:
    """One row per run of ``slug``: when, code, parameters, inputs, outputs, headline metrics."""
    runs = load_runs(catalog, slug)
    loaded = [_metrics_of(catalog, slug, r) for r in runs]
    keys = metrics or headline_keys([m for m in loaded if m and "_unreadable" not in m], limit)
    rows = []
    for record, m in zip(runs, loaded, strict=True):
        git = record.get("git") or {}
        commit = (git.get("commit") or "")[:8] or "-"
        if git.get("dirty"):
            commit += "+dirty"
        overrides = record.get("runtime_params") or {}
        status = run_status(record)
        if m and "_unreadable" in m:
            status, m = f"{status}; metrics unreadable: {m['_unreadable']}", None
        row = {
            "save_version": record.get("save_version"),
            "started_at": record.get("started_at"),
            "status": status,
            "env": record.get("env"),
            "runner": record.get("runner"),
            "wall_s": record.get("wall_seconds"),
            "git": commit,
            "params_hash": (record.get("params_hash") or {}).get(slug, "-"),
            "overrides": ", ".join(f"{k}={v}" for k, v in _flatten(overrides).items()) or "-",
            "pinned": _short_versions(record.get("load_versions_pinned") or {}, slug),
            "inputs": _short_versions(record.get("inputs") or {}, slug),
            # a failed run's record lists what it would have written; its partial outputs are quarantined
            "outputs": _outputs_summary(record.get("outputs") or {})
            if record.get("status") == "success"
            else "- (run failed)",
            "metrics_version": (record.get("outputs") or {}).get(f"{slug}.metrics"),
        }
        for key in keys:
            row[key] = (m or {}).get(key)
        rows.append(row)
    columns = [
        "save_version",
        "started_at",
        "status",
        "env",
        "runner",
        "wall_s",
        "git",
        "params_hash",
        "overrides",
        "pinned",
        "inputs",
        "outputs",
        "metrics_version",
        *keys,
    ]
    return pd.DataFrame(rows, columns=columns)


def _flatten(nested: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in nested.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def changes(table: pd.DataFrame) -> pd.DataFrame:
    """What changed from each run to the next: code, parameters, pinned inputs, and metric deltas."""
    rows = []
    ok = table[table["status"] == "success"].reset_index(drop=True)
    metric_cols = list(table.columns[table.columns.get_loc("metrics_version") + 1 :])
    for i in range(1, len(ok)):
        prev, cur = ok.iloc[i - 1], ok.iloc[i]
        row = {"from": prev["save_version"], "to": cur["save_version"]}
        for col in ("git", "params_hash", "overrides", "pinned", "inputs"):
            row[f"{col}_changed"] = prev[col] != cur[col]
        for col in metric_cols:
            a, b = prev[col], cur[col]
            row[f"d_{col}"] = (
                (b - a) if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None
            )
        rows.append(row)
    return pd.DataFrame(rows)


def plot_metric(table: pd.DataFrame, metric: str, slug: str = ""):
    """A matplotlib Figure of ``metric`` over successful runs, labelled with code and params."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    from matplotlib.figure import Figure

    if metric not in table.columns:
        available = list(table.columns[table.columns.get_loc("metrics_version") + 1 :])
        raise KeyError(f"metric {metric!r} is not in the runs table; headline metrics: {available}")
    ok = table[(table["status"] == "success") & table[metric].notna()]
    fig = Figure(figsize=(max(5.0, 0.9 * len(ok) + 2), 3.4))
    ax = fig.add_subplot()
    x = range(len(ok))
    ax.plot(list(x), ok[metric].astype(float).tolist(), marker="o")
    labels = [
        f"{v[:16]}\n{g} p{h[:6]}"
        for v, g, h in zip(ok["save_version"], ok["git"], ok["params_hash"], strict=True)
    ]
    ax.set_xticks(list(x), labels, fontsize=7)
    ax.set_ylabel(metric)
    ax.set_title(f"{slug}: {metric} over {len(ok)} successful runs" if slug else metric)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def project_catalog(
    project_path: Path | str = ".", env: str | None = None, pipeline: str | None = None
):
    """The Kedro catalog of ``env`` for reading records and metrics (no run is started).

    With ``pipeline``, only that paper's pipeline is imported (as `kedro run --pipeline` does);
    without it, Kedro imports every registered paper to validate parameters.
    """
    from kedro.framework.project import pipelines
    from kedro.framework.session import KedroSession
    from kedro.framework.startup import bootstrap_project

    project_path = Path(project_path).resolve()
    bootstrap_project(project_path)
    requested = pipelines._requested_pipelines  # restored: the caller may use the registry later
    try:
        with KedroSession.create(project_path=project_path, env=env) as session:
            if pipeline:
                pipelines.set_requested([pipeline])
            context = session.load_context()
            if pipeline:
                context._pipelines_to_validate = [pipeline]  # as KedroSession.run scopes it
            return context.catalog
    finally:
        pipelines.set_requested(requested)
