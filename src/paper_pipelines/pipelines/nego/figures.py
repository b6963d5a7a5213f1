"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

from typing import Any

import networkx as nx
import numpy as np
import pandas as pd
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure


def accuracy_figure(results: pd.DataFrame) -> Figure:
    """OOD-test and severe-test accuracy per method, one panel per split (mean +- std over seeds)."""
    split_names = list(dict.fromkeys(results["split"]))
    fig, axes = new_figure(1, len(split_names), figsize=(4.6 * len(split_names), 3.6))
    for ax, split in zip(np.atleast_1d(axes), split_names, strict=True):
        sub = results[results["split"] == split].reset_index(drop=True)
        x = np.arange(len(sub))
        for offset, part, hatch in ((-0.2, "ood_test", None), (0.2, "severe_test", "//")):
            ax.bar(
                x + offset,
                sub[f"acc_{part}"],
                0.4,
                yerr=sub[f"acc_{part}_std"],
                color=[method_colour(m) for m in sub["method"]],
                hatch=hatch,
                edgecolor="black",
                linewidth=0.4,
                capsize=2,
                label=part.replace("_", " "),
            )
        ax.axhline(1 / 3, color="grey", lw=0.8, ls=":")
        ax.set_xticks(x, sub["method"], rotation=30, ha="right", fontsize=8)
        ax.set(
            ylim=(0, 1),
            ylabel="accuracy",
            title=f"{split} split (plain: OOD test, hatched: severe)",
        )
    return fig


def subgraph_figure(explanations: dict[str, Any]) -> Figure:
    """A few OOD-test graphs: true motif edges (top row) and each extractor method's edge mask."""
    graphs = explanations["graphs"]
    methods = sorted({m for g in graphs for m in g["masks"]})
    rows = 1 + len(methods)
    fig, axes = new_figure(rows, len(graphs), figsize=(2.6 * len(graphs), 2.5 * rows))
    axes = np.asarray(axes).reshape(rows, len(graphs))
    for j, g in enumerate(graphs):
        edges = np.asarray(g["edge_index"]).T
        graph = nx.Graph([tuple(e) for e in edges.tolist()])
        pos = nx.spring_layout(graph, seed=0)
        segments = [[pos[u], pos[v]] for u, v in edges.tolist()]
        for i, (label, weight) in enumerate(
            [("truth", g["edge_gt"])] + [(m, g["masks"][m]) for m in methods]
        ):
            ax = axes[i, j]
            w = np.asarray(weight, dtype=float)
            ax.add_collection(
                LineCollection(
                    segments,
                    linewidths=0.3 + 3 * w,
                    colors=[(0.8 * (1 - c), 0.2, 0.8 * c) for c in w],
                )
            )
            xy = np.array(list(pos.values()))
            ax.scatter(xy[:, 0], xy[:, 1], s=6, color="black", zorder=3)
            ax.set_axis_off()
            ax.set_title(f"{label}: {g['motif']} on {g['base']}" if i == 0 else label, fontsize=8)
    return fig
