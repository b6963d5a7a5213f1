"""core_kernel nodes: typed blocks in, the method modules called, data out (no I/O, no plotting here)."""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream

from . import figures, report, study
from .baselines import run_full
from .data import load_sklearn
from .kernels import build_base_kernels, kernel_specs, validate_kernels
from .parameters import (
    CoreParams,
    DataParams,
    ExtensionParams,
    KernelParams,
    MKCParams,
    RuntimeParams,
    ScalingParams,
    Seed,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_features(data: DataParams, seed: Seed) -> pd.DataFrame:
    """Standardised features of the chosen scikit-learn table (uniform subsample of n points) plus labels."""
    x, y = load_sklearn(data.dataset, data.n, substream(seed, "data"))
    table = pd.DataFrame(x, columns=[f"x{i}" for i in range(x.shape[1])])
    table["label"] = y
    logger.info(
        "loaded %s: n=%d, d=%d, %d classes", data.dataset, len(y), x.shape[1], len(np.unique(y))
    )
    return table


# ---------------------------------------------------------------- preprocess
def build_kernels(
    features: pd.DataFrame, kernels: KernelParams, seed: Seed, runtime: RuntimeParams
) -> dict:
    """Base kernels (centred, normalised) as an (m, n, n) stack, checked before any MKC run."""
    apply_runtime(runtime)
    specs = kernel_specs([entry.model_dump() for entry in kernels.base])
    x = features.drop(columns="label").to_numpy()
    labels = features["label"].to_numpy()
    k = int(len(np.unique(labels)))
    stack = build_base_kernels(
        x, specs, substream(seed, "kernels"), kernels.center, kernels.normalize
    )
    stack = validate_kernels(stack, k, kernels.psd_tol)
    names = [s.name for s in specs]
    logger.info("built %d kernels of size %d: %s", stack.shape[0], stack.shape[1], names)
    return {"kernels": stack, "labels": labels, "k": k, "names": names}


# ---------------------------------------------------------------- train
def run_full_mkc(
    kernel_stack: dict, mkc: MKCParams, seed: Seed, runtime: RuntimeParams
) -> tuple[dict, dict]:
    """MKKM, SimpleMKKM and late fusion on the full kernels (the reference weights)."""
    apply_runtime(runtime)
    full = run_full(kernel_stack["kernels"], kernel_stack["k"], mkc, seed)
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
    kernel_stack: dict,
    full_mkc: dict,
    mkc: MKCParams,
    core: CoreParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    """Core-kernel weights for every construction, size and draw, with their error vs the full weights."""
    apply_runtime(runtime)
    stack, k = kernel_stack["kernels"], kernel_stack["k"]
    return study.core_weight_sweep(stack, full_mkc, k, mkc, core, seed)


def run_extension(
    kernel_stack: dict,
    full_mkc: dict,
    mkc: MKCParams,
    core: CoreParams,
    extension: ExtensionParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cluster all n points with full weights, core weights + extension, and the simple baselines."""
    apply_runtime(runtime)
    stack, labels, k = kernel_stack["kernels"], kernel_stack["labels"], kernel_stack["k"]
    scores, predicted = study.extension_comparison(
        stack, labels, full_mkc, k, mkc, core, extension, seed
    )
    clusterings = pd.DataFrame(predicted)
    clusterings["label"] = labels
    return scores, clusterings


def run_scaling(
    mkc: MKCParams, core: CoreParams, scaling: ScalingParams, seed: Seed, runtime: RuntimeParams
) -> pd.DataFrame:
    """Wall time of full vs core MKC against n on the multi-view generator."""
    apply_runtime(runtime)
    return study.scaling_study(mkc, core, scaling, ["simplemkkm"], seed)


# ---------------------------------------------------------------- evaluate
def summarise_metrics(
    full_weights: dict,
    core_weights: pd.DataFrame,
    clustering_scores: pd.DataFrame,
    timing: pd.DataFrame,
    core: CoreParams,
    extension: ExtensionParams,
) -> dict:
    """The metrics contract (report.METRICS) and the numbers behind the spec's checks."""
    return report.build_metrics(
        full_weights, core_weights, clustering_scores, timing, core, extension
    )


def tabulate_results(
    core_weights: pd.DataFrame,
    clustering_scores: pd.DataFrame,
    core: CoreParams,
    extension: ExtensionParams,
) -> pd.DataFrame:
    """One row per method (core constructions, full MKC, baselines), one column per measure."""
    return report.build_results(core_weights, clustering_scores, core, extension)


def check_claims(metrics: dict) -> pd.DataFrame:
    """Each claim of report.CLAIMS with our values and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "core_kernel")


def plot_weight_errors(core_weights: pd.DataFrame) -> Figure:
    return figures.weight_error_figure(core_weights)


def plot_timing(timing: pd.DataFrame) -> Figure:
    return figures.timing_figure(timing)


def plot_clustering(clustering_scores: pd.DataFrame) -> Figure:
    return figures.clustering_figure(clustering_scores)
