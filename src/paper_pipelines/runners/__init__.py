"""Runners beyond Kedro's own: a Dask runner for Kedro 1.x, and a helper for parallel inner work.

``kedro run --pipeline=<slug> --runner=paper_pipelines.runners.DaskRunner`` (docs/operations.md).
Needs the ``scale`` extra (dask[distributed]).
"""

from paper_pipelines.runners.dask_runner import DaskRunner
from paper_pipelines.runners.parallel import parallel_map

__all__ = ["DaskRunner", "parallel_map"]
