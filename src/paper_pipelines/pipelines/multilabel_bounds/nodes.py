"""multilabel_bounds nodes: typed blocks in, the study modules called, data out (no I/O, no plotting here)."""

from __future__ import annotations

import logging
import time
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream, substream_seed

from . import baselines, figures, report, study
from . import data as ingest
from .parameters import (
    AnchorParams,
    DataParams,
    EvaluationParams,
    ModelParams,
    RademacherParams,
    RuntimeParams,
    Seed,
    TrainParams,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def generate_pools(data: DataParams, seed: Seed) -> tuple[dict[str, Any], float]:
    """Training pools and test samples of the synthetic blocks, and the clock at the start of the run."""
    started = time.time()
    pools = study.synthetic_pools(data, seed)
    logger.info("synthetic pools: %s", {k: len(v) for k, v in pools.items()})
    return pools, started


def load_real_data(data: DataParams, seed: Seed) -> pd.DataFrame:
    """Yeast from the river wheel, or the multi-digit fallback (an empty table when disabled)."""
    real = data.real
    if not real.enabled:
        return pd.DataFrame({"label_0": []})
    if real.source == "yeast":
        return ingest.load_yeast()
    return ingest.load_multi_digits(
        real.digits_rows, real.digits_per_image, substream(seed, "digits")
    )


# ---------------------------------------------------------------- preprocess
def make_splits(real_table: pd.DataFrame, data: DataParams, seed: Seed) -> dict[str, Any]:
    """Index arrays: synthetic grids are prefixes of the pools; real-data splits and label subsets."""
    index: dict[str, Any] = {"synthetic": {}}
    for name in study.SYNTHETIC:
        block = getattr(data, name)
        if block.enabled:
            index["synthetic"][name] = {
                "n": block.n,
                "c": block.c,
                "rows": "prefix",
                "labels": "prefix",
            }
    index["real"] = study.real_splits(real_table, data.real, seed) if data.real.enabled else {}
    return index


# ---------------------------------------------------------------- train
def train_grid(
    pools: dict, data: DataParams, model: ModelParams, train: TrainParams, seed: Seed,
    runtime: RuntimeParams,
) -> dict[str, Any]:  # fmt: skip
    """ERM by projected Adam for every synthetic grid cell, loss and class."""
    apply_runtime(runtime)
    return study.fit_synthetic(pools, data, model, train, seed)


def train_real(
    real_table: pd.DataFrame, splits: dict, data: DataParams, model: ModelParams,
    train: TrainParams, seed: Seed, runtime: RuntimeParams,
) -> dict[str, Any]:  # fmt: skip
    """The same trainer on the real set (data.real.models), every split, n and loss."""
    apply_runtime(runtime)
    if not data.real.enabled:
        return {"params": {}, "seconds": {}}
    return study.fit_real(real_table, splits["real"], data.real, model, train, seed)


def run_anchors(
    real_table: pd.DataFrame, splits: dict, data: DataParams, anchors: AnchorParams,
    train: TrainParams, seed: Seed, runtime: RuntimeParams,
) -> pd.DataFrame:  # fmt: skip
    """scikit-learn one-vs-rest models vs our trainer at matched regularisation (split 0, n = anchors.n)."""
    apply_runtime(runtime)
    if not (anchors.enabled and data.real.enabled):
        return pd.DataFrame(columns=["method", "loss", "train_hamming", "test_hamming"])
    split = splits["real"]["splits"][0]
    perm = split["train"] + split["test"]
    train_rows, test_rows = perm[: anchors.n], perm[max(data.real.n) :]
    x_tr, y_tr, x_te, y_te = ingest.real_features(real_table, train_rows, test_rows)
    usable = ingest.usable_labels(y_tr, y_te, data.real.min_label_count, "anchors")
    return baselines.anchor_comparison(
        x_tr, y_tr[:, usable], x_te, y_te[:, usable], anchors, train.steps, train.lr,
        substream_seed(seed, "anchors"),
    )  # fmt: skip


def estimate_rademacher(
    pools: dict, data: DataParams, model: ModelParams, rademacher: RademacherParams,
    train: TrainParams, seed: Seed, runtime: RuntimeParams,
) -> pd.DataFrame:  # fmt: skip
    """Closed-form, ascent and local (spectral) Rademacher estimates."""
    apply_runtime(runtime)
    return study.rademacher_study(pools, data, model, rademacher, train, seed)


# ---------------------------------------------------------------- evaluate
def measure_gaps(
    pools: dict, real_table: pd.DataFrame, splits: dict, synthetic_fits: dict, real_fits: dict,
    data: DataParams, train: TrainParams,
) -> pd.DataFrame:  # fmt: skip
    """Train / test surrogate, Hamming, ranking loss and 1 - Macro-AUC of every fit, and their gaps."""
    frames = [study.measure_synthetic(pools, synthetic_fits, data, train)]
    if data.real.enabled:
        frames.append(study.measure_real(real_table, splits["real"], real_fits, data.real, train))
    return pd.concat(frames, ignore_index=True)


def fit_rates(gaps: pd.DataFrame, rademacher: pd.DataFrame, evaluation: EvaluationParams) -> dict:
    """Slopes of log gap against log n and log c, c-trends with additive slack, r* slopes."""
    return report.build_rates(gaps, rademacher, evaluation)


def summarise_metrics(
    gaps: pd.DataFrame, rademacher: pd.DataFrame, anchors: pd.DataFrame, started_at: float,
    synthetic_fits: dict, real_fits: dict, data: DataParams, evaluation: EvaluationParams,
) -> dict:  # fmt: skip
    """The metrics contract (report.METRICS) and the numbers behind every claim."""
    seconds = {**synthetic_fits["seconds"], **real_fits["seconds"]}
    return report.build_metrics(
        gaps, rademacher, anchors, evaluation, data.real, started_at, time.time(), seconds
    )


def tabulate_results(
    gaps: pd.DataFrame, anchors: pd.DataFrame, evaluation: EvaluationParams
) -> pd.DataFrame:
    return report.build_results(gaps, anchors, evaluation)


def check_claims(metrics: dict) -> pd.DataFrame:
    return evaluate_claims(report.CLAIMS, metrics, "multilabel_bounds")


def plot_gap_vs_n(gaps: pd.DataFrame) -> Figure:
    return figures.gap_vs_n_figure(gaps)


def plot_gap_vs_c(gaps: pd.DataFrame) -> Figure:
    return figures.gap_vs_c_figure(gaps)


def plot_rademacher(rademacher: pd.DataFrame) -> Figure:
    return figures.rademacher_figure(rademacher)
