"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure

from .metrics import CLUSTERING_SCORES, mean_errors


def weight_error_figure(core_weights: pd.DataFrame) -> Figure:
    """Relative weight error vs core size s, one panel per algorithm, one line per construction."""
    errors = mean_errors(core_weights)
    algorithms = list(errors.algorithm.unique())
    fig, axes = new_figure(1, len(algorithms), figsize=(4.2 * len(algorithms), 3.6))
    for ax, algorithm in zip(np.atleast_1d(axes), algorithms, strict=True):
        for method, sub in errors[errors.algorithm == algorithm].groupby("method"):
            ax.errorbar(
                sub.s,
                sub.rel_error.clip(lower=1e-8),
                yerr=sub.rel_error_std.fillna(0),
                marker="o",
                label=method,
                color=method_colour(method),
                capsize=2,
            )
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="core size s",
            ylabel="relative weight error",
            title=algorithm,
        )
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    return fig


def timing_figure(timing: pd.DataFrame) -> Figure:
    """Wall time against n: full MKC (measured) vs core kernel + extension."""
    fig, ax = new_figure(figsize=(5, 3.8))
    for algorithm, sub in timing.groupby("algorithm"):
        sub = sub.sort_values("n")
        core, full = f"core {algorithm}", f"full {algorithm}"
        ax.plot(sub.n, sub.core_seconds, marker="o", label=core, color=method_colour(core))
        measured = sub[sub.full_seconds.notna()]
        ax.plot(
            measured.n, measured.full_seconds, marker="s", label=full, color=method_colour(full)
        )
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="seconds", title="full vs core MKC")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def clustering_figure(clustering_scores: pd.DataFrame) -> Figure:
    """ACC / NMI / purity / ARI of every clustering of all n points."""
    fig, ax = new_figure(figsize=(8, 3.8))
    width = 0.8 / len(clustering_scores)
    for i, row in enumerate(clustering_scores.itertuples()):
        ax.bar(
            np.arange(len(CLUSTERING_SCORES)) + i * width,
            [getattr(row, m) for m in CLUSTERING_SCORES],
            width,
            label=row.method,
            color=method_colour(row.method),
        )
    ax.set_xticks(np.arange(len(CLUSTERING_SCORES)) + 0.4 - width / 2, CLUSTERING_SCORES)
    ax.set(ylim=(0, 1), title="clustering quality, full vs core")
    ax.legend(fontsize=7, loc="lower right")
    return fig
