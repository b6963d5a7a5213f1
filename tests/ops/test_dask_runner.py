"""DaskRunner and parallel_map on an in-process (threads) LocalCluster: seconds, not a paper run.

The paper-scale check (ata on a 2-worker process LocalCluster through `kedro run --runner=...`)
is in test_runs.py.
"""

import pytest
from kedro.io import DataCatalog, MemoryDataset
from kedro.pipeline import Node, Pipeline

from paper_pipelines.runners import DaskRunner, parallel_map
from paper_pipelines.runners.dask_runner import SharedPickleDataset
from paper_pipelines.runners.parallel import on_dask_worker

distributed = pytest.importorskip("distributed", reason="needs the scale extra (dask[distributed])")


@pytest.fixture(scope="module")
def client():
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


def double(x: int) -> int:
    return 2 * x


def add(a: int, b: int) -> int:
    return a + b


def square_where(x: int) -> tuple[int, bool]:
    return x * x, on_dask_worker()


def fan_out(n: int) -> list[tuple[int, bool]]:
    return parallel_map(square_where, range(n))


def boom(_x: int) -> int:
    raise ValueError("planned failure in node boom")


def test_diamond_pipeline_with_in_memory_intermediates(client, tmp_path):
    pipeline = Pipeline(
        [
            Node(double, "x", "a", name="left"),
            Node(double, "x", "b", name="right"),
            Node(add, ["a", "b"], "c", name="join"),
        ]
    )
    catalog = DataCatalog({"x": MemoryDataset(3)})
    DaskRunner(client=client, persist_dir=str(tmp_path)).run(pipeline, catalog)
    assert catalog.load("c") == 12  # a free output comes back to the driver in memory
    assert isinstance(catalog.get("a"), SharedPickleDataset)  # workers shared it through a file
    assert list(tmp_path.iterdir()) == []  # the run's scratch folder is removed afterwards


def test_a_failing_node_fails_the_run(client):
    pipeline = Pipeline([Node(double, "x", "a", name="first"), Node(boom, "a", "z", name="boom")])
    with pytest.raises(ValueError, match="planned failure in node boom"):
        DaskRunner(client=client).run(pipeline, DataCatalog({"x": MemoryDataset(1)}))


def test_runner_params_are_cast_and_checked():
    runner = DaskRunner(n_workers="3", threads_per_worker="1", is_async="false")
    assert (runner._n_workers, runner._threads, runner._is_async) == (3, 1, False)
    with pytest.raises(ValueError, match="n_workers"):
        DaskRunner(n_workers=0)


def test_address_comes_from_the_environment(monkeypatch):
    monkeypatch.setenv("PAPER_PIPELINES_DASK_ADDRESS", "tcp://10.0.0.1:8786")
    assert DaskRunner()._address == "tcp://10.0.0.1:8786"
    assert DaskRunner(address="tcp://h:1")._address == "tcp://h:1"


def test_parallel_map_uses_the_cluster_inside_a_task_and_loops_elsewhere(client):
    inside = client.submit(fan_out, 5, pure=False).result()
    assert inside == [(x * x, True) for x in range(5)]
    assert fan_out(5) == [(x * x, False) for x in range(5)]  # same results without Dask
