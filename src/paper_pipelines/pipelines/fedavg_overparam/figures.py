"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure

from .metrics import pick

A, B = "kernel_regime", "heterogeneity"
OURS = "fedavg_noniid"  # the analysed setting, drawn in the house colour of a paper's own method
LABELS = {
    "fedavg_noniid": "FedAvg non-IID",
    "fedavg_iid": "FedAvg IID",
    "centralised": "centralised GD",
}


def _guide(ax, widths: np.ndarray, start: float, slope: float) -> None:
    """The theory's rate n^slope, anchored at the narrowest width's value."""
    ax.plot(widths, start * (widths / widths[0]) ** slope, "k:", label=f"n^{slope:g} (theory)")


def ntk_change_figure(sweep: pd.DataFrame, theory_slope: float) -> Figure:
    """Fig. 3 analogue: relative change of the global and of client 0's local NTK against width."""
    fig, ax = new_figure(figsize=(5.2, 3.8))
    methods = [m for m in LABELS if m in set(sweep[sweep.experiment == A].method)]
    for method in methods:
        for measure, style in (("ntk_change", "-o"), ("local_ntk_change", "--s")):
            series = pick(sweep, A, method, measure).dropna()
            if series.empty:
                continue
            kind = "global" if measure == "ntk_change" else "client-0 local"
            ax.plot(series.index, series.values, style, color=method_colour(method, ours=OURS),
                    label=f"{LABELS[method]}, {kind}")  # fmt: skip
    base = pick(sweep, A, methods[0], "ntk_change").dropna()
    if len(base):
        _guide(ax, base.index.to_numpy(float), float(base.iloc[0]), theory_slope)
    ax.set(xscale="log", yscale="log", xlabel="width n",
           ylabel="||Θ_T − Θ_0||_F / ||Θ_0||_F", title="NTK change after training")  # fmt: skip
    ax.set_xscale("log", base=2)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    return fig


def linearisation_figure(sweep: pd.DataFrame, theory_slope: float) -> Figure:
    """Fig. 4 analogue: distance to the linearised model (global, client 0), and parameter change."""
    fig, (left, right) = new_figure(1, 2, figsize=(9, 3.6))
    for method in ("fedavg_noniid", "fedavg_iid"):
        for measure, style in (("linearisation_rmse", "-o"), ("local_linearisation_rmse", "--s")):
            series = pick(sweep, A, method, measure).dropna()
            if series.empty:
                continue
            kind = "global" if measure == "linearisation_rmse" else "client-0 local"
            left.plot(series.index, series.values, style, color=method_colour(method, ours=OURS),
                      label=f"{LABELS[method]}, {kind}")  # fmt: skip
        series = pick(sweep, A, method, "weight_rmse").dropna()
        if len(series):
            right.plot(series.index, series.values, "-o", color=method_colour(method, ours=OURS),
                       label=LABELS[method])  # fmt: skip
            _guide(right, series.index.to_numpy(float), float(series.iloc[0]), 2 * theory_slope)
    left.set(xscale="log", yscale="log", xlabel="width n", ylabel="RMSE f_T vs f_0 + J_0 Δθ",
             title="distance to the linearised model")  # fmt: skip
    right.set(xscale="log", yscale="log", xlabel="width n", ylabel="sqrt(||θ_T − θ_0||² / P)",
              title="parameter change")  # fmt: skip
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    return fig


def heterogeneity_figure(sweep: pd.DataFrame) -> Figure:
    """Fig. 1 analogue: test accuracy of IID and non-IID FedAvg and centralised GD against width."""
    fig, (left, right) = new_figure(1, 2, figsize=(9, 3.6))
    for method in ("fedavg_iid", "fedavg_noniid", "centralised"):
        series = pick(sweep, B, method, "test_acc")
        left.plot(
            series.index,
            series.values,
            "-o",
            color=method_colour(method, ours=OURS),
            label=LABELS[method],
        )
    gap = pick(sweep, B, "fedavg_iid", "test_acc") - pick(sweep, B, "fedavg_noniid", "test_acc")
    right.plot(gap.index, 100 * gap.values, "-o", color=method_colour("fedavg_noniid", ours=OURS))
    right.axhline(0, color="grey", lw=0.8)
    left.set(xscale="log", xlabel="width n", ylabel="test accuracy", title="Exp. B: accuracy")
    right.set(xscale="log", xlabel="width n", ylabel="IID − non-IID (points)",
              title="heterogeneity gap")  # fmt: skip
    for ax in (left, right):
        ax.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=7)
    return fig


def fed_vs_central_figure(curves: pd.DataFrame, curve_width: str) -> Figure:
    """Fig. 6 analogue: train and test loss of FedAvg and centralised GD against total GD iterations."""
    sub = curves[curves.experiment == A]
    width = sub.width.max() if curve_width == "widest" else sub.width.min()
    sub = sub[sub.width == width]
    fig, (left, right) = new_figure(1, 2, figsize=(9, 3.6))
    for method, frame in sub.groupby("method"):
        style = "--" if method == "centralised" else "-"
        for ax, column in ((left, "train_loss"), (right, "test_loss")):
            ax.plot(frame.iterations, frame[column], style, color=method_colour(method, ours=OURS),
                    label=LABELS.get(method, method))  # fmt: skip
    for ax, what in ((left, "train"), (right, "test")):
        ax.set(yscale="log", xlabel="total GD iterations (round × τ)", ylabel=f"{what} loss",
               title=f"Exp. A, width {width}: {what}")  # fmt: skip
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    return fig
