"""The standard artefacts every paper ends with: a JSON-safe metrics dict that keeps its contract, and a
results table with one row per method."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd


def to_jsonable(value: Any) -> Any:
    """NumPy / pandas / pathlib values as plain JSON types; NaN and infinities become None."""
    if isinstance(value, Mapping):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set):
        return [to_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return [to_jsonable(v) for v in value.tolist()]
    if isinstance(value, np.bool_ | bool):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.floating | float):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, pd.Timestamp):
        return value.isoformat()
    if value is None or isinstance(value, str | int):
        return value
    return str(value)


def check_metrics_contract(metrics: Mapping[str, Any], contract: Iterable[str], slug: str) -> dict:
    """``metrics`` as JSON, after checking that every key the paper promises (its ``METRICS``) is there.

    A missing key is a bug of the paper's evaluate step, not of the user's input, so the message says
    which keys and where the contract lives.
    """
    missing = [k for k in contract if k not in metrics]
    if missing:
        raise KeyError(
            f"{slug}.metrics lacks {missing}, promised by METRICS in "
            f"paper_pipelines/pipelines/{slug}/report.py"
        )
    return to_jsonable(dict(metrics))


def results_table(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """One row per method, ``method`` first; every row must name its method."""
    frame = pd.DataFrame(list(rows))
    if "method" not in frame.columns or frame["method"].isna().any():
        raise ValueError(
            "every results row needs a 'method' value (the method or baseline it reports)"
        )
    return frame[["method", *[c for c in frame.columns if c != "method"]]]
