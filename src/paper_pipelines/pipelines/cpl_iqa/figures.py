"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import distinct_colours, method_colour, new_figure


def method_figure(results: pd.DataFrame) -> Figure:
    """Mean test SRCC (+/- sd over split seeds) of CPL-IQA, its ablations and the baselines."""
    fig, ax = new_figure(figsize=(7.5, 3.4))
    colours = distinct_colours(results["method"], ours="cpl")
    ax.bar(results["method"], results["srcc"], yerr=results["srcc_sd"].fillna(0), color=colours)
    ax.set(ylabel="test SRCC (mean over splits)", title="cpl_iqa: methods on the same splits")
    ax.tick_params(axis="x", rotation=35)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    return fig


def prediction_figure(predictions: pd.DataFrame, mos_table: pd.DataFrame, split: int) -> Figure:
    """Predicted score vs MOS on one split's test images: supervised-only and CPL-IQA."""
    mos = mos_table.set_index("image_id")["mos"]
    methods = [m for m in ("supervised", "cpl") if m in set(predictions["method"])]
    fig, axes = new_figure(1, max(len(methods), 1), figsize=(7.0, 3.4))
    axes = np.atleast_1d(axes)
    for ax, method in zip(axes, methods, strict=False):
        sub = predictions[(predictions["method"] == method) & (predictions["split"] == split)]
        ax.scatter(mos.loc[sub["image_id"]], sub["prediction"], s=8, alpha=0.6,
                   color=method_colour(method, ours="cpl"))  # fmt: skip
        lo, hi = float(mos.min()), float(mos.max())
        ax.plot([lo, hi], [lo, hi], color="#7f7f7f", lw=0.8)
        ax.set(
            xlabel="MOS (simulated study)",
            ylabel="predicted score",
            title=f"{method}, split {split}",
        )
    return fig


def pseudo_label_figure(log: pd.DataFrame) -> Figure:
    """Per round of CPL-IQA: pseudo-MOS SRCC on U, the model's own SRCC on U, confidence-error SRCC."""
    fig, ax = new_figure(figsize=(6.0, 3.4))
    cpl = log[log["method"] == "cpl"].groupby("round").mean(numeric_only=True)
    series = (
        ("pseudo_srcc", "pseudo-MOS vs hidden MOS"),
        ("model_srcc_unlabeled", "model prediction vs hidden MOS"),
        ("confidence_error_srcc", "SRCC(confidence, -|error|)"),
    )
    colours = distinct_colours([column for column, _ in series])
    for (column, label), colour in zip(series, colours, strict=True):
        ax.plot(cpl.index, cpl[column], marker="o", label=label, color=colour)
    ax.set(xlabel="Stage-2 round", ylabel="SRCC on the unlabelled set (mean over splits)")
    ax.legend(fontsize=8)
    return fig
