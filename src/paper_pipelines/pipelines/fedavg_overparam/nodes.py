"""fedavg_overparam nodes: typed blocks in, the method modules called, data out (no I/O, no plotting here)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream, substream_seed

from . import data as ingest
from . import experiments, figures, report
from .metrics import curves_table, sweep_table
from .network import build_network
from .parameters import (
    DataParams,
    EvaluationParams,
    HeterogeneityParams,
    KernelRegimeParams,
    ModelParams,
    RuntimeParams,
    Seed,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_images(image_folder: dict | None, data: DataParams) -> dict[str, Any]:
    """The images of ``data.source``: shipped digits, or the user's folder (catalog image_folder)."""
    if data.source == "digits":
        return ingest.load_digits_images()
    if image_folder is None or image_folder.get("source") != data.source:
        raise ValueError(
            f"fedavg_overparam.data.source = {data.source!r} reads the catalog entry "
            "fedavg_overparam.image_folder, which supplies "
            f"{'nothing' if image_folder is None else image_folder.get('source')!r} here: run with "
            "--env paper and point its path (and layout) at your folder in "
            "conf/paper/catalog/fedavg_overparam.yml; nothing was written"
        )
    return image_folder


# ---------------------------------------------------------------- preprocess
def make_client_splits(images: dict[str, Any], data: DataParams, seed: Seed) -> pd.DataFrame:
    """Both experiments' client splits (IID and non-IID) and test rows, one row per sample and role."""
    y, is_test = images["y"], images["is_test"]
    kernel = ingest.kernel_regime_split(
        y, is_test, data.kernel_classes, data.clients, data.kernel_per_client,
        data.kernel_test_max, substream(seed, "split", "kernel_regime"),
    )  # fmt: skip
    hetero = ingest.heterogeneity_split(
        y, is_test, data.clients, data.heterogeneity_train, data.heterogeneity_test_max,
        data.dirichlet_alpha, data.min_client_size, substream(seed, "split", "heterogeneity"),
    )  # fmt: skip
    sizes = hetero[(hetero.split == "noniid") & (hetero.role == "train")].client.value_counts()
    logger.info("Dirichlet client sizes (Exp. B): %s", sorted(sizes.tolist()))
    return pd.concat([kernel, hetero], ignore_index=True)


# ---------------------------------------------------------------- train (one node per width slot)
def _network(images: dict, width: int, out_dim: int, model: ModelParams, seed: int, device: str):
    net = build_network(
        model.family, tuple(images["x"].shape[1:]), width, out_dim, model.depth,
        model.sigma_w2, model.sigma_b, model.parameterisation, seed,
    )  # fmt: skip
    return net.to(device)


def kernel_regime_node(slot: int) -> Callable[..., dict]:
    """The Exp. A training node of width slot ``slot`` (the slot-th entry of kernel_regime.widths)."""

    def train_kernel_regime(
        images: dict[str, Any],
        client_splits: pd.DataFrame,
        data: DataParams,
        model: ModelParams,
        kernel_regime: KernelRegimeParams,
        seed: Seed,
        runtime: RuntimeParams,
    ) -> dict:
        """FedAvg on each split and centralised GD at one width, with NTK and linearisation measures."""
        if slot >= len(kernel_regime.widths):
            return {"experiment": "kernel_regime", "width": None}
        device = apply_runtime(runtime)
        width = kernel_regime.widths[slot]
        classes = data.kernel_classes
        tensors = experiments.experiment_tensors(
            images, client_splits, "kernel_regime", classes, device
        )
        out_dim = 1 if len(classes) == 2 else len(classes)
        net = _network(
            images, width, out_dim, model, substream_seed(seed, "init", "A", width), device
        )
        rows = substream(seed, "ntk_rows").permutation(len(tensors["y_train"]))
        rows = np.sort(rows[: kernel_regime.ntk_samples])
        gen = torch.Generator().manual_seed(substream_seed(seed, "sgd", "A", width))
        started = time.perf_counter()
        trace = experiments.kernel_regime_run(
            net, tensors, kernel_regime, rows, kernel_regime.splits, gen, f"width {width}"
        )
        methods = [f"fedavg_{s}" for s in kernel_regime.splits] + ["centralised"]
        seconds = time.perf_counter() - started
        logger.info("Exp. A width %d: %d parameters, %.1f s", width, trace["n_params"], seconds)
        return {"experiment": "kernel_regime", "width": width, "tau": kernel_regime.tau,
                "methods": methods, "seconds": seconds, **trace}  # fmt: skip

    return train_kernel_regime


def heterogeneity_node(slot: int) -> Callable[..., dict]:
    """The Exp. B training node of width slot ``slot`` (the slot-th entry of heterogeneity.widths)."""

    def train_heterogeneity(
        images: dict[str, Any],
        client_splits: pd.DataFrame,
        model: ModelParams,
        heterogeneity: HeterogeneityParams,
        seed: Seed,
        runtime: RuntimeParams,
    ) -> dict:
        """IID and non-IID FedAvg and centralised GD at one width on all classes."""
        if slot >= len(heterogeneity.widths):
            return {"experiment": "heterogeneity", "width": None}
        device = apply_runtime(runtime)
        width = heterogeneity.widths[slot]
        tensors = experiments.experiment_tensors(
            images, client_splits, "heterogeneity", None, device
        )
        out_dim = int(images["y"].max()) + 1
        net = _network(
            images, width, out_dim, model, substream_seed(seed, "init", "B", width), device
        )
        gen = torch.Generator().manual_seed(substream_seed(seed, "sgd", "B", width))
        started = time.perf_counter()
        trace = experiments.heterogeneity_run(net, tensors, heterogeneity, gen, f"width {width}")
        seconds = time.perf_counter() - started
        logger.info("Exp. B width %d: %d parameters, %.1f s", width, trace["n_params"], seconds)
        return {"experiment": "heterogeneity", "width": width, "tau": heterogeneity.tau,
                "methods": ["fedavg_iid", "fedavg_noniid", "centralised"], "seconds": seconds,
                **trace}  # fmt: skip

    return train_heterogeneity


# ---------------------------------------------------------------- evaluate
def collect_sweep(*traces: dict) -> pd.DataFrame:
    """One row per experiment, width and method: the final value of every measure."""
    return sweep_table(traces)


def collect_curves(*traces: dict) -> pd.DataFrame:
    """Loss and accuracy per recorded round (and total GD iterations) of every width and method."""
    return curves_table(traces)


def summarise_metrics(sweep: pd.DataFrame) -> dict[str, Any]:
    """The metrics contract (report.METRICS) and the numbers behind every claim."""
    return report.build_metrics(sweep)


def tabulate_results(sweep: pd.DataFrame) -> pd.DataFrame:
    """One row per method and experiment at the widest width."""
    return report.build_results(sweep)


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim of report.CLAIMS with our values and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "fedavg_overparam")


def plot_ntk_change(sweep: pd.DataFrame, evaluation: EvaluationParams) -> Figure:
    return figures.ntk_change_figure(sweep, evaluation.theory_slope)


def plot_linearisation(sweep: pd.DataFrame, evaluation: EvaluationParams) -> Figure:
    return figures.linearisation_figure(sweep, evaluation.theory_slope)


def plot_heterogeneity_gap(sweep: pd.DataFrame) -> Figure:
    return figures.heterogeneity_figure(sweep)


def plot_fed_vs_central(curves: pd.DataFrame, evaluation: EvaluationParams) -> Figure:
    return figures.fed_vs_central_figure(curves, evaluation.curve_width)
