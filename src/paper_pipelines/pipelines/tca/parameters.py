"""Parameter blocks of the `tca` pipeline (mirrors conf/base/parameters/tca.yml); validated at node start."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from paper_pipelines.common.params import ParamsModel
from paper_pipelines.pipelines.tca.digits_c import CORRUPTIONS

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


class RuntimeParams(ParamsModel):
    """Device and CPU threads."""

    device: str = "auto"
    torch_threads: int | None = Field(1, ge=1)


class RealDataParams(ParamsModel):
    """Paper-scale path: a user-supplied CIFAR-10-C directory and a ResNet checkpoint."""

    enabled: bool = False
    data_dir: str | None = None
    checkpoint: str | None = None
    arch: Literal["resnet18", "resnet50"] = "resnet50"
    num_classes: int = Field(10, ge=2)
    input_size: int = Field(224, ge=8)
    mean: list[float] = [0.5, 0.5, 0.5]
    std: list[float] = [0.5, 0.5, 0.5]
    max_per_domain: int | None = Field(None, ge=1)

    @model_validator(mode="after")
    def _paths_when_enabled(self) -> RealDataParams:
        if self.enabled and (not self.data_dir or not self.checkpoint):
            raise ValueError(
                "real_data.enabled=true needs real_data.data_dir (CIFAR-10-C folder) and "
                "real_data.checkpoint (ResNet state dict)"
            )
        return self


class DataParams(ParamsModel):
    """Digits-C generation (or, with real_data.enabled, which CIFAR-10-C domains to read)."""

    image_size: int = Field(16, ge=8, le=64)
    test_frac: float = Field(0.45, gt=0.0, lt=1.0)
    corruptions: list[str] = Field(default_factory=lambda: list(CORRUPTIONS), min_length=1)
    severities: list[int] = Field(default_factory=lambda: [3, 5], min_length=1)
    metric_severity: int = 3

    @field_validator("corruptions")
    @classmethod
    def _known_corruptions(cls, value: list[str]) -> list[str]:
        unknown = [c for c in value if c not in CIFAR_C_CORRUPTIONS]
        if unknown:
            raise ValueError(
                f"unknown corruption(s) {unknown}; allowed: {', '.join(CIFAR_C_CORRUPTIONS)} "
                f"(Digits-C generates: {', '.join(CORRUPTIONS)})"
            )
        if len(set(value)) != len(value):
            raise ValueError(f"corruptions must be distinct, got {value}")
        return value

    @field_validator("severities")
    @classmethod
    def _known_severities(cls, value: list[int]) -> list[int]:
        if any(s not in (1, 2, 3, 4, 5) for s in value) or len(set(value)) != len(value):
            raise ValueError(f"severities must be distinct values in 1..5, got {value}")
        return value

    @model_validator(mode="after")
    def _metric_severity_present(self) -> DataParams:
        if self.metric_severity not in self.severities:
            raise ValueError(
                f"metric_severity={self.metric_severity} must be one of severities {self.severities}"
            )
        return self

    def check_digits(self) -> None:
        """Digits-C has twelve corruptions; the other three exist only at paper scale."""
        missing = [c for c in self.corruptions if c not in CORRUPTIONS]
        if missing:
            raise ValueError(
                f"parameter tca.data.corruptions = {self.corruptions!r} contains {missing}, which "
                f"Digits-C does not generate; allowed: {', '.join(CORRUPTIONS)}"
            )


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

    methods: list[Literal["source", "bn", "tent", "t3a"]] = ["source", "bn", "tent", "t3a"]
    batch_size: int = Field(64, ge=1)
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
    w_solver: Literal["eig", "adam"] = "eig"
    extra_solver: Literal["eig", "adam"] | None = "adam"
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


class ForgettingParams(ParamsModel):
    """Clean accuracy after continual Tent vs after LinearTCA."""

    enabled: bool = True
