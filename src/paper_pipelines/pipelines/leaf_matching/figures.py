"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure

TITLES = {"hierarchy": "hierarchical graph (HSBM)", "real": "real graph (PubMed)"}


def data_efficiency_figure(link_metrics: pd.DataFrame) -> Figure:
    """ROC-AUC against the observed-link ratio mu, one line per method, one panel per study."""
    studies = [s for s in TITLES if s in set(link_metrics.study)]
    fig, axes = new_figure(1, len(studies), figsize=(5.2 * len(studies), 4.0))
    for ax, study in zip(np.atleast_1d(axes), studies, strict=True):
        sub = link_metrics[link_metrics.study == study]
        for method, rows in sub.groupby("method"):
            rows = rows.sort_values("mu")
            ours = method.startswith("leaf_matching")
            ax.plot(
                rows.mu,
                rows.auc,
                marker="o" if ours else ".",
                lw=2.2 if ours else 1.0,
                ls="-" if ours else "--",
                label=method,
                color=method_colour(method, ours="leaf_matching_T8"),
            )
        ax.axhline(0.5, color="#999999", lw=0.8, ls=":")
        ax.set(xlabel="observed link ratio mu", ylabel="ROC-AUC", title=TITLES[study])
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, ncol=2)
    return fig


def scaling_figure(scaling: pd.DataFrame) -> Figure:
    """Seconds per epoch of leaf matching against observed edges (Erdos-Renyi), log-log."""
    fig, ax = new_figure(figsize=(5, 3.8))
    for trees, rows in scaling.groupby("trees"):
        rows = rows.sort_values("n_train_edges")
        ax.plot(rows.n_train_edges, rows.seconds_per_epoch, marker="o", label=f"T = {trees}")
    if len(scaling):
        x = np.sort(scaling.n_train_edges.unique())
        first = scaling.sort_values("n_train_edges").iloc[0]
        ax.plot(x, first.seconds_per_epoch * x / x[0], color="#999999", ls=":", label="linear")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="observed edges",
        ylabel="seconds per epoch",
        title="leaf matching, Erdos-Renyi graphs",
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig
