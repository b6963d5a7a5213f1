"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure

from . import metrics as measures


def accuracy_curves(runs: pd.DataFrame) -> Figure:
    """Client-mean personalised test accuracy per round (mean over repeats), one line per method."""
    fig, ax = new_figure(figsize=(6.5, 3.8))
    curve = measures.client_mean_by_round(runs[runs["setting"] == "main"])
    mean = curve.groupby(["method", "round"], sort=False)["accuracy"].mean().reset_index()
    for method, group in mean.groupby("method", sort=False):
        ax.plot(
            group["round"], group["accuracy"], marker="o", ms=3, label=method,
            color=method_colour(method, ours="fedda"), lw=2.2 if method == "fedda" else 1.2,
        )  # fmt: skip
    ax.set(xlabel="round", ylabel="client-mean test accuracy", title="fedda: accuracy vs round")
    ax.legend(fontsize=7, ncol=2)
    return fig


def client_accuracy(runs: pd.DataFrame, last: int) -> Figure:
    """Each client's personalised accuracy (last rounds, mean over repeats), grouped by method."""
    fig, ax = new_figure(figsize=(7.5, 3.8))
    table = measures.per_client_last_rounds(runs[runs["setting"] == "main"], last)
    methods = list(dict.fromkeys(table["method"]))
    clients = list(dict.fromkeys(table["client"]))
    width = 0.8 / max(len(methods), 1)
    for i, method in enumerate(methods):
        rows = table[table["method"] == method].set_index("client")
        ax.bar(
            np.arange(len(clients)) + i * width, [rows.loc[c, "accuracy"] for c in clients],
            width, label=method, color=method_colour(method, ours="fedda"),
        )  # fmt: skip
    ax.set_xticks(np.arange(len(clients)) + 0.4 - width / 2, clients)
    ax.set(ylabel="test accuracy (last rounds)", title="fedda: accuracy per client (domain)")
    ax.legend(fontsize=7, ncol=2)
    return fig


def gate_weights(runs: pd.DataFrame) -> Figure:
    """FedDDA's mean gate weights per client in the last round: raw feature, specific, shared adapter."""
    fig, ax = new_figure(figsize=(5.5, 3.4))
    rows = runs[(runs["method"] == "fedda") & (runs["setting"] == "main")]
    rows = rows[rows["round"] == rows["round"].max()]
    parts = ["gate_raw", "gate_specific", "gate_shared"]
    table = rows.groupby("client", sort=False)[parts].mean()
    bottom = np.zeros(len(table))
    for part in parts:
        ax.bar(table.index, table[part], bottom=bottom, label=part.removeprefix("gate_"))
        bottom += table[part].to_numpy()
    ax.set(ylabel="mean gate weight pi", title="fedda: VDA gate per domain (last round)")
    ax.legend(fontsize=7)
    return fig
