"""The metrics contract, the metrics dict and the results table (one row per method)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.claims import Claim
from paper_pipelines.common.reporting import check_metrics_contract, results_table

from . import method
from . import metrics as measures

# The headline numbers every run writes to {{ cookiecutter.pipeline_name }}.metrics (the metrics contract).
METRICS: tuple[str, ...] = ("error_method", "error_mean", "error_ratio_method_over_mean")

# The paper's claims, checked on every run (common.claims): the spec's acceptance checks gate, the
# rest are reported; `paper` holds the paper's own numbers with the table or figure they come from.
CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="beats_mean",
        statement="The method's test error is below the mean predictor's.",
        condition="error_method < error_mean",
        paper={},
        source="",
        gates=True,
    ),
)

# The figure the scoreboard shows for this paper.
HEADLINE_FIGURE = "error_plot"


def results(
    splits: dict[str, Any], method_fit: dict, baseline_fits: dict, kind: str
) -> pd.DataFrame:
    y = splits["y_test"]
    rows = [
        {
            "method": "method",
            "error": measures.error(y, method.predict(splits["X_test"], method_fit["coef"]), kind),
        },
        {
            "method": "mean",
            "error": measures.error(y, np.full_like(y, baseline_fits["mean"]), kind),
        },
    ]
    return results_table({**row, "metric": kind} for row in rows)


def metrics(results_frame: pd.DataFrame) -> dict[str, Any]:
    error = results_frame.set_index("method")["error"]
    values = {
        "error_method": error["method"],
        "error_mean": error["mean"],
        "error_ratio_method_over_mean": error["method"] / error["mean"],
    }
    return check_metrics_contract(values, METRICS, "{{ cookiecutter.pipeline_name }}")
