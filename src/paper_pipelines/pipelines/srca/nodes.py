"""Node functions of the srca pipeline: unpack parameters, call the method modules, return data."""

from __future__ import annotations

import logging
import math
import time
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from sklearn.decomposition import PCA
from threadpoolctl import threadpool_limits

from paper_pipelines.common.params import validate_params
from paper_pipelines.pipelines.srca import data_sources, figures
from paper_pipelines.pipelines.srca.coranking import coranking_scores
from paper_pipelines.pipelines.srca.evaluation import angles, phase_recovery, reconstruction_mse
from paper_pipelines.pipelines.srca.parameters import (
    BaselineParams,
    DataParams,
    EvalParams,
    ModelParams,
    PreprocessParams,
)
from paper_pipelines.pipelines.srca.spherelets import fit_spherelet, project_spherelet
from paper_pipelines.pipelines.srca.srca import (
    SRCAModel,
    check_data,
    fit_srca,
    project,
    reduced_coordinates,
)

logger = logging.getLogger(__name__)

Datasets = dict[str, dict[str, Any]]

CONTRACT = (
    "mse_ratio_srca_over_pca_circle_k1",
    "mse_ratio_srca_over_pca_co2_k1",
    "phase_recovery_circle",
    "max_ratio_srca_over_pca_flat",
    "coranking_auc_srca_sphere",
    "coranking_auc_pca_sphere",
)


def fit_key(name: str, k: int, split: str) -> str:
    """Key of one fit: data set, target dimension and the data it saw ('full' or 'train')."""
    return f"{name}/k{k}/{split}"


# ---------------------------------------------------------------- ingest


def make_datasets(data: dict) -> Datasets:
    """Ingest: build every requested data set offline (generators, statsmodels CO2, sklearn tables)."""
    p = validate_params(DataParams, data, "srca.data")
    out: Datasets = {}
    for offset, name in enumerate(p.datasets):
        seed = (
            p.seed + 1000 * offset
        )  # each data set its own stream, stable under reordering of others
        if name in ("sphere_exact", "sphere"):
            s = getattr(p, name)
            out[name] = data_sources.noisy_sphere(s.n, s.radius, s.center, s.noise, s.dim, seed)
        elif name in ("circle", "circle_hd"):
            s = getattr(p, name)
            out[name] = data_sources.noisy_circle(s.n, s.D, s.radius, s.noise, s.anisotropy, seed)
        elif name == "cellcycle":
            s = p.cellcycle
            out[name] = data_sources.synthetic_cell_cycle(
                s.n, s.n_features, s.n_markers, s.noise, s.g0_fraction, seed
            )
        elif name == "co2":
            series, weeks = data_sources.load_co2()
            d = data_sources.co2_delay_embedding(series, weeks, p.co2.window, p.co2.trend)
            if p.co2.max_n is not None and d["X"].shape[0] > p.co2.max_n:
                keep = np.sort(
                    np.random.default_rng(seed).choice(d["X"].shape[0], p.co2.max_n, replace=False)
                )
                d = {key: val[keep] for key, val in d.items()}
            out[name] = d
        else:
            out[name] = data_sources.sklearn_table(name)
        logger.info("data set %s: %d points in R^%d", name, *out[name]["X"].shape)
    return out


# ---------------------------------------------------------------- preprocess


def prepare_datasets(raw: Datasets, preprocess: dict) -> Datasets:
    """Preprocess: check each table, standardise the listed ones, draw the 50/50 train/test split."""
    p = validate_params(PreprocessParams, preprocess, "srca.preprocess")
    # numpy only: seed_everything would import torch (seconds) for a torch-free paper.
    rng = np.random.default_rng(p.seed)
    out: Datasets = {}
    for name, d in raw.items():
        X = check_data(d["X"], 1, name=f"data set {name!r}")
        if name in p.standardise:
            X = (X - X.mean(axis=0)) / X.std(axis=0)
        n = X.shape[0]
        perm = rng.permutation(n)
        n_test = int(math.floor(n * p.test_fraction))
        out[name] = {
            **d,
            "X": X,
            "train": np.sort(perm[: n - n_test]),
            "test": np.sort(perm[n - n_test :]),
        }
    return out


# ---------------------------------------------------------------- train / select


def _splits(d: dict, out_of_sample: bool) -> list[tuple[str, np.ndarray]]:
    splits = [("full", d["X"])]
    if out_of_sample:
        splits.append(("train", d["X"][d["train"]]))
    return splits


def fit_srca_models(prepared: Datasets, model: dict) -> dict[str, SRCAModel]:
    """Train: SRCA for every data set and k, on all points and on the training half."""
    p = validate_params(ModelParams, model, "srca.model")
    # BLAS/OpenMP threads are a parameter: on a shared 2-core machine one thread is fastest.
    with threadpool_limits(p.blas_threads):
        return _fit_srca_all(prepared, p)


