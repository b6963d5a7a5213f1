"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import PALETTE, method_colour, new_figure

from .taskgraph import DIMENSIONS, LEVELS

# One distinct colour and style per agent (CRC32 colours collide for these names).
AGENT_STYLE = {
    "random": (PALETTE[7], ":"),
    "oracle_contiguous": (PALETTE[2], "-"),
    "oracle_random_order": (PALETTE[1], "--"),
    "noisy_oracle": (PALETTE[3], "-"),
    "instruction_planner": (PALETTE[0], "-"),
    "learned_planner": (PALETTE[4], "-."),
    "lm_agent": (PALETTE[5], (0, (5, 1, 1, 1))),
}


def _style(agent: str) -> dict:
    colour, line = AGENT_STYLE.get(agent, (method_colour(agent), "-"))
    return {"color": colour, "linestyle": line}


def capability_radar(capability_scores: pd.DataFrame) -> Figure:
    """Mean completion per capability suite, one polygon per agent (the paper's capability radar)."""
    fig, ax = new_figure(figsize=(6.5, 6.0), subplot_kw={"projection": "polar"})
    names = list(dict.fromkeys(capability_scores["capability"]))
    angles = np.linspace(0, 2 * np.pi, len(names), endpoint=False)
    for agent, frame in capability_scores.groupby("agent", sort=False):
        values = frame.set_index("capability").reindex(names)["completion"].fillna(0).to_numpy()
        closed = np.append(values, values[:1])
        ax.plot(np.append(angles, angles[:1]), closed, label=agent, **_style(agent))
    ax.set_xticks(angles)
    ax.set_xticklabels([n.replace("_", "\n") for n in names], fontsize=7)
    ax.set_ylim(0, 1.05)
    ax.set_title("completion per capability suite")
    ax.legend(fontsize=7, loc="upper right", bbox_to_anchor=(1.35, 1.1))
    return fig


def complexity_figure(curves: pd.DataFrame) -> Figure:
    """Success vs complexity level (Easy / Medium / Hard), one panel per dimension, one line per agent."""
    fig, axes = new_figure(1, len(DIMENSIONS), figsize=(14, 3.4))
    for ax, dim in zip(axes, DIMENSIONS, strict=True):
        sub = curves[curves.dimension == dim]
        for agent, frame in sub.groupby("agent", sort=False):
            frame = frame.set_index("level").reindex(LEVELS)
            ax.plot(LEVELS, frame["success"], marker="o", label=agent, **_style(agent))
        ax.set(title=dim, ylim=(-0.05, 1.05))
        ax.set_xlabel("level")
    axes[0].set_ylabel("success rate")
    axes[-1].legend(fontsize=7, loc="lower left")
    return fig
