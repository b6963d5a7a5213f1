"""The paper's figures, one function each, as matplotlib Figures (saved by the catalog).

Curves are labelled as the paper's plots name the policies ("FTA: Optimal", "ATA-Empirical"); the colour
follows that label through common.figures.method_colour, so a policy keeps its colour in every figure.
"""

from __future__ import annotations

import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure

LABELS = {"FTA": "FTA: Optimal", "ATA_EMP": "ATA-Empirical"}


def label(policy: str) -> str:
    """The policy's name as the paper's plots write it."""
    return LABELS.get(policy, policy)


def _loss_plot(stamped: pd.DataFrame, x: str, xlabel: str) -> Figure:
    """Training loss versus one cumulative time axis, one curve per policy."""
    fig, ax = new_figure(figsize=(6, 4))
    for policy, frame in stamped.groupby("policy", sort=False):
        name = label(policy)
        ax.plot(frame[x], frame["train_loss"], label=name, color=method_colour(name))
    ax.set_xlabel(xlabel)
    ax.set_ylabel("full training loss")
    ax.set_yscale("log")
    _finish(ax)
    return fig


def loss_vs_runtime(stamped: pd.DataFrame) -> Figure:
    """Poster 'Experiments' panel (a): training loss versus cumulative wall-clock runtime."""
    return _loss_plot(stamped, "runtime", "cumulative wall-clock runtime")


def loss_vs_worker_time(stamped: pd.DataFrame) -> Figure:
    """Poster 'Experiments' panel (b): training loss versus cumulative total worker time."""
    return _loss_plot(stamped, "worker_time", "cumulative total worker time")


def proxy_regret(round_log: pd.DataFrame) -> Figure:
    """Cumulative proxy regret sum_k (l(a^k, mu) - l(a*, mu)) / l(a*, mu) of every allocation policy."""
    fig, ax = new_figure(figsize=(6, 4))
    for policy, frame in round_log.groupby("policy", sort=False):
        if frame["proxy_ratio"].isna().all() or policy == "FTA":
            continue  # GTA has no allocation; FTA's regret is 0 by definition
        frame = frame.sort_values("k")
        name = label(policy)
        ax.plot(
            frame["k"],
            (frame["proxy_ratio"] - 1.0).cumsum(),
            label=name,
            color=method_colour(name),
        )
    ax.set_xlabel("round k")
    ax.set_ylabel("cumulative proxy regret / l(a*, mu)")
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1.0)
    ax.set_ylim(bottom=0.0)
    _finish(ax)
    return fig


def _finish(ax: Axes) -> None:
    ax.legend()
    ax.grid(alpha=0.3)