def _fit_srca_all(prepared: Datasets, p: ModelParams) -> dict[str, SRCAModel]:
    fits: dict[str, SRCAModel] = {}
    for name, d in prepared.items():
        ks = p.k.get(name)
        if not ks:
            raise ValueError(
                f"parameter srca.model.k has no entry for data set {name!r}; add k: [1]"
            )
        search = p.search_overrides.get(name, p.subset_search)
        for k in ks:
            for split, X in _splits(d, p.out_of_sample):
                start = time.perf_counter()
                m = fit_srca(
                    X,
                    k,
                    subset_search=search,
                    max_subsets=p.max_subsets,
                    rotation=p.rotation,
                    weight=p.weight,
                    lambda_penalty=p.lambda_penalty,
                    tol=p.tol,
                    max_iter=p.max_iter,
                    prune=p.prune,
                )
                m.fit_seconds = time.perf_counter() - start
                fits[fit_key(name, k, split)] = m
                logger.info("SRCA %s fitted in %.2f s", fit_key(name, k, split), m.fit_seconds)
    return fits


def fit_baselines(prepared: Datasets, model: dict) -> dict[str, dict[str, Any]]:
    """Train: the baselines on the same fits as SRCA: PCA (scikit-learn) and spherelets (closed form)."""
    p = validate_params(ModelParams, model, "srca.model")
    with threadpool_limits(p.blas_threads):
        return _fit_baselines_all(prepared, p)


def _fit_baselines_all(prepared: Datasets, p: ModelParams) -> dict[str, dict[str, Any]]:
    fits: dict[str, dict[str, Any]] = {}
    for name, d in prepared.items():
        for k in p.k.get(name, []):
            for split, X in _splits(d, p.out_of_sample):
                entry: dict[str, Any] = {"seconds": {}}
                start = time.perf_counter()
                entry["pca"] = PCA(n_components=k, svd_solver="full").fit(X)
                entry["seconds"]["PCA"] = time.perf_counter() - start
                start = time.perf_counter()
                entry["spherelets"] = fit_spherelet(X, k)
                entry["seconds"]["Spherelets"] = time.perf_counter() - start
                fits[fit_key(name, k, split)] = entry
    return fits


def coranking_subset(n: int, max_n: int, seed: int) -> np.ndarray:
    """Indices of the points used for co-ranking (all when n <= max_n; its cost is O(n^2 log n))."""
    if n <= max_n:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, max_n, replace=False))


def _manifold_estimator(method: str, n: int, dim: int, b: BaselineParams) -> Any:
    """A scikit-learn embedding of `dim` dimensions (never re-implemented here)."""
    from sklearn.manifold import MDS, TSNE, Isomap, LocallyLinearEmbedding

    if method == "isomap":
        return Isomap(n_neighbors=b.n_neighbors, n_components=dim)
    if method == "lle":
        return LocallyLinearEmbedding(
            n_neighbors=b.n_neighbors, n_components=dim, eigen_solver="dense", random_state=b.seed
        )
    if method == "tsne":
        perplexity = min(b.tsne_perplexity, (n - 1) / 3)
        return TSNE(n_components=dim, perplexity=perplexity, init="pca", random_state=b.seed)
    return MDS(n_components=dim, random_state=b.seed, n_init=1)


def fit_manifold_embeddings(
    prepared: Datasets, baselines: dict, evaluation: dict
) -> dict[str, dict[str, np.ndarray]]:
    """Train: nonlinear baselines of the co-ranking comparison (scikit-learn Isomap, LLE, t-SNE, MDS)."""
    b = validate_params(BaselineParams, baselines, "srca.baselines")
    e = validate_params(EvalParams, evaluation, "srca.eval")
    out: dict[str, dict[str, np.ndarray]] = {}
    for name in e.coranking_datasets:
        if name not in prepared:
            continue
        X = prepared[name]["X"]
        X = X[coranking_subset(X.shape[0], e.coranking_max_n, e.seed)]
        out[name] = {}
        for method in b.manifold_methods:
            start = time.perf_counter()
            estimator = _manifold_estimator(method, X.shape[0], e.coranking_k, b)
            with threadpool_limits(b.blas_threads):
                out[name][method] = estimator.fit_transform(X)
            logger.info("%s embedding of %s in %.1f s", method, name, time.perf_counter() - start)
    return out


# ---------------------------------------------------------------- evaluate


def _baseline_projection(entry: dict[str, Any], method: str, X: np.ndarray) -> np.ndarray:
    if method == "PCA":
        pca = entry["pca"]
        return pca.inverse_transform(pca.transform(X))
    return project_spherelet(entry["spherelets"], X)


