"""Figures of the srca pipeline: SRCA's circle/sphere against PCA's, error vs k, co-ranking curves."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402


def embedding_figure(panels: list[dict]) -> Figure:
    """One panel per data set: the data, SRCA's projections and PCA's, seen in the data's top-2 (or 3) PCs.

    Each panel dict: name, X (data), srca (SRCA output in R^D), pca (PCA output in R^D), dims (2 or 3).
    """
    fig = Figure(figsize=(5.0 * max(len(panels), 1), 4.6))
    for i, panel in enumerate(panels, start=1):
        dims = panel["dims"]
        view = PCA(n_components=dims, svd_solver="full").fit(panel["X"])
        proj = {key: view.transform(panel[key]) for key in ("X", "srca", "pca")}
        if dims == 3:
            ax = fig.add_subplot(1, len(panels), i, projection="3d")
        else:
            ax = fig.add_subplot(1, len(panels), i)
        styles = {
            "X": {"s": 4, "c": "0.7", "label": "data"},
            "pca": {"s": 5, "c": "tab:blue", "label": f"PCA (k={panel['k']})"},
            "srca": {"s": 5, "c": "tab:red", "label": f"SRCA (k={panel['k']})"},
        }
        for key in ("X", "pca", "srca"):
            ax.scatter(*proj[key].T[:dims], **styles[key])
        ax.set_title(panel["name"])
        ax.legend(loc="upper right", fontsize=7, markerscale=3)
    fig.suptitle("Data and its reconstructions (top principal axes of the data)")
    return fig


def mse_figure(mse_table: pd.DataFrame) -> Figure:
    """In-sample reconstruction MSE against k, one panel per data set, one line per method."""
    table = mse_table[mse_table.evaluation == "in_sample"]
    names = list(dict.fromkeys(table.dataset))
    cols = min(len(names), 3) or 1
    rows = int(np.ceil(len(names) / cols)) or 1
    fig = Figure(figsize=(4.2 * cols, 3.3 * rows))
    for i, name in enumerate(names, start=1):
        ax = fig.add_subplot(rows, cols, i)
        sub = table[table.dataset == name]
        for method, grp in sub.groupby("method"):
            grp = grp.sort_values("k")
            # floored so that exact fits (MSE ~ 1e-31) stay on a readable log axis
            ax.plot(grp.k, np.maximum(grp.mse, 1e-12), marker="o", label=method)
        ax.set_title(name)
        ax.set_xlabel("k")
        ax.set_ylabel("MSE (floor 1e-12)")
        ax.set_yscale("log")
        ax.set_xticks(sorted(sub.k.unique()))
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def coranking_figure(curves: pd.DataFrame) -> Figure:
    """R_NX(K) against K (log scale) for each method, one panel per data set."""
    names = list(dict.fromkeys(curves.dataset)) or ["(none)"]
    fig = Figure(figsize=(5.0 * len(names), 3.8))
    for i, name in enumerate(names, start=1):
        ax = fig.add_subplot(1, len(names), i)
        for method, grp in curves[curves.dataset == name].groupby("method", sort=False):
            ax.plot(grp.K, grp.rnx, label=method)
        ax.set_xscale("log")
        ax.set_xlabel("K (neighbourhood size)")
        ax.set_ylabel("R_NX(K)")
        ax.set_title(f"co-ranking: {name}")
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
