"""The three figures of the TCA benchmark, one function each, returning a matplotlib Figure."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure
from paper_pipelines.pipelines.tca.report import LABELS, METHOD_BASE, method_order


def _step_label(method: str) -> str:
    # "+" rows are the TCA step alone (it runs after its base method's stream).
    return LABELS.get(method, method) + (" [step]" if "+" in method else "")


def accuracy_per_corruption(accuracy: pd.DataFrame, metric_severity: int) -> Figure:
    """Accuracy per corruption and method at the metric severity."""
    at = accuracy[accuracy["severity"] == metric_severity]
    per = at.pivot(index="corruption", columns="method", values="accuracy")
    methods = method_order(list(per.columns))

    def plus(method: str) -> bool:
        return METHOD_BASE.get(method) not in (None, "source")

    fig, ax = new_figure(figsize=(max(8, 1.1 * len(per)), 4.5))
    width = 0.8 / len(methods)
    x = np.arange(len(per))
    for i, m in enumerate(methods):
        ax.bar(
            x + i * width - 0.4 + width / 2,
            per[m].to_numpy(),
            width,
            label=LABELS.get(m, m),
            color=method_colour(m),
            # LinearTCA+ on a TTA baseline hatched: hashed colours can coincide with another method's
            hatch="///" if plus(m) else None,
            edgecolor="white" if plus(m) else None,
            linewidth=0,
        )
    ax.set_xticks(x, list(per.index), rotation=35, ha="right")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"Digits-C accuracy per corruption, severity {metric_severity}")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig


def accuracy_by_severity(accuracy: pd.DataFrame) -> Figure:
    """Mean accuracy over corruptions against severity, one line per method."""
    mean = accuracy.pivot_table(
        index="severity", columns="method", values="accuracy", aggfunc="mean"
    )
    fig, ax = new_figure(figsize=(7, 4.5))
    for m in method_order(list(mean.columns)):
        style = "--" if "+" in m else "-"
        ax.plot(
            mean.index, mean[m], style, marker="o", label=LABELS.get(m, m), color=method_colour(m)
        )
    ax.set_xlabel("severity")
    ax.set_ylabel("mean accuracy over corruptions (%)")
    ax.set_xticks(list(mean.index))
    ax.legend(fontsize=7, ncol=2)
    return fig


def cost_per_method(cost: pd.DataFrame) -> Figure:
    """Compute time (and, when probed, peak extra tensor memory) per method."""
    methods = method_order(list(cost["method"]))
    c = cost.set_index("method").loc[methods]
    probed = "peak_bytes" in c.columns and c["peak_bytes"].notna().any()
    fig, axes = new_figure(1, 2 if probed else 1, figsize=(10 if probed else 6, 4))
    axes = list(np.atleast_1d(axes))
    axes[0].barh(
        [_step_label(m) for m in methods],
        c["seconds"].to_numpy(),
        color=[method_colour(m) for m in methods],
    )
    axes[0].set_xscale("log")
    axes[0].set_xlabel("CPU seconds, all domains at the metric severity (log)")
    if probed:
        mem = c["peak_bytes"].dropna() / 2**10
        axes[1].barh(
            [_step_label(m) for m in mem.index],
            mem.to_numpy(),
            color=[method_colour(m) for m in mem.index],
        )
        axes[1].set_xlabel("peak extra tensor memory (KiB, one domain)")
    return fig