def evaluate_reconstruction(
    prepared: Datasets, srca_models: dict[str, SRCAModel], baseline_models: dict
) -> pd.DataFrame:
    """Evaluate: reconstruction MSE per data set, k, method, in-sample (Table 4.1) and out-of-sample (H.1)."""
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
                    "mse": reconstruction_mse(X_eval, _baseline_projection(base, method, X_eval)),
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


def evaluate_structure(
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    baseline_models: dict,
    manifold: dict[str, dict[str, np.ndarray]],
    evaluation: dict,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Evaluate: co-ranking AUCs (original vs each method's output, as `Coranking.Rmd`) and R_NX curves."""
    e = validate_params(EvalParams, evaluation, "srca.eval")
    rows, curves = [], []
    for name in e.coranking_datasets:
        key = fit_key(name, e.coranking_k, "full")
        if name not in prepared or key not in srca_models:
            continue
        X = prepared[name]["X"]
        X = X[coranking_subset(X.shape[0], e.coranking_max_n, e.seed)]
        outputs = {
            "SRCA": project(srca_models[key], X),
            "PCA": _baseline_projection(baseline_models[key], "PCA", X),
            "Spherelets": _baseline_projection(baseline_models[key], "Spherelets", X),
        }
        labels = {"isomap": "Isomap", "lle": "LLE", "tsne": "t-SNE", "mds": "MDS"}
        for method, emb in manifold.get(name, {}).items():
            outputs[labels[method]] = emb
        for method, out in outputs.items():
            scores = coranking_scores(X, out)
            rows.append(
                {
                    "dataset": name,
                    "method": method,
                    "k": e.coranking_k,
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


def _pca_angles(X_fit: np.ndarray, X: np.ndarray) -> np.ndarray:
    return angles(PCA(n_components=2, svd_solver="full").fit(X_fit).transform(X))


def evaluate_phase(
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    baseline_models: dict,
    evaluation: dict,
) -> pd.DataFrame:
    """Evaluate: recovery of the true cycle phase from the angle on the fitted circle (k = 1)."""
    e = validate_params(EvalParams, evaluation, "srca.eval")
    rows = []
    for name in e.phase_datasets:
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
                "PCA": _pca_angles(X_fit, X),
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


def _mse(table: pd.DataFrame, name: str, k: int, method: str, evaluation: str) -> float:
    sel = table[
        (table.dataset == name)
        & (table.k == k)
        & (table.method == method)
        & (table.evaluation == evaluation)
    ]
    return float(sel.mse.iloc[0]) if len(sel) else float("nan")


def summarise(
    mse_table: pd.DataFrame,
    coranking_table: pd.DataFrame,
    phase_table: pd.DataFrame,
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    evaluation: dict,
) -> tuple[dict[str, float], pd.DataFrame]:
    """Evaluate: the metrics contract (plus the other checks' numbers) and a method x metric table."""
    e = validate_params(EvalParams, evaluation, "srca.eval")

    def ratio(name: str, k: int, evaluation: str = "in_sample") -> float:
        return _mse(mse_table, name, k, "SRCA", evaluation) / _mse(
            mse_table, name, k, "PCA", evaluation
        )

    def auc(name: str, method: str) -> float:
        sel = coranking_table[
            (coranking_table.dataset == name) & (coranking_table.method == method)
        ]
        return float(sel.auc_weighted.iloc[0]) if len(sel) else float("nan")

    def phase(name: str, method: str = "SRCA", evaluation: str = "in_sample") -> float:
        sel = phase_table[
            (phase_table.dataset == name)
            & (phase_table.method == method)
            & (phase_table.evaluation == evaluation)
        ]
        return float(sel.phase_recovery.iloc[0]) if len(sel) else float("nan")

    flat = mse_table[
        mse_table.dataset.isin(e.flat_datasets) & (mse_table.evaluation == "in_sample")
    ]
    flat_ratios = [
        ratio(name, int(k))
        for name, k in flat[["dataset", "k"]].drop_duplicates().itertuples(False)
    ]
    metrics: dict[str, float] = {
        "mse_ratio_srca_over_pca_circle_k1": ratio("circle", 1),
        "mse_ratio_srca_over_pca_co2_k1": ratio("co2", 1),
        "phase_recovery_circle": phase("circle"),
        "max_ratio_srca_over_pca_flat": max(flat_ratios) if flat_ratios else float("nan"),
        "coranking_auc_srca_sphere": auc("sphere", "SRCA"),
        "coranking_auc_pca_sphere": auc("sphere", "PCA"),
        # Further checks of the spec (1, 3, 5, 6), reported beside the contract.
        "mse_ratio_srca_over_pca_co2_k2": ratio("co2", 2),
        "mse_ratio_srca_over_pca_circle_hd_k1": ratio("circle_hd", 1),
        "mse_ratio_srca_over_pca_cellcycle_k1": ratio("cellcycle", 1),
        "mse_ratio_srca_over_spherelets_cellcycle_k1": _mse(
            mse_table, "cellcycle", 1, "SRCA", "in_sample"
        )
        / _mse(mse_table, "cellcycle", 1, "Spherelets", "in_sample"),
        "oos_mse_ratio_srca_over_pca_circle_k1": ratio("circle", 1, "out_of_sample"),
        "oos_mse_ratio_srca_over_pca_co2_k1": ratio("co2", 1, "out_of_sample"),
        "phase_recovery_co2": phase("co2"),
        "phase_recovery_cellcycle": phase("cellcycle"),
        "coranking_auc_spherelets_sphere": auc("sphere", "Spherelets"),
    }
    exact = fit_key("sphere_exact", 2, "full")
    if exact in srca_models and "center" in prepared["sphere_exact"]:
        m, d = srca_models[exact], prepared["sphere_exact"]
        metrics["exact_sphere_mse"] = _mse(mse_table, "sphere_exact", 2, "SRCA", "in_sample")
        metrics["exact_sphere_radius_error"] = abs(m.radius - float(d["radius"]))
        metrics["exact_sphere_center_error"] = float(np.linalg.norm(m.center - d["center"]))
    # Contract keys always present; the extra checks only for the data sets this run has.
    metrics = {
        key: float(val) for key, val in metrics.items() if key in CONTRACT or np.isfinite(val)
    }
    for key, val in metrics.items():
        logger.info("metric %s = %.6g", key, val)

    in_sample = mse_table[mse_table.evaluation == "in_sample"]
    results = in_sample.pivot_table(index="method", columns=["dataset", "k"], values="mse")
    results.columns = [f"mse_{name}_k{k}" for name, k in results.columns]
    oos = mse_table[mse_table.evaluation == "out_of_sample"]
    if len(oos):
        oos_p = oos.pivot_table(index="method", columns=["dataset", "k"], values="mse")
        oos_p.columns = [f"oos_mse_{name}_k{k}" for name, k in oos_p.columns]
        results = results.join(oos_p, how="outer")
    if len(coranking_table):
        cr = coranking_table.pivot_table(index="method", columns="dataset", values="auc_weighted")
        cr.columns = [f"coranking_auc_{name}" for name in cr.columns]
        results = results.join(cr, how="outer")
    if len(phase_table):
        ph = phase_table[phase_table.evaluation == "in_sample"].pivot_table(
            index="method", columns="dataset", values="phase_recovery"
        )
        ph.columns = [f"phase_recovery_{name}" for name in ph.columns]
        results = results.join(ph, how="outer")
    results = results.reset_index()
    return metrics, results


def srca_embeddings(
    prepared: Datasets, srca_models: dict[str, SRCAModel]
) -> dict[str, dict[str, np.ndarray]]:
    """Evaluate: the low-dimensional SRCA representation of every data set (official `reduced_matrix`)."""
    out = {}
    for key, m in srca_models.items():
        name, _, split = key.split("/")
        if split == "full":
            out[key] = {
                "reduced": reduced_coordinates(m, prepared[name]["X"]),
                "center": m.center,
                "radius": np.array(m.radius),
                "axes": np.array(m.axes),
            }
    return out


# ---------------------------------------------------------------- figures


def plot_embeddings(
    prepared: Datasets,
    srca_models: dict[str, SRCAModel],
    baseline_models: dict,
    evaluation: dict,
) -> Figure:
    """Figure: the embedded circle/sphere of SRCA against PCA's, for the data sets in eval.plot_datasets."""
    e = validate_params(EvalParams, evaluation, "srca.eval")
    panels = []
    for name in e.plot_datasets:
        keys = sorted(key for key in srca_models if key.startswith(f"{name}/") and "/full" in key)
        if not keys:
            continue
        key = keys[0]  # smallest k
        m = srca_models[key]
        X = prepared[name]["X"]
        X = X[coranking_subset(X.shape[0], e.coranking_max_n, e.seed)]
        panels.append(
            {
                "name": f"{name} (R^{X.shape[1]})",
                "X": X,
                "srca": project(m, X),
                "pca": _baseline_projection(baseline_models[key], "PCA", X),
                "dims": 3 if m.k >= 2 and X.shape[1] >= 3 else 2,
                "k": m.k,
            }
        )
    return figures.embedding_figure(panels)


def plot_mse(mse_table: pd.DataFrame) -> Figure:
    """Figure: reconstruction error against k per data set and method."""
    return figures.mse_figure(mse_table)


def plot_coranking(coranking_curves: pd.DataFrame) -> Figure:
    """Figure: co-ranking R_NX(K) curves."""
    return figures.coranking_figure(coranking_curves)
