"""Baselines of the paper's comparisons: PCA and spherelets on the same fits as SRCA (Table 4.1 / H.1), and
scikit-learn's Isomap, LLE, t-SNE and MDS for the co-ranking comparison (`Coranking.Rmd`)."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
from sklearn.decomposition import PCA

from paper_pipelines.common.runtime import substream_seed
from paper_pipelines.pipelines.srca.data import Datasets, coranking_points
from paper_pipelines.pipelines.srca.parameters import BaselineParams, EvaluationParams, ModelParams
from paper_pipelines.pipelines.srca.spherelets import fit_spherelet, project_spherelet
from paper_pipelines.pipelines.srca.srca import fit_key, fit_splits

logger = logging.getLogger(__name__)

MANIFOLD_LABELS = {"isomap": "Isomap", "lle": "LLE", "tsne": "t-SNE", "mds": "MDS"}


def fit_baseline_models(prepared: Datasets, model: ModelParams) -> dict[str, dict[str, Any]]:
    """PCA (scikit-learn) and spherelets (closed form) for every data set, k and split SRCA is fitted on."""
    fits: dict[str, dict[str, Any]] = {}
    for name, d in prepared.items():
        for k in model.k.get(name, []):
            for split, X in fit_splits(d, model.out_of_sample):
                entry: dict[str, Any] = {"seconds": {}}
                start = time.perf_counter()
                entry["pca"] = PCA(n_components=k, svd_solver="full").fit(X)
                entry["seconds"]["PCA"] = time.perf_counter() - start
                start = time.perf_counter()
                entry["spherelets"] = fit_spherelet(X, k)
                entry["seconds"]["Spherelets"] = time.perf_counter() - start
                fits[fit_key(name, k, split)] = entry
    return fits


def baseline_projection(entry: dict[str, Any], method: str, X: np.ndarray) -> np.ndarray:
    """A baseline's reconstruction of X in R^D: PCA's mean + scores x components, or onto the spherelet."""
    if method == "PCA":
        pca = entry["pca"]
        return pca.inverse_transform(pca.transform(X))
    return project_spherelet(entry["spherelets"], X)


def manifold_estimator(method: str, n: int, dim: int, b: BaselineParams, random_state: int) -> Any:
    """A scikit-learn embedding of `dim` dimensions (never re-implemented here)."""
    from sklearn.manifold import MDS, TSNE, Isomap, LocallyLinearEmbedding

    if method == "isomap":
        return Isomap(n_neighbors=b.n_neighbors, n_components=dim)
    if method == "lle":
        return LocallyLinearEmbedding(
            n_neighbors=b.n_neighbors,
            n_components=dim,
            eigen_solver="dense",
            random_state=random_state,
        )
    if method == "tsne":
        perplexity = min(b.tsne_perplexity, (n - 1) / 3)
        return TSNE(n_components=dim, perplexity=perplexity, init="pca", random_state=random_state)
    return MDS(n_components=dim, random_state=random_state, n_init=1)


def fit_manifold_embeddings(
    prepared: Datasets,
    baselines: BaselineParams,
    evaluation: EvaluationParams,
    seed: int,
) -> dict[str, dict[str, np.ndarray]]:
    """Each manifold method's embedding of each co-ranking data set (the points co-ranking scores)."""
    random_state = substream_seed(seed, "baselines")
    out: dict[str, dict[str, np.ndarray]] = {}
    for name in evaluation.coranking_datasets:
        if name not in prepared:
            continue
        X = coranking_points(prepared[name], evaluation.coranking_max_n, seed, name)
        out[name] = {}
        for method in baselines.manifold_methods:
            start = time.perf_counter()
            estimator = manifold_estimator(
                method, X.shape[0], evaluation.coranking_k, baselines, random_state
            )
            out[name][method] = estimator.fit_transform(X)
            logger.info("%s embedding of %s in %.1f s", method, name, time.perf_counter() - start)
    return out
