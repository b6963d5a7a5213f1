"""Thin Kedro nodes: validate the parameter block, call the method modules, return data."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from paper_pipelines.common.params import ParameterError, validate_params

from . import study
from .data import kernel_specs, load_sklearn
from .kernels import build_base_kernels, validate_kernels
from .parameters import (
    CoreParams,
    DataParams,
    ExtensionParams,
    KernelParams,
    MKCParams,
    RuntimeParams,
    ScalingParams,
)
from .report import (
    build_metrics,
    build_results,
    clustering_figure,
    timing_figure,
    weight_error_figure,
)

logger = logging.getLogger(__name__)


def _threads(runtime: dict) -> Any:
    """BLAS thread limit for the node (1 is fastest on the shared 2-core machine)."""
    return threadpool_limits(validate_params(RuntimeParams, runtime, "core_kernel.runtime").threads)


BLOCKS = {
    "runtime": RuntimeParams,
    "data": DataParams,
    "kernels": KernelParams,
    "mkc": MKCParams,
    "core": CoreParams,
    "extension": ExtensionParams,
    "scaling": ScalingParams,
}


def check_all_params(all_params: dict) -> None:
    """Validate every ``core_kernel.*`` block and the cross-block rules (sizes vs n)."""
    unknown = sorted(set(all_params) - set(BLOCKS))
    if unknown:
        raise ParameterError(
            f"unknown parameter block(s) core_kernel.{unknown}; allowed: {sorted(BLOCKS)}"
        )
    parsed = {
        name: validate_params(model, all_params.get(name, {}), f"core_kernel.{name}")
        for name, model in BLOCKS.items()
    }
    n, core = parsed["data"].n, parsed["core"]
    if n is not None:
        too_big = [
            s
            for s in [*core.sizes_projection, *core.sizes_sampling, parsed["extension"].s_sampling]
            if s > n
        ]
        if too_big:
            raise ParameterError(
                f"core sizes {too_big} are larger than the number of points core_kernel.data.n={n}; "
                "a core kernel must be smaller than the data (lower core.sizes_* / extension.s_sampling)"
            )


# ---- ingest -----------------------------------------------------------------------------------


def load_features(data: dict, all_params: dict) -> pd.DataFrame:
    """Standardised features of the chosen sklearn set (uniform subsample of n points) plus labels.

    Every parameter block is validated here, before anything is written, so a bad value anywhere
    fails the run at its first node.
    """
    check_all_params(all_params)
    p = validate_params(DataParams, data, "core_kernel.data")
    # numpy-only paper: a seeded Generator (seed_everything would import torch for nothing).
    x, y = load_sklearn(p.dataset, p.n, np.random.default_rng(p.seed))
    table = pd.DataFrame(x, columns=[f"x{i}" for i in range(x.shape[1])])
    table["label"] = y
    logger.info(
        "loaded %s: n=%d, d=%d, %d classes", p.dataset, len(y), x.shape[1], len(np.unique(y))
    )
    return table


# ---- preprocess -------------------------------------------------------------------------------


def build_kernels(features: pd.DataFrame, kernels: dict, data: dict, runtime: dict) -> dict:
    """Base kernels (centred, normalised) as an (m, n, n) stack, checked before any MKC run."""
    p = validate_params(KernelParams, kernels, "core_kernel.kernels")
    d = validate_params(DataParams, data, "core_kernel.data")
    specs = kernel_specs([entry.model_dump() for entry in p.base])
    x = features.drop(columns="label").to_numpy()
    labels = features["label"].to_numpy()
    k = int(len(np.unique(labels)))
    with _threads(runtime):
        stack = build_base_kernels(x, specs, np.random.default_rng(d.seed), p.center, p.normalize)
        stack = validate_kernels(stack, k, p.psd_tol)
    logger.info(
        "built %d kernels of size %d: %s", stack.shape[0], stack.shape[1], [s.name for s in specs]
    )
    return {"kernels": stack, "labels": labels, "k": k, "names": [s.name for s in specs]}


# ---- train / select ---------------------------------------------------------------------------


def run_full_mkc(kernel_stack: dict, mkc: dict, data: dict, runtime: dict) -> tuple[dict, dict]:
    """MKKM, SimpleMKKM and late fusion on the full kernels (the reference weights)."""
    p = validate_params(MKCParams, mkc, "core_kernel.mkc")
    d = validate_params(DataParams, data, "core_kernel.data")
    with _threads(runtime):
        full = study.run_full(kernel_stack["kernels"], kernel_stack["k"], p, d.seed)
    summary = {
        alg: {
            "weights": out["result"].weights.tolist(),
            "seconds": out["seconds"],
            "n_iter": out["result"].n_iter,
            "objective": out["result"].objective,
        }
        for alg, out in full.items()
    }
    summary["kernel_names"] = kernel_stack["names"]
    return full, summary


def run_core_sweep(
    kernel_stack: dict, full_mkc: dict, mkc: dict, core: dict, runtime: dict
) -> pd.DataFrame:
    """Core-kernel weights for every construction, size and seed, with their error vs the full weights."""
    p = validate_params(MKCParams, mkc, "core_kernel.mkc")
    c = validate_params(CoreParams, core, "core_kernel.core")
    with _threads(runtime):
        return study.core_weight_sweep(kernel_stack["kernels"], full_mkc, kernel_stack["k"], p, c)


def run_extension(
    kernel_stack: dict,
    full_mkc: dict,
    mkc: dict,
    core: dict,
    extension: dict,
    data: dict,
    runtime: dict,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cluster all n points with full weights, core weights + extension, and the simple baselines."""
    p = validate_params(MKCParams, mkc, "core_kernel.mkc")
    c = validate_params(CoreParams, core, "core_kernel.core")
    e = validate_params(ExtensionParams, extension, "core_kernel.extension")
    d = validate_params(DataParams, data, "core_kernel.data")
    with _threads(runtime):
        scores, labels = study.extension_comparison(
            kernel_stack["kernels"],
            kernel_stack["labels"],
            full_mkc,
            kernel_stack["k"],
            p,
            c,
            e,
            d.seed,
        )
    clusterings = pd.DataFrame(labels)
    clusterings["label"] = kernel_stack["labels"]
    return scores, clusterings


def run_scaling(mkc: dict, core: dict, scaling: dict, runtime: dict) -> pd.DataFrame:
    """Wall time of full vs core MKC against n on the multi-view generator."""
    p = validate_params(MKCParams, mkc, "core_kernel.mkc")
    c = validate_params(CoreParams, core, "core_kernel.core")
    s = validate_params(ScalingParams, scaling, "core_kernel.scaling")
    with _threads(runtime):
        return study.scaling_study(p, c, s, ["simplemkkm"])


# ---- evaluate ---------------------------------------------------------------------------------


def evaluate(
    full_weights: dict,
    core_weights: pd.DataFrame,
    clustering_scores: pd.DataFrame,
    timing: pd.DataFrame,
    core: dict,
    extension: dict,
) -> tuple[dict, pd.DataFrame, Any, Any, Any]:
    """Metrics contract, results table (method x metric) and the three figures."""
    c = validate_params(CoreParams, core, "core_kernel.core")
    e = validate_params(ExtensionParams, extension, "core_kernel.extension")
    metrics = build_metrics(full_weights, core_weights, clustering_scores, timing, c, e)
    results = build_results(core_weights, clustering_scores, timing)
    return (
        metrics,
        results,
        weight_error_figure(core_weights),
        timing_figure(timing),
        clustering_figure(clustering_scores),
    )
