"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure
from paper_pipelines.pipelines.dlp.grid import allocation_key

# One line style per base pruner, so a method keeps its colour across bases.
BASE_STYLES = {"wanda": "-", "sparsegpt": "--", "magnitude": ":"}


def allocation_figure(
    layer_sparsities: dict[str, Any], methods: Sequence[str], target: float
) -> Figure:
    """Sparsity per block for each allocation at the target sparsity."""
    fig, ax = new_figure()
    for method in methods:
        values = layer_sparsities[allocation_key(method, target)]
        ax.plot(
            range(len(values)), values, marker="o", ms=3, label=method, color=method_colour(method)
        )
    ax.set(xlabel="block", ylabel="sparsity", title=f"Per-block sparsity at S = {target:g}")
    ax.legend()
    return fig


def perplexity_figure(runs: pd.DataFrame, dense_ppl: float) -> Figure:
    """Perplexity against target sparsity, one line per allocation and base pruner (log scale)."""
    fig, ax = new_figure()
    for (method, base), group in runs.groupby(["allocation", "base"]):
        group = group.sort_values("target_sparsity")
        ax.plot(
            group["target_sparsity"],
            group["perplexity"],
            marker="o",
            label=f"{method} + {base}",
            color=method_colour(method),
            ls=BASE_STYLES.get(base, "-"),
        )
    ax.axhline(dense_ppl, color=method_colour("dense"), ls="--", label="dense")
    ax.set(xlabel="target sparsity", ylabel="perplexity", yscale="log", title=runs["model"].iloc[0])
    ax.legend(fontsize=8)
    return fig
