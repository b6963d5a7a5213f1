"""Figures of si_pipeline, one function per figure, each returning a matplotlib Figure (object API)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure

from .report import known_sigma

# The proposed test is drawn in the house's "ours" colour; the baselines keep their name's colour (the name
# hash alone gives parametric and over_conditioning the same one).
OURS = "parametric"


def null_qq_figure(null_pvalues: pd.DataFrame) -> Figure:
    """QQ plot of the null p-values (sigma known) against Uniform(0, 1), per method."""
    known = known_sigma(null_pvalues)
    fig, ax = new_figure(figsize=(4.5, 4.5))
    for col, label, method in (
        ("p_parametric", "parametric", "parametric"),
        ("p_oc", "OC", "over_conditioning"),
        ("p_naive", "naive", "naive"),
    ):
        p = np.sort(known[col].to_numpy())
        quantiles = (np.arange(1, len(p) + 1) - 0.5) / max(len(p), 1)
        ax.plot(quantiles, p, ".", ms=3, label=label, color=method_colour(method, ours=OURS))
    ax.plot([0, 1], [0, 1], "k--", lw=0.8)
    ax.set(xlabel="Uniform quantile", ylabel="null p-value", title="Null p-values (sigma known)")
    ax.legend()
    return fig


def power_figure(power: pd.DataFrame, cv: dict, alpha: float) -> Figure:
    """Power of the parametric and OC tests per DAG and delta (and for the CV-chosen pipeline)."""
    labels = [f"{r.dag} d={r.delta}" for r in power.itertuples()]
    par, ocs = list(power["parametric"]), list(power["oc"])
    if cv.get("power", {}).get("n_tests"):
        labels.append(f"CV d={cv['power']['delta']}")
        par.append(cv["power"]["parametric"])
        ocs.append(cv["power"]["oc"])
    fig, ax = new_figure(figsize=(6, 3.5))
    x = np.arange(len(labels))
    ax.bar(x - 0.2, par, 0.4, label="parametric", color=method_colour("parametric", ours=OURS))
    ax.bar(x + 0.2, ocs, 0.4, label="OC", color=method_colour("over_conditioning", ours=OURS))
    ax.set_xticks(x, labels)
    ax.set(ylabel=f"power (alpha = {alpha:.2f})", ylim=(0, 1), title="Power of selective tests")
    ax.legend()
    return fig
