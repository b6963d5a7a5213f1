"""Evaluation measures of the width sweep, pure: the log-log slope against width, monotonicity, and the
one-row-per-(experiment, width, method) sweep table built from the per-width traces."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

MEASURES = (
    "ntk_change",
    "local_ntk_change",
    "weight_rmse",
    "weight_l2",
    "linearisation_rmse",
    "local_linearisation_rmse",
    "fed_central_rmse",
    "divergence",
)


def loglog_slope(widths: Sequence[float], values: Sequence[float]) -> float:
    """Least-squares slope of log(value) against log(width): -0.5 for a quantity ~ n^{-1/2}.

    NaN when fewer than two finite positive values remain.
    """
    w = np.asarray(widths, float)
    v = np.asarray(values, float)
    keep = np.isfinite(v) & (v > 0) & (w > 0)
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(w[keep]), np.log(v[keep]), 1)[0])


def strictly_decreasing(values: Sequence[float]) -> bool:
    """Every value below the one before it (NaN anywhere: False)."""
    v = np.asarray(values, float)
    return bool(np.all(np.isfinite(v)) and np.all(np.diff(v) < 0))


def relative_gap(value: float, reference: float) -> float:
    """|value - reference| / reference."""
    return float(abs(value - reference) / reference) if reference else float("nan")


def sweep_rows(trace: dict[str, Any]) -> list[dict[str, Any]]:
    """Final values of one width's trace, one row per method (FedAvg per split, centralised GD)."""
    if trace.get("width") is None:  # an unused width slot
        return []
    rows = []
    for method in trace["methods"]:
        series = trace[method]
        row = {
            "experiment": trace["experiment"],
            "width": trace["width"],
            "method": method,
            "n_params": trace["n_params"],
            "rounds": trace["rounds"][-1],
            "train_loss": series["train_loss"][-1],
            "test_loss": series["test_loss"][-1],
            "test_acc": series["test_acc"][-1],
            "seconds": trace.get("seconds"),
        }
        last = (series.get("measures") or [{}])[-1]
        for name in MEASURES:
            value = last.get(name)
            if name == "divergence" and value is None and series.get("divergence"):
                value = series["divergence"][-1]
            row[name] = np.nan if value is None else float(value)
        rows.append(row)
    return rows


def sweep_table(traces: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Every width of both experiments, one row per method, sorted by experiment, width, method."""
    rows = [row for trace in traces for row in sweep_rows(trace)]
    frame = pd.DataFrame(rows)
    return frame.sort_values(["experiment", "width", "method"], ignore_index=True)


def curves_table(traces: Sequence[dict[str, Any]]) -> pd.DataFrame:
    """Loss and accuracy per recorded round, with total GD iterations t * tau for the twin comparison."""
    rows = []
    for trace in traces:
        if trace.get("width") is None:
            continue
        for method in trace["methods"]:
            series = trace[method]
            for i, r in enumerate(trace["rounds"]):
                rows.append(
                    {
                        "experiment": trace["experiment"],
                        "width": trace["width"],
                        "method": method,
                        "round": r,
                        "iterations": r * trace["tau"],
                        "train_loss": series["train_loss"][i],
                        "test_loss": series["test_loss"][i],
                        "test_acc": series["test_acc"][i],
                    }
                )
    return pd.DataFrame(rows)


def pick(frame: pd.DataFrame, experiment: str, method: str, column: str) -> pd.Series:
    """``column`` of one method in one experiment, indexed by width (ascending)."""
    sub = frame[(frame.experiment == experiment) & (frame.method == method)]
    return sub.set_index("width")[column].sort_index()
