"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure


def colour(name: str) -> str:
    return method_colour(name, ours="les")


def auroc_figure(auroc: pd.DataFrame) -> Figure:
    """AUROC of each score for predicting the validity of the argmax decoding (Table 1's measure)."""
    fig, ax = new_figure(figsize=(6, 3.4))
    ax.bar(auroc["score"], auroc["auroc"], color=[colour(s) for s in auroc["score"]])
    ax.axhline(0.5, color="#7f7f7f", lw=0.8, ls="--")
    ax.set(
        ylim=(0, 1),
        ylabel="AUROC (validity)",
        title="les: OOD scores on data / prior / far latents",
    )
    return fig


def lso_figure(trajectories: pd.DataFrame) -> Figure:
    """Cumulative valid fraction and best valid objective against function evaluations, per penalty
    (mean over replicates)."""
    fig, (left, right) = new_figure(1, 2, figsize=(9, 3.4))
    for method, run in trajectories.groupby("method", sort=False):
        valid_curves, best_curves = [], []
        for _, rep in run.groupby("replicate"):
            rep = rep.sort_values("evaluation")
            valid = rep["valid"].to_numpy(dtype=float)
            valid_curves.append(np.cumsum(valid) / np.arange(1, len(valid) + 1))
            objective = np.where(rep["valid"], rep["objective"], -np.inf)
            best_curves.append(np.maximum.accumulate(objective))
        n = min(len(c) for c in valid_curves)
        x = np.arange(1, n + 1)
        left.plot(x, np.mean([c[:n] for c in valid_curves], 0), color=colour(method), label=method)
        best = np.array([c[:n] for c in best_curves])
        best = np.where(np.isfinite(best), best, np.nan)
        with np.errstate(all="ignore"):
            right.plot(x, np.nanmean(best, 0), color=colour(method), label=method)
    left.set(xlabel="function evaluations", ylabel="valid fraction (cumulative)", ylim=(0, 1.02))
    right.set(xlabel="function evaluations", ylabel="best valid objective")
    left.legend(fontsize=8)
    return fig
