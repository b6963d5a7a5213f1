"""Parameter blocks of disc (conf/*/parameters/disc.yml), one model per top-level block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models. The variants of the collaboration stage are typed blocks under ``disc.variants.<task>.<variant>``
(a misspelt task or variant is an unknown key); :func:`check_across_blocks` draws the pools of every
replicate and fails when the probes' label fraction would leave a class without a labelled example.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = [
    "BoxVariants",
    "CifarParams",
    "ClsVariants",
    "DataParams",
    "EvaluationParams",
    "ExpertParams",
    "ProbeParams",
    "ResNetParams",
    "RuntimeParams",
    "Seed",
    "SocialParams",
    "VariantParams",
    "VariantsParams",
    "check_across_blocks",
    "check_paper_scale",
]

# scikit-learn's load_digits ships 1797 8x8 digits.
N_DIGITS = 1797
LEVEL = Literal["layer1", "layer2", "layer3"]


class PoolSizes(ParamsModel):
    """Disjoint digit pools (distinct digits, before rendering); downstream null = every digit left."""

    expert_c: int = Field(450, ge=10)
    expert_d: int = Field(450, ge=10)
    social: int = Field(300, ge=10)
    downstream: int | None = Field(None, ge=20)


class Renders(ParamsModel):
    """How many canvases each digit of a pool is rendered into (fresh position, scale and clutter)."""

    expert: int = Field(3, ge=1)
    social: int = Field(3, ge=1)
    downstream: int = Field(2, ge=1)


class CifarParams(ParamsModel):
    """data.source cifar100: the socialisation split, drawn from the training images outside the labelled
    list (null = all of them)."""

    social: int | None = Field(None, ge=10)


class DataParams(ParamsModel):
    """Digits pasted into canvas x canvas images at a random position and scale, with clutter and noise;
    or (source cifar100, paper scale) CIFAR-100 from the catalog entry disc.cifar100."""

    source: Literal["digits", "cifar100"] = "digits"
    cifar: CifarParams = CifarParams()
    canvas: int = Field(24, ge=8, le=256)
    scales: list[int] = Field(default=[10, 12, 14, 16], min_length=1)
    clutter_strokes: int = Field(3, ge=0)
    stroke_length: int = Field(4, ge=1)
    stroke_intensity: float = Field(0.6, ge=0, le=1)
    noise: float = Field(0.15, ge=0)
    clean_noise: float = Field(0.03, ge=0)  # the classification expert's clean canvases
    expert_c_clutter: bool = False
    pools: PoolSizes = PoolSizes()
    renders: Renders = Renders()

    @model_validator(mode="after")
    def _fits(self) -> DataParams:
        if min(self.scales) < 8:
            raise ValueError(
                f"disc.data.scales must be >= 8 (the digits are 8x8), got {self.scales}"
            )
        if max(self.scales) > self.canvas:
            raise ValueError(
                f"disc.data.canvas = {self.canvas} is smaller than the largest digit scale "
                f"disc.data.scales = {self.scales}: raise canvas or drop the larger scales"
            )
        fixed = self.pools.expert_c + self.pools.expert_d + self.pools.social
        wanted = fixed + (self.pools.downstream or 0)
        if wanted > N_DIGITS or N_DIGITS - fixed < 20:
            raise ValueError(
                f"disc.data.pools ask for {wanted} digits (expert_c {self.pools.expert_c} + expert_d "
                f"{self.pools.expert_d} + social {self.pools.social} + downstream "
                f"{self.pools.downstream or 'the rest'}) but load_digits has {N_DIGITS} and the "
                "downstream pool needs at least 20: lower disc.data.pools"
            )
        return self


class ResNetParams(ParamsModel):
    """transformers.ResNetConfig values of the checkpoint specialists (default: ResNet-50). A
    transformers folder in the catalog brings its own config instead."""

    embedding_size: int = Field(64, ge=1)
    hidden_sizes: list[int] = Field(default=[256, 512, 1024, 2048], min_length=4, max_length=4)
    depths: list[int] = Field(default=[3, 4, 6, 3], min_length=4, max_length=4)
    layer_type: Literal["bottleneck", "basic"] = "bottleneck"
    downsample_in_first_stage: bool = False


class ExpertParams(ParamsModel):
    """The two specialists ("individual learning"): small 3-stage CNNs with ResNet stage names."""

    stem: int = Field(16, ge=1)
    channels: list[int] = Field(default=[16, 32, 64], min_length=3, max_length=3)
    epochs: int = Field(6, ge=1)
    lr: float = Field(2.0e-3, gt=0)
    batch: int = Field(128, ge=1)
    det_cls_weight: float = Field(0.1, ge=0)  # the detector's small CE term
    box_beta: float = Field(0.05, gt=0)  # smooth-L1 beta of the box loss
    # paper scale: frozen ResNets from disc.cls_checkpoint / disc.det_checkpoint instead of training
    source: Literal["train", "checkpoint"] = "train"
    backbone: Literal["small_cnn", "resnet50"] = "small_cnn"
    resnet: ResNetParams = ResNetParams()
    # the released CIFAR-100 pipeline: resize to 224 (bilinear), ImageNet mean / std on 0-255 RGB
    input_size: int = Field(224, ge=8)
    mean: list[float] = Field(default=[123.675, 116.28, 103.53], min_length=3, max_length=3)
    std: list[float] = Field(default=[58.395, 57.12, 57.375], min_length=3, max_length=3)
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"  # the frozen backbones' weights

    @model_validator(mode="after")
    def _source_fits_backbone(self) -> ExpertParams:
        if (self.source == "checkpoint") != (self.backbone == "resnet50"):
            raise ValueError(
                f"disc.expert.source = {self.source} with disc.expert.backbone = {self.backbone}: "
                "checkpoints load into resnet50 specialists, small_cnn specialists are trained"
            )
        if min(self.std) <= 0:
            raise ValueError(f"disc.expert.std must be positive, got {self.std}")
        return self


class SocialParams(ParamsModel):
    """Training of the collaboration modules (transfer blocks, ConfidNets, heads); experts frozen."""

    epochs: int = Field(4, ge=1)
    lr: float = Field(2.0e-3, gt=0)
    batch: int = Field(128, ge=1)


class VariantParams(ParamsModel):
    """One collaboration variant: lambda (constant or |sin| schedule), transfer levels, selective module."""

    lam: float = Field(0.59, ge=0, le=1)  # the constant lambda_aux (released code: 0.59)
    lambda_schedule: Literal["constant", "sin"] = "constant"
    lambda_T: int = Field(
        200, ge=1
    )  # schedule period in iterations (released: 200 for classification)
    lambda_max: float = Field(1.0, ge=0, le=1)
    lambda_min: float = Field(0.0, ge=0, le=1)
    transfer_levels: list[LEVEL] = Field(default=["layer1", "layer2", "layer3"], min_length=1)
    selective: Literal["none", "feature", "late"] = "none"

    @model_validator(mode="after")
    def _levels_unique(self) -> VariantParams:
        if len(set(self.transfer_levels)) != len(self.transfer_levels):
            raise ValueError(f"transfer_levels repeat a level: {self.transfer_levels}")
        if self.lambda_min > self.lambda_max:
            raise ValueError(f"lambda_min {self.lambda_min} > lambda_max {self.lambda_max}")
        return self


class ClsVariants(ParamsModel):
    """Classification as the main task (main = classifier, partner = detector)."""

    self: VariantParams = VariantParams()  # the partner is a copy of the main expert
    upg: VariantParams = VariantParams(lam=1.0)
    disc_h: VariantParams = VariantParams()
    disc: VariantParams = VariantParams(selective="feature")
    disc_late: VariantParams = VariantParams(selective="late")


class BoxVariants(ParamsModel):
    """Detection as the main task: hierarchical collaboration only, as the official detection code."""

    self: VariantParams = VariantParams()
    upg: VariantParams = VariantParams(lam=1.0)
    disc_h: VariantParams = VariantParams()

    @model_validator(mode="after")
    def _no_selective(self) -> BoxVariants:
        for name in ("self", "upg", "disc_h"):
            if getattr(self, name).selective != "none":
                raise ValueError(
                    f"disc.variants.box.{name}.selective must be 'none': the detection task uses "
                    "hierarchical collaboration only (as the official detection code)"
                )
        return self


class VariantsParams(ParamsModel):
    cls: ClsVariants = ClsVariants()
    box: BoxVariants = BoxVariants()


class ProbeParams(ParamsModel):
    """Downstream: frozen features, a labelled fraction, logistic regression and a ridge box regressor."""

    label_frac: float = Field(0.1, gt=0, lt=1)
    cls_C: float = Field(1.0, gt=0)
    box_alpha: float = Field(1.0, ge=0)
    iou_thr: float = Field(0.5, gt=0, le=1)
    max_iter: int = Field(2000, ge=10)


class EvaluationParams(ParamsModel):
    """Replicates r = 0..n-1 run the whole society at seed + r (default seed 0: seeds 0, 1, 2)."""

    replicates: int = Field(3, ge=1, le=20)
    w_bins: int = Field(30, ge=2)
    # main tasks that run; the other task's sub-pipelines return empty (NaN) records
    tasks: list[Literal["cls", "box"]] = Field(default=["cls", "box"], min_length=1)

    @model_validator(mode="after")
    def _tasks_unique(self) -> EvaluationParams:
        if len(set(self.tasks)) != len(self.tasks):
            raise ValueError(f"disc.evaluation.tasks repeat a task: {self.tasks}")
        return self


def check_paper_scale(data: DataParams, expert: ExpertParams, evaluation: EvaluationParams) -> None:
    """The paper-scale combinations this port can run (CIFAR-100 with checkpoint specialists)."""
    if data.source == "cifar100" and "box" in evaluation.tasks:
        raise ValueError(
            "disc.data.source = cifar100 with 'box' in disc.evaluation.tasks: the detection main task "
            "needs VOC and torchvision's Faster R-CNN on the main backbone, which cannot be installed "
            "beside this project's CPU torch; set disc.evaluation.tasks: [cls]"
        )
    if data.source == "cifar100" and expert.source != "checkpoint":
        raise ValueError(
            "disc.data.source = cifar100 needs disc.expert.source = checkpoint (resnet50 specialists "
            "from disc.cls_checkpoint and disc.det_checkpoint); small CNNs are trained on digits only"
        )
    if expert.source == "checkpoint" and data.source != "cifar100":
        raise ValueError(
            "disc.expert.source = checkpoint needs disc.data.source = cifar100 (the ResNet specialists "
            "read RGB images; the digit canvases are grey)"
        )


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Every replicate's labelled downstream subset must hold each of the 10 classes at least once."""
    from .data import digit_labels, labelled_counts, replicate_pools

    data, probe, evaluation = blocks.get("data"), blocks.get("probe"), blocks.get("evaluation")
    seed, expert = blocks.get("seed"), blocks.get("expert")
    if data is not None and evaluation is not None and expert is not None:
        check_paper_scale(data, expert, evaluation)
    if data is not None and data.source == "cifar100":
        return  # the labelled list / stratified draw is checked when CIFAR-100 is read
    if data is None or probe is None or evaluation is None or not isinstance(seed, int):
        return
    labels = digit_labels()
    for r in range(evaluation.replicates):
        pools = replicate_pools(labels, data.pools.model_dump(), seed + r)
        down = labels[pools["downstream"]]
        counts = labelled_counts(down, data.renders.downstream, probe.label_frac)
        empty = [c for c, n in counts.items() if n == 0]
        if empty:
            raise ValueError(
                f"disc.probe.label_frac = {probe.label_frac} leaves class(es) {empty} without a "
                f"labelled downstream canvas (replicate {r}, seed {seed + r}): raise "
                "disc.probe.label_frac or disc.data.renders.downstream / disc.data.pools.downstream"
            )
