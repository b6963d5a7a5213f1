"""Embarrassingly parallel inner work (null replications, sweeps, simulations) on the run's cluster.

A node that loops over independent items calls ``parallel_map(func, items)`` instead of a list
comprehension. Under ``DaskRunner`` the node runs inside a Dask worker, and the items go to the
same cluster as separate tasks (``worker_client`` secedes the node's thread while it waits, so the
cluster cannot deadlock on its own node). Under any other runner it is a plain loop, with
identical results: ``func`` must be a module-level function of the item (and keyword arguments)
that derives any randomness from the item, e.g. a per-replication seed, never from shared state.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


def on_dask_worker() -> bool:
    """True inside a task running on a dask.distributed worker."""
    try:
        from distributed import get_worker
    except ImportError:
        return False
    try:
        get_worker()
    except ValueError:
        return False
    return True


def parallel_map(func: Callable[..., R], items: Iterable[T], **kwargs: Any) -> list[R]:
    """``[func(item, **kwargs) for item in items]``, on the Dask cluster when the node runs on one."""
    items = list(items)
    if not on_dask_worker() or len(items) < 2:
        return [func(item, **kwargs) for item in items]
    from distributed import worker_client

    with worker_client() as client:
        futures = client.map(func, items, pure=False, **kwargs)
        return client.gather(futures)
