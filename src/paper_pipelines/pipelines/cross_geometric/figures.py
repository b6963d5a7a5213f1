"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure

REGION_COLOURS = {"hyperbolic": "#D55E00", "euclidean": "#0072B2", "unknown": "#7f7f7f"}


def gate_figure(gates: pd.DataFrame) -> Figure:
    """Per node of the first seed: mean learned gate against mean tree score, coloured by region."""
    fig, axes = new_figure(1, 2, figsize=(9, 3.6))
    if gates.empty:
        axes[0].set_title("no hybrid_gate run")
        return fig
    first = gates[gates["seed"] == gates["seed"].min()]
    for source, ax in zip(first["source"].unique()[:2], axes, strict=False):
        rows = first[first["source"] == source]
        for region, part in rows.groupby("region"):
            ax.scatter(
                part["tree_score"],
                part["gate"],
                s=6,
                alpha=0.5,
                label=region,
                color=REGION_COLOURS.get(region, "#7f7f7f"),
            )
        ax.set(xlabel="local hyperbolicity delta / diam", ylabel="gate alpha (1 = hyperbolic)")
        ax.set_title(source)
        ax.legend(fontsize=7)
    return fig


def auc_figure(results: pd.DataFrame) -> Figure:
    """Mean AUC per method on each source, error bars = spread (min to max) over seeds."""
    sources = list(dict.fromkeys(results["source"]))
    methods = list(dict.fromkeys(results["method"]))
    fig, axes = new_figure(1, len(sources), figsize=(3.6 * len(sources), 3.6))
    axes = np.atleast_1d(axes)
    for ax, source in zip(axes, sources, strict=True):
        rows = results[results["source"] == source]
        stats = rows.groupby("method")["auc"].agg(["mean", "min", "max"]).reindex(methods).dropna()
        x = np.arange(len(stats))
        err = np.stack([stats["mean"] - stats["min"], stats["max"] - stats["mean"]])
        ax.bar(
            x,
            stats["mean"],
            yerr=err,
            color=[method_colour(m, ours="hybrid_gate") for m in stats.index],
        )
        ax.set_xticks(x, stats.index, rotation=60, ha="right", fontsize=7)
        low = float(np.nanmin(stats["min"])) if len(stats) else 0.5
        ax.set(ylim=(max(0.0, low - 0.05), 1.0), ylabel="AUC (all links)", title=source)
    return fig
