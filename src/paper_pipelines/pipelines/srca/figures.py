"""Figures of the srca pipeline: SRCA's circle/sphere against PCA's, error vs k, co-ranking curves.

Each function returns a matplotlib ``Figure`` built with common.figures (no global state), one per node; a method
has the same colour in every figure (common.figures.method_colour; SRCA is "ours").
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from sklearn.decomposition import PCA

from paper_pipelines.common.figures import method_colour, new_figure
from paper_pipelines.pipelines.srca.baselines import baseline_projection
from paper_pipelines.pipelines.srca.data import Datasets, coranking_points
from paper_pipelines.pipelines.srca.parameters import EvaluationParams
from paper_pipelines.pipelines.srca.srca import SRCAModel, project


def colour(method: str) -> str:
    """A method's colour; SRCA, the paper's own method, takes the house colour of "ours" (blue)."""
    return method_colour("ours" if method == "SRCA" else method)


def embedding_panels(
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    baseline_models: dict,
    evaluation: EvaluationParams,
    seed: int,
) -> list[dict]:
    """One panel per data set of ``srca.evaluation.plot_datasets``: data, SRCA's and PCA's outputs (smallest k)."""
    panels = []
    for name in evaluation.plot_datasets:
        keys = sorted(key for key in srca_models if key.startswith(f"{name}/") and "/full" in key)
        if not keys:
            continue
        key = keys[0]  # smallest k
        m = srca_models[key]
        X = coranking_points(prepared[name], evaluation.coranking_max_n, seed, name)
        panels.append(
            {
                "name": f"{name} (R^{X.shape[1]})",
                "X": X,
                "srca": project(m, X),
                "pca": baseline_projection(baseline_models[key], "PCA", X),
                "dims": 3 if m.k >= 2 and X.shape[1] >= 3 else 2,
                "k": m.k,
            }
        )
    return panels


def embedding_figure(panels: list[dict]) -> Figure:
    """One panel per data set: the data, SRCA's projections and PCA's, seen in the data's top-2 (or 3) PCs.

    Each panel dict: name, X (data), srca (SRCA output in R^D), pca (PCA output in R^D), dims (2 or 3).
    """
    fig, axes = new_figure(1, max(len(panels), 1), figsize=(5.0 * max(len(panels), 1), 4.6))
    axes = np.atleast_1d(axes)
    for i, panel in enumerate(panels):
        dims = panel["dims"]
        view = PCA(n_components=dims, svd_solver="full").fit(panel["X"])
        proj = {key: view.transform(panel[key]) for key in ("X", "srca", "pca")}
        ax = axes[i]
        if dims == 3:  # new_figure lays out flat axes; a 3-D panel replaces its slot
            ax.remove()
            ax = fig.add_subplot(1, len(panels), i + 1, projection="3d")
        styles = {
            "X": {"s": 4, "c": "0.7", "label": "data"},
            "pca": {"s": 5, "c": colour("PCA"), "label": f"PCA (k={panel['k']})"},
            "srca": {"s": 5, "c": colour("SRCA"), "label": f"SRCA (k={panel['k']})"},
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
    fig, axes = new_figure(rows, cols, figsize=(4.2 * cols, 3.3 * rows))
    axes = np.atleast_1d(axes).ravel()
    for ax, name in zip(axes, names, strict=False):
        sub = table[table.dataset == name]
        for method, grp in sub.groupby("method"):
            grp = grp.sort_values("k")
            # floored so that exact fits (MSE ~ 1e-31) stay on a readable log axis
            ax.plot(
                grp.k,
                np.maximum(grp.mse, 1e-12),
                marker="o",
                label=method,
                color=colour(method),
            )
        ax.set_title(name)
        ax.set_xlabel("k")
        ax.set_ylabel("MSE (floor 1e-12)")
        ax.set_yscale("log")
        ax.set_xticks(sorted(sub.k.unique()))
        ax.legend(fontsize=7)
    for ax in axes[len(names) :]:
        ax.set_visible(False)  # empty grid slots
    return fig


def coranking_figure(curves: pd.DataFrame) -> Figure:
    """R_NX(K) against K (log scale) for each method, one panel per data set."""
    names = list(dict.fromkeys(curves.dataset)) or ["(none)"]
    fig, axes = new_figure(1, len(names), figsize=(5.0 * len(names), 3.8))
    for ax, name in zip(np.atleast_1d(axes), names, strict=True):
        for method, grp in curves[curves.dataset == name].groupby("method", sort=False):
            ax.plot(grp.K, grp.rnx, label=method, color=colour(method))
        ax.set_xscale("log")
        ax.set_xlabel("K (neighbourhood size)")
        ax.set_ylabel("R_NX(K)")
        ax.set_title(f"co-ranking: {name}")
        ax.legend(fontsize=7)
    return fig
