"""Project hooks: clear errors before a run starts, and a run record for every run."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import resource
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kedro.framework.hooks import hook_impl
from kedro.io import AbstractVersionedDataset, MemoryDataset

logger = logging.getLogger(__name__)

RUN_RECORD = "run_record"


class InputCheckHooks:
    """Fail before any node runs when a parameter block or an input file is missing."""

    # First of all before_pipeline_run hooks: a refused run must not leave even a "running" record.
    @hook_impl(tryfirst=True)
    def before_pipeline_run(self, run_params: dict[str, Any], pipeline, catalog) -> None:
        missing_params = sorted(
            name for name in pipeline.inputs() if name.startswith("params:") and name not in catalog
        )
        if missing_params:
            slugs = sorted({name.removeprefix("params:").split(".")[0] for name in missing_params})
            files = ", ".join(f"conf/base/parameters/{slug}.yml" for slug in slugs)
            raise ValueError(
                f"Parameters {missing_params} are not defined. Each paper reads its parameters from "
                f"a top-level key named after its slug in {files}; restore that file (git checkout "
                f"conf/base/parameters/) or pass the keys with --params."
            )
        _check_devices(pipeline, catalog)
        for name in sorted(pipeline.inputs()):
            if name.startswith("params:") or name == "parameters" or name not in catalog:
                continue
            dataset = catalog.get(name)
            if isinstance(dataset, MemoryDataset):
                continue
            if not catalog.exists(name):
                described = getattr(dataset, "_filepath", None) or dataset
                pinned = getattr(getattr(dataset, "_version", None), "load", None)
                if pinned:
                    from paper_pipelines.catalog import available_versions

                    raise FileNotFoundError(
                        f"Version {pinned} of input dataset '{name}' does not exist in {described} "
                        f"(newest there: {', '.join(available_versions(dataset)[-5:]) or 'none'}). "
                        f"Fix --load-versions={name}:<version> (or the schedule entry's "
                        f"load_versions); nothing was run or written."
                    )
                if name in _produced_anywhere():
                    fix = (
                        f"Run the nodes that produce it first (kedro run --pipeline="
                        f"{name.split('.')[0]}), or place the file there"
                    )
                else:  # no node writes it: a file the user supplies
                    fix = (
                        f"It is an input you supply: put your file there, or point the entry "
                        f"'{name}' in conf/<env>/catalog/ at it"
                    )
                raise FileNotFoundError(
                    f"Input dataset '{name}' has no data at {described}. {fix}; nothing was run or "
                    f"written."
                )


def _produced_anywhere() -> set[str]:
    """Every dataset some registered pipeline's node writes."""
    from kedro.framework.project import pipelines

    return set().union(*(p.all_outputs() for p in pipelines.values()))


def _check_devices(pipeline, catalog) -> None:
    """A `runtime.device` of cuda on a machine without a GPU fails here, before any node writes.

    Validation cannot check this (conf/paper asks for cuda and is validated on CPU machines), so it is
    checked for the run that is about to start; torch is imported only when a GPU is requested.
    """
    from paper_pipelines.common.params import ParameterError, RuntimeParams

    for name in sorted(pipeline.inputs()):
        if not name.startswith("params:") or name not in catalog:
            continue
        block = catalog.load(name)
        if isinstance(block, RuntimeParams) and block.device.startswith("cuda"):
            import torch

            if not torch.cuda.is_available():
                key = name.removeprefix("params:")
                raise ParameterError(
                    f"parameter {key}.device = {block.device!r}, but no CUDA GPU is visible; use "
                    f"'auto' or 'cpu' (--params \"{key}.device=auto\"); nothing was run or written."
                )


