"""Parameter blocks of `tca` (conf/*/parameters/tca.yml), one model per top-level block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; rules that span blocks live in :func:`check_across_blocks`. Paths a user supplies at paper scale
(the CIFAR-10-C folder, the ResNet checkpoint) are catalog entries (conf/paper/catalog/tca.yml), not
parameters.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed
from paper_pipelines.pipelines.tca.digits_c import CORRUPTIONS

__all__ = [
    "DataParams",
    "EvaluationParams",
    "LinearTCAParams",
    "RealDataParams",
    "RuntimeParams",
    "Seed",
    "SourceParams",
    "TTAParams",
    "check_across_blocks",
]

DIGITS_CLASSES = 10

# The fifteen CIFAR-10-C corruptions (paper scale); Digits-C implements twelve of them.
CIFAR_C_CORRUPTIONS: tuple[str, ...] = (
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "defocus_blur",
    "glass_blur",
    "motion_blur",
    "zoom_blur",
    "snow",
    "frost",
    "fog",
    "brightness",
    "contrast",
    "elastic_transform",
    "pixelate",
    "jpeg_compression",
)
Corruption = Literal[CIFAR_C_CORRUPTIONS]  # type: ignore[valid-type]
Severity = Literal[1, 2, 3, 4, 5]


class DataParams(ParamsModel):
    """Digits-C generation (or, with real_data.enabled, which CIFAR-10-C domains to read)."""

    image_size: int = Field(16, ge=8, le=64)
    test_frac: float = Field(0.45, gt=0.0, lt=1.0)
    corruptions: list[Corruption] = Field(default_factory=lambda: list(CORRUPTIONS), min_length=1)
    severities: list[Severity] = Field(default_factory=lambda: [3, 5], min_length=1)

    @field_validator("corruptions", "severities")
    @classmethod
    def _distinct(cls, value: list) -> list:
        if len(set(value)) != len(value):
            raise ValueError(f"values must be distinct, got {value}")
        return value


class RealDataParams(ParamsModel):
    """Paper scale: CIFAR-10-C and a ResNet checkpoint, both catalog inputs (tca.cifar_c_folder,
    tca.source_checkpoint in conf/paper/catalog/tca.yml)."""

    enabled: bool = False
    arch: Literal["resnet18", "resnet50"] = "resnet50"
    num_classes: int = Field(10, ge=2)
    input_size: int = Field(224, ge=8)
    mean: list[float] = [0.5, 0.5, 0.5]
    std: list[float] = [0.5, 0.5, 0.5]
    max_per_domain: int | None = Field(None, ge=1)


class SourceParams(ParamsModel):
    """Source model trained in the pipeline (Digits-C)."""

    arch: Literal["small_cnn"] = "small_cnn"
    width: int = Field(16, ge=2)
    epochs: int = Field(15, ge=1)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(5e-4, ge=0)
    batch_size: int = Field(64, ge=2)
    shift_px: int = Field(1, ge=0)


class TTAParams(ParamsModel):
    """The test-time adaptation baselines and their stream."""

    batch_size: int = Field(64, ge=1)
    methods: list[Literal["source", "bn", "tent", "t3a"]] = ["source", "bn", "tent", "t3a"]
    shuffle: bool = True
    tent_lr: float = Field(1e-3, gt=0)
    steps: int = Field(1, ge=1)
    t3a_filter_k: int = Field(100, ge=-1)
    memory_probe: bool = True

    @field_validator("methods")
    @classmethod
    def _source_first(cls, value: list[str]) -> list[str]:
        if "source" not in value:
            raise ValueError("methods must include 'source' (LinearTCA is the source model + TCA)")
        if len(set(value)) != len(value):
            raise ValueError(f"methods must be distinct, got {value}")
        return value


class LinearTCAParams(ParamsModel):
    """TCA step (official defaults: K = 20, 20 Adam iterations at lr 1e-3, chunks of 256)."""

    filter_k: int = Field(20, ge=-1)
    # auto: the exact eig solver, its pseudo-source covariance shrunk towards the target's when the
    # pseudo-source has fewer rows than dimensions (plain eig collapses there; see linear_tca).
    w_solver: Literal["auto", "eig", "adam"] = "auto"
    extra_solver: Literal["auto", "eig", "adam"] | None = "adam"
    w_iters: int = Field(20, ge=0)
    w_lr: float = Field(1e-3, gt=0)
    eig_eps: float = Field(1e-3, gt=0)
    proportions: Literal["uniform", "predicted", "oracle"] = "uniform"
    plug_into: list[Literal["source", "bn", "tent", "t3a"]] = ["source", "bn", "tent", "t3a"]
    chunk: int = Field(256, ge=1)

    @field_validator("filter_k")
    @classmethod
    def _not_zero(cls, value: int) -> int:
        if value == 0:
            raise ValueError("filter_k must be >= 1 or -1 (all samples), got 0")
        return value


class EvaluationParams(ParamsModel):
    """What the metrics contract reports, and the forgetting check."""

    # The metrics contract averages over corruptions at this severity.
    metric_severity: Severity = 3
    # Clean accuracy after continual Tent vs after LinearTCA (needs the clean digits split).
    forgetting: bool = True


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Rules that span blocks; the project context calls this before any node runs."""
    data, real, tta, evaluation = (
        blocks.get(k) for k in ("data", "real_data", "tta", "evaluation")
    )
    errors = []
    enabled = real is not None and real.enabled
    if data is not None and not enabled:
        missing = [c for c in data.corruptions if c not in CORRUPTIONS]
        if missing:
            errors.append(
                f"parameter tca.data.corruptions = {list(data.corruptions)!r} contains {missing}, "
                f"which Digits-C does not generate (tca.real_data.enabled is false); allowed: "
                f"{', '.join(CORRUPTIONS)}"
            )
    if tta is not None:
        classes = real.num_classes if enabled else DIGITS_CLASSES
        if tta.batch_size < classes:
            errors.append(
                f"parameter tca.tta.batch_size = {tta.batch_size} is smaller than the number of "
                f"classes ({classes}): BN/Tent batch statistics and T3A supports would come from "
                f"fewer samples than classes; use a batch size >= {classes}"
            )
    if (
        data is not None
        and evaluation is not None
        and evaluation.metric_severity not in data.severities
    ):
        errors.append(
            f"parameter tca.evaluation.metric_severity = {evaluation.metric_severity} must be "
            f"one of tca.data.severities = {list(data.severities)}"
        )
    if errors:
        raise ValueError("; ".join(errors))
