"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure

SHOWN = ("chameleon", "ERM", "GroupDRO", "oversample", "remax-margin", "undersample",
         "global_best", "random", "oracle")  # fmt: skip


def selection_error_figure(selection: pd.DataFrame) -> Figure:
    """Mean worst-group test error of the algorithm each strategy picks, per evaluation."""
    test = selection[selection.part == "test"]
    table = test.groupby(["evaluation", "strategy"], sort=False).wg_err.mean().unstack("strategy")
    strategies = [s for s in SHOWN if s in table.columns]
    fig, ax = new_figure(figsize=(8.5, 3.8))
    width = 0.8 / len(strategies)
    x = np.arange(len(table.index))
    for i, strategy in enumerate(strategies):
        ax.bar(
            x + i * width, table[strategy], width, label=strategy,
            color=method_colour(strategy, ours="chameleon"),
        )  # fmt: skip
    ax.set_xticks(x + 0.4 - width / 2, list(table.index))
    ax.set(ylabel="worst-group test error", title="algorithm selection on held-out tasks")
    ax.legend(fontsize=7, ncol=3)
    return fig


def win_rate_figure(meta: pd.DataFrame, algorithms: list[str]) -> Figure:
    """How often each algorithm is within the margin of the best, per source dataset."""
    rates = meta.groupby("source")[[f"win_{a}" for a in algorithms]].mean()
    fig, ax = new_figure(figsize=(7, 3.6))
    width = 0.8 / len(algorithms)
    x = np.arange(len(rates.index))
    for i, a in enumerate(algorithms):
        ax.bar(x + i * width, rates[f"win_{a}"], width, label=a, color=method_colour(a))
    ax.set_xticks(x + 0.4 - width / 2, list(rates.index))
    ax.set(ylim=(0, 1.05), ylabel="win rate (within margin)", title="winners of the algorithm zoo")
    ax.legend(fontsize=7, ncol=3)
    return fig


def tree_figure(tree, algorithms: list[str], key: str) -> Figure:
    """The depth-3 decision tree of the headline transfer's selector."""
    fig, ax = new_figure(figsize=(12, 5))
    if tree is None:
        ax.text(0.5, 0.5, "no tree learner configured", ha="center")
        return fig
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from sklearn.tree import plot_tree

    FigureCanvasAgg(fig)  # plot_tree measures its text boxes: it needs a canvas with a renderer
    plot_tree(tree.model, feature_names=tree.features, ax=ax, fontsize=6, impurity=False,
              proportion=True, filled=False)  # fmt: skip
    ax.set_title(f"depth-3 tree ({key}); outputs: {', '.join(algorithms)}", fontsize=8)
    return fig
