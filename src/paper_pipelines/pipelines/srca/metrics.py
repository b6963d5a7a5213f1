"""Evaluation measures of the paper's scripts: reconstruction MSE (`MATCH_DIST.m`), co-ranking scores
(`Coranking.Rmd`, maths in coranking.py) and phase recovery, and the tables of them per data set and method."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
from sklearn.decomposition import PCA

from paper_pipelines.pipelines.srca.baselines import MANIFOLD_LABELS, baseline_projection
from paper_pipelines.pipelines.srca.coranking import coranking_scores
from paper_pipelines.pipelines.srca.data import Datasets, coranking_points
from paper_pipelines.pipelines.srca.parameters import EvaluationParams
from paper_pipelines.pipelines.srca.srca import SRCAModel, fit_key, project, reduced_coordinates

logger = logging.getLogger(__name__)


def reconstruction_mse(X: np.ndarray, X_hat: np.ndarray) -> float:
    """Table 4.1 / H.1 measure: mean over points of the squared Euclidean distance ||x_i - x_hat_i||^2."""
    X = np.asarray(X, dtype=float)
    X_hat = np.asarray(X_hat, dtype=float)
    if X.shape != X_hat.shape:
        raise ValueError(f"reconstruction must match the data's shape {X.shape}, got {X_hat.shape}")
    return float(((X - X_hat) ** 2).sum(axis=1).mean())


def angles(coords: np.ndarray) -> np.ndarray:
    """Angle of each point in the plane of its first two (reduced) coordinates."""
    coords = np.asarray(coords, dtype=float)
    return np.arctan2(coords[:, 1], coords[:, 0])


def phase_recovery(estimated: np.ndarray, true: np.ndarray) -> float:
    """Circular agreement up to rotation and reflection: max(|mean e^{i(a - t)}|, |mean e^{i(a + t)}|).

    1 means the estimated angles equal the true phase up to a constant shift (and orientation);
    about 1/sqrt(n) for unrelated angles.
    """
    a = np.asarray(estimated, dtype=float)
    t = np.asarray(true, dtype=float)
    same = abs(np.exp(1j * (a - t)).mean())
    flipped = abs(np.exp(1j * (a + t)).mean())
    return float(max(same, flipped))


def pca_angles(X_fit: np.ndarray, X: np.ndarray) -> np.ndarray:
    """PCA's phase estimate: the angle of each point in the top-2 PCA plane of ``X_fit``."""
    return angles(PCA(n_components=2, svd_solver="full").fit(X_fit).transform(X))


# ----------------------------------------------------------------------------- tables


def reconstruction_table(
    prepared: Datasets, srca_models: dict[str, SRCAModel], baseline_models: dict
) -> pd.DataFrame:
    """Reconstruction MSE per data set, k, method, in-sample (Table 4.1) and out-of-sample (H.1)."""
    rows = []
    for key, m in srca_models.items():
        name, kstr, split = key.split("/")
        d = prepared[name]
        X_eval = d["X"] if split == "full" else d["X"][d["test"]]
        evaluation = "in_sample" if split == "full" else "out_of_sample"
        base = baseline_models[key]
        common = {"dataset": name, "k": m.k, "evaluation": evaluation, "n": d["X"].shape[0]}
        common["D"] = d["X"].shape[1]
        rows.append(
            {
                **common,
                "method": "SRCA",
                "mse": reconstruction_mse(X_eval, project(m, X_eval)),
                "fit_seconds": m.fit_seconds,
                "axes": ",".join(str(a) for a in m.axes),
                "search": m.search,
                "sphere_fits": m.n_subsets,
                "radius": m.radius,
            }
        )
        for method in ("PCA", "Spherelets"):
            rows.append(
                {
                    **common,
                    "method": method,
                    "mse": reconstruction_mse(X_eval, baseline_projection(base, method, X_eval)),
                    "fit_seconds": base["seconds"][method],
                    "axes": "",
                    "search": "",
                    "sphere_fits": 0,
                    "radius": (
                        float(base["spherelets"].radius) if method == "Spherelets" else float("nan")
                    ),
                }
            )
    return pd.DataFrame(rows)


def coranking_tables(
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    baseline_models: dict,
    manifold: dict[str, dict[str, np.ndarray]],
    evaluation: EvaluationParams,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Co-ranking AUCs (original vs each method's output, as `Coranking.Rmd`) and the R_NX curves."""
    rows, curves = [], []
    for name in evaluation.coranking_datasets:
        key = fit_key(name, evaluation.coranking_k, "full")
        if name not in prepared or key not in srca_models:
            continue
        X = coranking_points(prepared[name], evaluation.coranking_max_n, seed, name)
        outputs = {
            "SRCA": project(srca_models[key], X),
            "PCA": baseline_projection(baseline_models[key], "PCA", X),
            "Spherelets": baseline_projection(baseline_models[key], "Spherelets", X),
        }
        for method, emb in manifold.get(name, {}).items():
            outputs[MANIFOLD_LABELS[method]] = emb
        for method, out in outputs.items():
            scores = coranking_scores(X, out)
            rows.append(
                {
                    "dataset": name,
                    "method": method,
                    "k": evaluation.coranking_k,
                    "n": X.shape[0],
                    "auc_weighted": scores["auc_weighted"],
                    "auc_unweighted": scores["auc_unweighted"],
                    "k_max_lcmc": scores["k_max_lcmc"],
                }
            )
            rnx = scores["rnx"]
            curves.append(
                pd.DataFrame(
                    {"dataset": name, "method": method, "K": np.arange(1, len(rnx) + 1), "rnx": rnx}
                )
            )
            logger.info("co-ranking %s %s: weighted AUC %.3f", name, method, scores["auc_weighted"])
    curve_frame = (
        pd.concat(curves, ignore_index=True)
        if curves
        else pd.DataFrame(columns=["dataset", "method", "K", "rnx"])
    )
    return pd.DataFrame(rows), curve_frame


def phase_table(
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    baseline_models: dict,
    evaluation: EvaluationParams,
) -> pd.DataFrame:
    """Recovery of the true cycle phase from the angle on the fitted circle (k = 1), per method."""
    rows: list[dict[str, Any]] = []
    for name in evaluation.phase_datasets:
        if name not in prepared or "phase" not in prepared[name]:
            continue
        d = prepared[name]
        for split in ("full", "train"):
            key = fit_key(name, 1, split)
            if key not in srca_models:
                continue
            idx = np.arange(d["X"].shape[0]) if split == "full" else d["test"]
            X, truth = d["X"][idx], d["phase"][idx]
            X_fit = d["X"] if split == "full" else d["X"][d["train"]]
            sph = baseline_models[key]["spherelets"]
            estimates = {
                "SRCA": angles(reduced_coordinates(srca_models[key], X)),
                "PCA": pca_angles(X_fit, X),
                "Spherelets": angles((X - sph.center) @ sph.basis),
            }
            for method, est in estimates.items():
                rows.append(
                    {
                        "dataset": name,
                        "evaluation": "in_sample" if split == "full" else "out_of_sample",
                        "method": method,
                        "phase_recovery": phase_recovery(est, truth),
                    }
                )
    return pd.DataFrame(rows, columns=["dataset", "evaluation", "method", "phase_recovery"])
