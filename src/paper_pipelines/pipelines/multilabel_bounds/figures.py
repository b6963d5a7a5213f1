"""One function per figure, each returning a matplotlib Figure (object API only)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter

from paper_pipelines.common.figures import PALETTE, method_colour, new_figure

from .rates import cell_means

LOSS_ORDER = ("squared", "logistic", "squared_hinge", "hinge")


# one distinct colour per base loss; the hinge baseline in grey
LOSS_COLOURS = {
    "squared": PALETTE[0],
    "logistic": PALETTE[1],
    "squared_hinge": PALETTE[2],
    "hinge": "#7f7f7f",
}

BLOCK_COLOURS = {"low_d": PALETTE[7], "high_d": PALETTE[0], "optimistic": PALETTE[3]}


def _colour(loss: str) -> str:
    return LOSS_COLOURS.get(loss) or method_colour(loss)


def gap_vs_n_figure(gaps: pd.DataFrame) -> Figure:
    """Surrogate gap against n per loss on log-log axes, one panel per block, with n^-1/2 and n^-1 guides."""
    cells = cell_means(gaps)
    blocks = [b for b in ("low_d", "high_d", "optimistic", "real") if b in set(cells.block)]
    fig, axes = new_figure(1, max(1, len(blocks)), figsize=(3.4 * max(1, len(blocks)), 3.4))
    axes = np.atleast_1d(axes)
    for ax, block in zip(axes, blocks, strict=False):
        sub = cells[cells.block == block]
        c_show = sub.c.max()
        for loss in [x for x in LOSS_ORDER if x in set(sub.loss)]:
            for kind, style in (("linear", "-"), ("lowrank", "--")):
                g = sub[(sub.loss == loss) & (sub.model == kind) & (sub.c == c_show)]
                g = g.groupby("n", as_index=False)["gap_surrogate"].mean()
                g = g[g.gap_surrogate > 0]
                if len(g):
                    ax.plot(g.n, g.gap_surrogate, style, marker="o", ms=3, color=_colour(loss),
                            label=f"{loss} ({kind})")  # fmt: skip
        ns = np.array(sorted(sub.n.unique()), float)
        top = sub[sub.gap_surrogate > 0].gap_surrogate.max() if (sub.gap_surrogate > 0).any() else 1
        for power, name in ((0.5, "n^-1/2"), (1.0, "n^-1")):
            ax.plot(ns, top * (ns / ns[0]) ** -power, ":", color="grey", lw=1)
            ax.annotate(name, (ns[-1], top * (ns[-1] / ns[0]) ** -power), fontsize=7, color="grey")
        ax.set(xscale="log", yscale="log", xlabel="n", title=f"{block} (c = {c_show})")
        ax.xaxis.set_minor_formatter(NullFormatter())
    axes[0].set_ylabel("surrogate gap (test - train risk)")
    axes[0].legend(fontsize=6)
    return fig


def gap_vs_c_figure(gaps: pd.DataFrame) -> Figure:
    """Surrogate and 1 - Macro-AUC gaps against c (low-d block, eta = 0), decoupled and low-rank."""
    cells = cell_means(gaps)
    sub = cells[(cells.block == "low_d") & (cells.eta == cells.eta.min())] if len(cells) else cells
    fig, axes = new_figure(1, 2, figsize=(8.0, 3.4))
    for ax, measure in zip(axes, ("surrogate", "auc_loss"), strict=True):
        n_show = sorted(sub.n.unique())[len(sub.n.unique()) // 2] if len(sub) else 0
        for loss in [x for x in LOSS_ORDER if x in set(sub.loss)]:
            for kind, style in (("linear", "-"), ("lowrank", "--")):
                g = sub[(sub.loss == loss) & (sub.model == kind) & (sub.n == n_show)].sort_values(
                    "c"
                )
                if len(g):
                    ax.plot(g.c, g[f"gap_{measure}"], style, marker="o", ms=3, color=_colour(loss),
                            label=f"{loss} ({kind})")  # fmt: skip
        ax.set(
            xscale="log", xlabel="c (labels)", ylabel=f"{measure} gap", title=f"low_d, n = {n_show}"
        )
        ax.axhline(0, color="grey", lw=0.5)
    axes[0].legend(fontsize=6)
    return fig


def rademacher_figure(rad: pd.DataFrame) -> Figure:
    """sqrt(n) x the Rademacher estimates against c (loss class by ascent), and r* against n."""
    fig, axes = new_figure(1, 2, figsize=(8.0, 3.4))
    lc = rad[rad.quantity == "loss_class"]
    for (kind, loss), g in lc.groupby(["model", "loss"]):
        g = g[g.n == g.n.max()].sort_values("c")
        axes[0].errorbar(g.c, g.sqrt_n_value, yerr=g.spread * np.sqrt(g.n), marker="o", ms=3,
                         ls="-" if kind == "linear" else "--", color=_colour(loss),
                         label=f"{loss} ({kind})")  # fmt: skip
    flat = rad[(rad.quantity == "flattened") & (rad.model == "linear")]
    for _, g in flat.groupby("n"):
        axes[0].plot(g.c, g.sqrt_n_value, ":", color="grey", marker="x", ms=3)
    axes[0].set(xscale="log", xlabel="c", ylabel="sqrt(n) x R_hat", title="loss class (ascent)")
    axes[0].xaxis.set_minor_formatter(NullFormatter())
    if len(lc):
        axes[0].legend(fontsize=6)
    local = rad[rad.quantity == "local_fixed_point"]
    for block, g in local.groupby("block"):
        colour = BLOCK_COLOURS.get(block, "#7f7f7f")
        axes[1].plot(g.n, g.value, marker="o", ms=3, label=block, color=colour)
    axes[1].set(
        xscale="log", yscale="log", xlabel="n", ylabel="r* (spectral)", title="local fixed point"
    )
    if len(local):
        axes[1].legend(fontsize=7)
    return fig
