"""Independent jobs of a node on joblib's loky workers, with the house's progress lines."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any

from joblib import Parallel, delayed, parallel_config

from .progress import progress


def run_parallel(
    fn: Callable[..., Any],
    jobs: Sequence[tuple],
    n_jobs: int,
    desc: str,
    logger: logging.Logger | None = None,
    min_jobs: int = 4,
) -> list[Any]:
    """``[fn(*job) for job in jobs]`` in order, on ``n_jobs`` loky worker processes (one BLAS / torch
    thread each, so workers do not oversubscribe the cores); in this process when ``n_jobs`` is 1 or
    there are fewer than ``min_jobs`` jobs (starting workers costs about a second). ``fn`` must be
    importable (a module-level function) and each job must carry its own seed: the results do not
    depend on which worker ran which job."""
    if n_jobs < 1:
        raise ValueError(f"n_jobs must be >= 1, got {n_jobs}")
    if n_jobs == 1 or len(jobs) < min_jobs:
        return [fn(*job) for job in progress(jobs, desc, total=len(jobs), logger=logger)]
    with parallel_config(backend="loky", inner_max_num_threads=1):
        runner = Parallel(n_jobs=n_jobs, return_as="generator", batch_size=1)
        results = runner(delayed(fn)(*job) for job in jobs)
        return list(progress(results, desc, total=len(jobs), logger=logger))
