"""The two figures of a neutrality run, each a matplotlib Figure that the catalog saves.

Technique shares are stacked in one fixed colour per annotation category (categories, not methods, so the
six stay distinguishable); bars that stand for a generator use its method colour (common.figures).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure
from paper_pipelines.pipelines.neutrality.techniques import LABELS, TASK_TYPES, UNPARSED

LABEL_COLOURS = {
    "refusal": "#4c72b0",
    "avoidance": "#8172b3",
    "reasonable_pluralism": "#55a868",
    "radical_transparency": "#ccb974",
    "no_approximation": "#8c8c8c",
    "bias": "#c44e52",
    UNPARSED: "#000000",
}


def _flat(axes) -> list:
    return list(np.asarray(axes, dtype=object).reshape(-1))


def distribution_figure(distribution: pd.DataFrame, judge: str) -> Figure:
    """Stacked technique shares per input type, one panel per generator (the paper's Sec. 5 figure)."""
    dist = distribution[distribution["judge"] == judge]
    generators = list(dict.fromkeys(dist["generator"]))
    labels = [c for c in [*LABELS, UNPARSED] if c in dist.columns]
    ncols = min(3, max(1, len(generators)))
    nrows = max(1, math.ceil(len(generators) / ncols))
    fig, axes = new_figure(nrows, ncols, figsize=(4.6 * ncols, 2.6 * nrows + 0.8))
    axes = _flat(axes)
    for ax, gen in zip(axes, generators, strict=False):
        block = dist[dist["generator"] == gen].set_index("task_type")
        tasks = [t for t in TASK_TYPES if t in block.index]
        left = np.zeros(len(tasks))
        for lab in labels:
            vals = block.loc[tasks, lab].to_numpy(dtype=float)
            ax.barh(tasks, vals, left=left, color=LABEL_COLOURS[lab], label=lab)
            left += vals
        ax.set_xlim(0, 1)
        ax.invert_yaxis()
        ax.set_title(gen, fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in axes[len(generators) :]:
        ax.axis("off")
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(
        handles, names, loc="outside lower center", ncol=len(names), fontsize=7, frameon=False
    )
    fig.suptitle(f"Technique used per input type (judge: {judge})", fontsize=10)
    return fig


def symmetry_figure(annotations: pd.DataFrame, uniform: pd.DataFrame, judge: str) -> Figure:
    """Uniform neutrality view: label shares per partisan persona, and the TV distance per generator."""
    persona = annotations[
        (annotations["task_type"] == "opinion_persona") & (annotations["judge"] == judge)
    ]
    uni = uniform[uniform["judge"] == judge]
    fig, (ax_tv, ax_dist) = new_figure(1, 2, figsize=(11, 4))
    ax_tv.get_gridspec().set_width_ratios([1, 2])
    ax_tv.barh(
        uni["generator"],
        uni["persona_tv_distance"],
        color=[method_colour(g) for g in uni["generator"]],
    )
    ax_tv.set_xlim(0, 1)
    ax_tv.invert_yaxis()
    ax_tv.set_xlabel("TV distance between personas (0 = uniform)")
    ax_tv.tick_params(labelsize=7)
    shares = (
        persona.groupby(["generator", "viewpoint"])["label"]
        .value_counts(normalize=True)
        .unstack(fill_value=0)
    )
    rows = [f"{g} | {v}" for g, v in shares.index]
    left = np.zeros(len(rows))
    for lab in [c for c in [*LABELS, UNPARSED] if c in shares.columns]:
        vals = shares[lab].to_numpy(dtype=float)
        ax_dist.barh(rows, vals, left=left, color=LABEL_COLOURS[lab], label=lab)
        left += vals
    ax_dist.set_xlim(0, 1)
    ax_dist.invert_yaxis()
    ax_dist.tick_params(labelsize=6)
    ax_dist.legend(fontsize=6, loc="lower right")
    fig.suptitle(
        f"Uniform neutrality across partisan personas (extension; judge: {judge})", fontsize=10
    )
    return fig
