"""Parameter blocks of fedavg_overparam (conf/*/parameters/fedavg_overparam.yml), one model per block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py). Rules that
span blocks (sizes of the client splits against the data source) are :func:`check_across_blocks`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

from .data import TRAIN_PER_CLASS_MIN, TRAIN_SIZE

__all__ = [
    "WIDTH_SLOTS",
    "DataParams",
    "EvaluationParams",
    "HeterogeneityParams",
    "KernelRegimeParams",
    "ModelParams",
    "RuntimeParams",
    "Seed",
    "check_across_blocks",
]

# The pipeline has one training node per width slot (pipeline.py); a sweep may list at most this many.
WIDTH_SLOTS = 5
Width = Annotated[int, Field(ge=1)]


class DataParams(ParamsModel):
    """Where the images come from and how they are dealt out to the M clients."""

    # digits: scikit-learn's shipped 8x8 digits; mnist | cifar10: the catalog entry
    # fedavg_overparam.image_folder (conf/paper/catalog/fedavg_overparam.yml, --env paper)
    source: Literal["digits", "mnist", "cifar10"] = "digits"
    clients: int = Field(10, ge=1)
    kernel_per_client: int = Field(20, ge=1)  # Exp. A: training images per client
    kernel_test_max: int | None = Field(None, ge=1)  # Exp. A test rows (None = all of the classes)
    heterogeneity_train: int | None = Field(1200, ge=1)  # Exp. B training images (None = all)
    heterogeneity_test_max: int | None = Field(None, ge=1)
    dirichlet_alpha: float = Field(0.1, gt=0)
    min_client_size: int = Field(
        2, ge=1
    )  # a Dirichlet draw that leaves a client smaller is redrawn
    kernel_classes: list[Annotated[int, Field(ge=0, le=9)]] = Field([0, 1], min_length=2)


class ModelParams(ParamsModel):
    """The width family and its parameterisation (NTK: N(0, 1) weights, sigma_W / sqrt(n) scaling)."""

    family: Literal["mlp", "lenet", "resnet"] = "mlp"
    depth: int = Field(2, ge=1)  # hidden layers of the MLP; 2 * blocks per stage for the ResNet
    parameterisation: Literal["ntk", "standard"] = "ntk"
    sigma_w2: float = Field(1.5, gt=0)
    sigma_b: float = Field(0.1, ge=0)


class _Schedule(ParamsModel):
    rounds: int = Field(100, ge=1)
    tau: int = Field(5, ge=1)  # local epochs per round (one GD step each with full batches)
    lr: float = Field(0.5, gt=0)
    loss: Literal["mse", "ce"] = "mse"
    optimizer: Literal["gd", "sgd"] = "gd"  # sgd: shuffled mini-batches of batch_size
    batch_size: int = Field(64, ge=1)
    weight_decay: float = Field(0.0, ge=0)
    aggregate: Literal["weighted", "uniform"] = "weighted"

    @model_validator(mode="after")
    def _widths_increase(self):
        widths = self.widths  # type: ignore[attr-defined]
        if any(b <= a for a, b in zip(widths[:-1], widths[1:], strict=True)):
            raise ValueError(
                f"widths must be strictly increasing (a log-log slope needs distinct widths), got {widths}"
            )
        return self


class KernelRegimeParams(_Schedule):
    """Exp. A (the mini-MNIST analogue): the kernel, the weights and the linearisation across widths."""

    ntk_every: int = Field(20, ge=1)  # rounds between NTK / linearisation measurements
    ntk_samples: int = Field(200, ge=2)  # training points the kernels are measured on
    splits: list[Literal["noniid", "iid"]] = Field(["noniid"], min_length=1)
    widths: list[Width] = Field([32, 128, 512, 1024], min_length=2, max_length=WIDTH_SLOTS)

    @model_validator(mode="after")
    def _non_iid_runs(self) -> KernelRegimeParams:
        if "noniid" not in self.splits or len(set(self.splits)) != len(self.splits):
            raise ValueError(
                f"splits must list noniid (the metrics contract reads it) and no split twice, got "
                f"{self.splits}"
            )
        return self


class HeterogeneityParams(_Schedule):
    """Exp. B (Fig. 1): IID against Dirichlet non-IID FedAvg across widths, with the centralised twin."""

    eval_every: int = Field(5, ge=1)  # rounds between test evaluations
    widths: list[Width] = Field([32, 128, 512], min_length=2, max_length=WIDTH_SLOTS)


class EvaluationParams(ParamsModel):
    """What the evaluate stage draws: the theory's slope as a guide line, whose loss curves to show."""

    theory_slope: float = Field(-0.5, le=0)
    curve_width: Literal["widest", "narrowest"] = "widest"


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Client splits must fit the data source: no more clients than samples, classes that exist."""
    data = blocks.get("data")
    if data is None:
        return
    errors = []
    per_class = TRAIN_PER_CLASS_MIN[data.source]
    kernel = blocks.get("kernel_regime")
    if kernel is not None:
        holders = -(-data.clients // len(data.kernel_classes))  # most clients sharing one class
        if holders * data.kernel_per_client > per_class:
            errors.append(
                f"fedavg_overparam.data.kernel_per_client = {data.kernel_per_client} x up to {holders} "
                f"clients per class needs more than the {per_class} training images a class of "
                f"{data.source} has; lower kernel_per_client or fedavg_overparam.data.clients"
            )
        if len(set(data.kernel_classes)) != len(data.kernel_classes):
            errors.append(
                f"fedavg_overparam.data.kernel_classes repeats a class: {data.kernel_classes}"
            )
        if kernel.ntk_samples > data.clients * data.kernel_per_client:
            errors.append(
                f"fedavg_overparam.kernel_regime.ntk_samples = {kernel.ntk_samples} exceeds the "
                f"{data.clients * data.kernel_per_client} training images of Exp. A "
                "(clients x kernel_per_client); lower ntk_samples"
            )
    available = TRAIN_SIZE[data.source] - (1 if data.source == "digits" else 0)
    n_train = data.heterogeneity_train or available
    if blocks.get("heterogeneity") is not None:
        if n_train > available:
            errors.append(
                f"fedavg_overparam.data.heterogeneity_train = {n_train} exceeds the {available} "
                f"training images of {data.source} (digits keeps at least one for testing)"
            )
        if data.clients * data.min_client_size > n_train:
            errors.append(
                f"fedavg_overparam.data.clients = {data.clients} x min_client_size = "
                f"{data.min_client_size} is more than the {n_train} training samples of Exp. B; "
                "lower clients or raise fedavg_overparam.data.heterogeneity_train"
            )
    if errors:
        raise ValueError("; ".join(errors))
