"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import PALETTE, method_colour, new_figure

# One distinct colour per variant (hashing the names makes Up-E and DISC-H both blue); DISC-H, the
# gated variant, keeps the paper's-own-method blue.
COLOURS = {
    "upe": PALETTE[7], "concat": "#7f7f7f", "self": PALETTE[1], "upg": PALETTE[2],
    "disc_h": PALETTE[0], "disc": PALETTE[4], "disc_late": PALETTE[5],
}  # fmt: skip
TITLES = {"cls": "classification: probe top-1", "box": "detection: box accuracy (IoU >= 0.5)"}


def accuracy_by_variant(results: pd.DataFrame) -> Figure:
    """Mean probe accuracy per variant for each main task, error bars one std over replicates."""
    fig, axes = new_figure(1, 2, figsize=(9.0, 3.6))
    for ax, task in zip(axes, ("cls", "box"), strict=True):
        rows = results[results["task"] == task]
        ax.bar(
            rows["method"],
            rows["mean"],
            yerr=rows["std"],
            capsize=3,
            color=[COLOURS.get(m) or method_colour(m) for m in rows["method"]],
        )
        low = float((rows["mean"] - rows["std"]).min())
        high = float((rows["mean"] + rows["std"]).max())
        pad = max(0.01, 0.15 * (high - low))
        ax.set_ylim(max(0.0, low - pad), min(1.0, high + pad))
        ax.set_title(TITLES[task], fontsize=10)
        ax.tick_params(axis="x", rotation=30)
    axes[0].set_ylabel("accuracy (mean over replicates)")
    return fig


def selective_weight_histogram(w_main: Sequence[float], bins: int) -> Figure:
    """Histogram of DISC's per-sample selective weight w_main on the downstream test canvases."""
    fig, ax = new_figure(figsize=(5.5, 3.4))
    values = np.asarray(w_main, dtype=float)
    ax.hist(values, bins=bins, range=(0.0, 1.0), color=COLOURS["disc"])
    ax.axvline(0.5, color="#7f7f7f", ls="--", lw=1)
    ax.set(xlabel="w_main (weight of the main model's pooled feature)", ylabel="canvases",
           title="DISC selective weights (classification)")  # fmt: skip
    return fig
