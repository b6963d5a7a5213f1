"""DaskRunner: run a Kedro 1.x pipeline's nodes as dask.distributed futures.

    kedro run --pipeline=ata --env=fast --runner=paper_pipelines.runners.DaskRunner \\
        --runner-params=n_workers=2
    PAPER_PIPELINES_DASK_ADDRESS=tcp://scheduler:8786 kedro run --pipeline=dlp \\
        --runner=paper_pipelines.runners.DaskRunner --runner-params=persist_dir=/shared/kedro-dask

Each node becomes one task whose dependencies are the futures of the nodes that produce its inputs,
so independent branches (and independent papers in one ``--pipelines=a,b`` run) run side by side.
Workers load and save through their own copy of the run's catalog: versioned datasets keep the
driver's save version, so a Dask run writes one consistent version like a sequential run.

Datasets that would live in memory (``MemoryDataset``) cannot cross worker processes: before the
run, every such intermediate is swapped for a cloudpickle ``PickleDataset`` under a run folder
(``persist_dir``; a temporary folder for a LocalCluster, which is removed afterwards). On a real
cluster, point ``persist_dir`` at storage every worker sees (a shared path or an fsspec URL).

The scheduler address comes from the ``address`` runner parameter, else the
``PAPER_PIPELINES_DASK_ADDRESS`` or ``DASK_SCHEDULER_ADDRESS`` environment variable; without one,
a LocalCluster of ``n_workers`` single-threaded worker processes is started and stopped with the run.
"""

from __future__ import annotations

import logging
import os
import pickle
import tempfile
import uuid
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from kedro.io import AbstractDataset, MemoryDataset
from kedro.runner import AbstractRunner
from kedro.runner.task import Task

if TYPE_CHECKING:
    from kedro.io import CatalogProtocol
    from kedro.pipeline import Pipeline
    from pluggy import PluginManager

ADDRESS_ENV = "PAPER_PIPELINES_DASK_ADDRESS"
PERSIST_ENV = "PAPER_PIPELINES_DASK_PERSIST_DIR"
# Torch and BLAS in every worker: one thread each, or n workers oversubscribe the cores.
WORKER_ENV = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}

_worker_hooks: dict[str, Any] = {}


class NodeFailed(RuntimeError):
    """A node's exception that could not travel back from the worker as itself."""


def _hook_manager(package_name: str | None):
    """The project's hook manager in this worker process, configured once.

    Kedro's ``Task(parallel=True)`` would re-run ``configure_project`` with the driver's logging
    object, which recurses inside a Dask worker; so the project is configured here, once per
    process, and node/dataset hooks run here (pipeline hooks run on the driver), as under
    ParallelRunner.
    """
    key = package_name or ""
    if key not in _worker_hooks:
        from kedro.framework.hooks.manager import (
            _create_hook_manager,
            _register_hooks,
            _register_hooks_entry_points,
        )
        from kedro.framework.project import configure_project, settings

        if package_name:
            configure_project(package_name)
        manager = _create_hook_manager()
        _register_hooks(manager, settings.HOOKS)
        _register_hooks_entry_points(manager, settings.DISABLE_HOOKS_FOR_PLUGINS)
        _worker_hooks[key] = manager
    return _worker_hooks[key]


def _run_node(
    node, catalog, is_async: bool, run_id: str | None, package_name: str | None, _upstream
) -> str:
    """Worker side: run one node as Kedro's Task does (load inputs, call, save outputs, hooks)."""
    hooks = _hook_manager(package_name)
    try:
        Task(
            node=node, catalog=catalog, is_async=is_async, hook_manager=hooks, run_id=run_id
        ).execute()
    except Exception as exc:
        try:
            pickle.dumps(exc)
        except Exception:  # an exception Dask cannot send back would leave the driver waiting
            raise NodeFailed(f"node {node.name} failed: {type(exc).__name__}: {exc}") from None
        raise
    return node.name


def _remove(root: str) -> None:
    import fsspec

    fs, path = fsspec.core.url_to_fs(root)
    with suppress(OSError):  # FileNotFoundError included: nothing to remove
        fs.rm(path, recursive=True)


@contextmanager
def _quiet(logger_name: str):
    logger = logging.getLogger(logger_name)
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


class SharedPickleDataset(AbstractDataset):
    """A run-scoped, unversioned cloudpickle file (local path or fsspec URL) replacing a MemoryDataset.

    Unversioned on purpose: it is scratch space of one run, not an artefact, and stays out of
    the run record's versioned outputs.
    """

    def __init__(self, filepath: str) -> None:
        import fsspec

        self._filepath = filepath
        self._fs, self._path = fsspec.core.url_to_fs(filepath)

    def load(self) -> Any:
        import cloudpickle

        with self._fs.open(self._path, "rb") as handle:
            return cloudpickle.load(handle)

    def save(self, data: Any) -> None:
        import cloudpickle

        self._fs.makedirs(self._path.rsplit("/", 1)[0], exist_ok=True)
        with self._fs.open(self._path, "wb") as handle:
            cloudpickle.dump(data, handle)

    def _exists(self) -> bool:
        return self._fs.exists(self._path)

    def _describe(self) -> dict[str, Any]:
        return {"filepath": self._filepath}