def _git_commit(project_path: Path) -> dict[str, Any]:
    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=project_path, capture_output=True, text=True, timeout=10, check=True
        ).stdout.strip()

    try:
        return {"commit": git("rev-parse", "HEAD"), "dirty": bool(git("status", "--porcelain"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


def _params_hash(parameters: dict[str, Any], namespaces: list[str]) -> dict[str, str]:
    """sha256 (first 16 hex) of each namespace's resolved parameter block."""
    hashes = {}
    for ns in namespaces:
        if ns in parameters:
            blob = json.dumps(parameters[ns], sort_keys=True, default=str).encode()
            hashes[ns] = hashlib.sha256(blob).hexdigest()[:16]
    return hashes


def _dataset_versions(catalog, names: set[str], which: str) -> dict[str, str | None]:
    """Resolved load or save version of every versioned dataset in `names`."""
    versions = {}
    for name in sorted(names):
        if name.startswith("params:") or name == "parameters" or name not in catalog:
            continue
        dataset = catalog.get(name)
        if not isinstance(dataset, AbstractVersionedDataset):
            continue
        try:
            versions[name] = (
                dataset.resolve_load_version()
                if which == "load"
                else dataset.resolve_save_version()
            )
        except Exception:  # a version that does not exist yet is recorded as None
            versions[name] = None
    return versions


def _runner_name(runner: Any) -> str | None:
    if runner in (None, "None"):  # KedroSession.run without a runner uses SequentialRunner
        return "SequentialRunner"
    text = runner if isinstance(runner, str) else type(runner).__name__
    # run_params carries the runner's repr ("<kedro.runner....SequentialRunner object at 0x...>")
    return text.strip("<>").split(" object")[0].rsplit(".", 1)[-1]


def _peak_memory_mb() -> dict[str, float]:
    # ru_maxrss is in kB on Linux.
    return {
        "self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024,
    }


class RunRecordHooks:
    """Writes one versioned JSON record per run to the `run_record` dataset.

    The record is computed on the driver from the pipeline and the catalog, so it is complete
    under every runner; node timings come from node hooks and are present for in-process runners.
    """

    def __init__(self) -> None:
        self._started = 0.0
        self._node_seconds: dict[str, float] = {}
        self._node_start: dict[str, float] = {}

    @hook_impl
    def before_pipeline_run(self, run_params, pipeline, catalog) -> None:
        self._started = time.perf_counter()
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._node_seconds, self._node_start = {}, {}
        # Written now and completed at the end: a run killed in between leaves a record that says so.
        self._write(run_params, pipeline, catalog, status="running", error=None)

    @hook_impl
    def before_node_run(self, node) -> None:
        self._node_start[node.name] = time.perf_counter()

    @hook_impl
    def after_node_run(self, node) -> None:
        start = self._node_start.pop(node.name, None)
        if start is not None:
            self._node_seconds[node.name] = round(time.perf_counter() - start, 3)

    @hook_impl
    def after_pipeline_run(self, run_params, pipeline, catalog) -> None:
        self._write(run_params, pipeline, catalog, status="success", error=None)

    @hook_impl
    def on_pipeline_error(self, error, run_params, pipeline, catalog) -> None:
        moved = _move_failed_run_aside(run_params, pipeline, catalog)
        self._write(run_params, pipeline, catalog, status="failed", error=repr(error), moved=moved)

    def _write(
        self, run_params, pipeline, catalog, status: str, error: str | None, moved=None
    ) -> None:
        if RUN_RECORD not in catalog:
            return
        namespaces = sorted({n.namespace.split(".")[0] for n in pipeline.nodes if n.namespace})
        try:
            parameters = catalog.load("parameters")
        except Exception:
            parameters = {}
        record_ds = catalog.get(RUN_RECORD)
        record = {
            "run_id": run_params.get("run_id"),
            "save_version": record_ds.resolve_save_version(),
            "status": status,
            "error": error,
            "started_at": getattr(self, "_started_at", None),
            "wall_seconds": round(time.perf_counter() - self._started, 3),
            "pipelines": run_params.get("pipeline_names") or ["__default__"],
            "namespaces": namespaces,
            "env": run_params.get("env"),
            "runner": _runner_name(run_params.get("runner")),
            "runtime_params": run_params.get("runtime_params") or {},
            "load_versions_pinned": run_params.get("load_versions") or {},
            "kedro_version": run_params.get("kedro_version"),
            "git": _git_commit(Path(run_params.get("project_path") or ".")),
            "params_hash": _params_hash(parameters, namespaces),
            "inputs": _dataset_versions(catalog, pipeline.inputs(), "load"),
            "outputs": _dataset_versions(catalog, pipeline.all_outputs(), "save"),
            "node_seconds": self._node_seconds,
            "peak_memory_mb": _peak_memory_mb(),
        }
        if status == "running":
            record["pid"] = os.getpid()
        if moved is not None:
            record["quarantined"] = moved
        try:
            path = _local_record_path(record_ds)
            if path is None:  # a remote store: one save at the end
                if status != "running":
                    catalog.save(RUN_RECORD, record)
            else:  # the same file rewritten in place: "running" first, then the outcome
                path.parent.mkdir(parents=True, exist_ok=True)
                partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
                partial.write_text(json.dumps(record, indent=2, default=str))
                os.replace(partial, path)
            if status != "running":
                logger.info("Run record %s saved (%s)", record["save_version"], status)
        except Exception as exc:  # a failed record must never mask the run's own outcome
            logger.warning("Could not save the run record: %s", exc)


def _move_failed_run_aside(run_params, pipeline, catalog) -> list[str]:
    """Move the version folders a failed run wrote out of every dataset's version list.

    Kedro loads the newest version, so without this a failed run's partial outputs would become
    "latest" for the next run and for kedro-viz. One mechanism for every entry point (a manual
    `kedro run`, the embedded scheduler, an Airflow task): the folders go to
    <data_root>/09_tracking/quarantine/<label>/<version>/, where <label> is the schedule entry
    (PAPER_PIPELINES_RUN_LABEL, set by the scheduler) or "manual". Nothing is deleted.
    """
    if RUN_RECORD not in catalog:
        return []
    from paper_pipelines.ops.jobs import data_root, quarantine

    version = catalog.get(RUN_RECORD).resolve_save_version()
    root = data_root(
        Path(run_params.get("project_path") or ".").resolve(), run_params.get("env") or "local"
    )
    label = os.environ.get("PAPER_PIPELINES_RUN_LABEL") or "manual"
    moved: list[str] = []
    for ns in sorted({n.namespace.split(".")[0] for n in pipeline.nodes if n.namespace}):
        moved += quarantine(root, ns, label, exact=version)
    if moved:
        logger.warning(
            "The run failed: its %d new version folder(s) were moved to %s so that the previous "
            "versions stay latest",
            len(moved),
            root / "09_tracking" / "quarantine" / label / version,
        )
    return moved


def _local_record_path(dataset) -> Path | None:
    """The file of this run's record version when the record lives on the local filesystem."""
    if getattr(dataset, "_protocol", "file") not in ("file", None) or not isinstance(
        dataset, AbstractVersionedDataset
    ):
        return None
    from kedro.io.core import get_filepath_str

    version = dataset.resolve_save_version()
    return Path(get_filepath_str(dataset._get_versioned_path(version), "file"))