class DaskRunner(AbstractRunner):
    """Runs each node on a dask.distributed cluster (a LocalCluster when no address is given)."""

    def __init__(
        self,
        address: str | None = None,
        n_workers: int | str = 2,
        threads_per_worker: int | str = 1,
        persist_dir: str | None = None,
        dashboard_address: str | None = None,
        client: Any = None,
        is_async: bool = False,
    ) -> None:
        """
        Args:
            address: scheduler address (tcp://host:8786); default from the environment, else a LocalCluster.
            n_workers: LocalCluster worker processes (``--runner-params`` values may arrive as strings).
            threads_per_worker: LocalCluster threads per worker (1: torch nodes do not share a process).
            persist_dir: where intermediates that would be MemoryDatasets are pickled; must be
                visible to every worker on a real cluster. Default: a temporary folder.
            dashboard_address: LocalCluster dashboard (e.g. ":8787"); off by default.
            client: an existing ``distributed.Client`` to use (Python API; tests and notebooks).
            is_async: load and save a node's datasets with threads (Kedro's async mode).
        """
        super().__init__(
            is_async=bool(is_async) if not isinstance(is_async, str) else is_async.lower() == "true"
        )
        self._address = (
            address or os.environ.get(ADDRESS_ENV) or os.environ.get("DASK_SCHEDULER_ADDRESS")
        )
        self._n_workers = int(n_workers)
        self._threads = int(threads_per_worker)
        if self._n_workers < 1 or self._threads < 1:
            raise ValueError(
                f"n_workers and threads_per_worker must be >= 1, got {n_workers}, {threads_per_worker}"
            )
        self._persist_dir = persist_dir or os.environ.get(PERSIST_ENV)
        self._dashboard = dashboard_address
        self._client = client

    def _get_executor(self, max_workers: int):  # nodes go to Dask, not to a local pool
        return None

    @contextmanager
    def _connect(self):
        from distributed import Client, LocalCluster

        if self._client is not None:
            yield self._client
            return
        if self._address:
            self._logger.info("Connecting to the Dask scheduler at %s", self._address)
            with Client(self._address) as client:
                yield client
            return
        self._logger.info(
            "Starting a LocalCluster: %d workers x %d thread(s)", self._n_workers, self._threads
        )
        with (
            LocalCluster(
                n_workers=self._n_workers,
                threads_per_worker=self._threads,
                processes=True,
                dashboard_address=self._dashboard,
                silence_logs=logging.WARNING,
                env=WORKER_ENV,
            ) as cluster,
            Client(cluster) as client,
        ):
            yield client

    def _persist_intermediates(
        self, pipeline: Pipeline, catalog: CatalogProtocol, root: str
    ) -> list[str]:
        """Swap node outputs held in memory for pickle files under ``root`` that all workers share."""
        produced = pipeline.all_outputs()
        swapped = []
        for name in sorted(pipeline.datasets()):
            if name.startswith("params:") or name == "parameters" or name not in produced:
                continue
            if not isinstance(catalog.get(name, fallback_to_runtime_pattern=True), MemoryDataset):
                continue
            path = f"{root.rstrip('/')}/{name}.pkl"
            with _quiet("kedro.io.data_catalog"):  # "Replacing dataset" is the point here
                catalog[name] = SharedPickleDataset(path)
            swapped.append(name)
        if swapped:
            self._logger.info(
                "Persisting %d in-memory intermediate(s) under %s", len(swapped), root
            )
        return swapped

    def _run(
        self,
        pipeline: Pipeline,
        catalog: CatalogProtocol,
        hook_manager: PluginManager | None = None,
        run_id: str | None = None,
    ) -> None:
        from distributed import as_completed
        from kedro.framework.project import PACKAGE_NAME

        own_dir = self._persist_dir is None
        if own_dir and self._address:
            self._logger.warning(
                "No persist_dir for a remote cluster: in-memory intermediates go to a local temporary "
                "folder that remote workers cannot see. Set --runner-params=persist_dir=<shared path>."
            )
        root = (
            tempfile.mkdtemp(prefix="kedro-dask-")
            if own_dir
            else f"{self._persist_dir.rstrip('/')}/{run_id or uuid.uuid4().hex}"
        )
        try:
            swapped = self._persist_intermediates(pipeline, catalog, root)
            with self._connect() as client:
                futures = {}
                dependencies = pipeline.node_dependencies
                for node in pipeline.nodes:  # topological order: upstream futures exist already
                    upstream = [futures[parent] for parent in dependencies[node]]
                    futures[node] = client.submit(
                        _run_node,
                        node,
                        catalog,
                        self._is_async,
                        run_id,
                        PACKAGE_NAME,
                        upstream,
                        key=f"{node.name}-{uuid.uuid4().hex[:8]}",
                        pure=False,
                    )
                done = 0
                try:
                    for future in as_completed(list(futures.values())):
                        name = future.result()  # re-raises the node's exception here, on the driver
                        done += 1
                        self._logger.info("Completed node: %s", name)
                        self._logger.info("Completed %d out of %d tasks", done, len(futures))
                except Exception:
                    for future in futures.values():
                        future.cancel()
                    raise
            # Free outputs that were in memory come back to the driver, as under SequentialRunner.
            for name in sorted(set(swapped) & pipeline.outputs()):
                data = catalog.load(name)
                with _quiet("kedro.io.data_catalog"):
                    catalog[name] = MemoryDataset(data)
        finally:
            _remove(
                root
            )  # scratch of this run only; versioned artefacts live in the catalog's paths
