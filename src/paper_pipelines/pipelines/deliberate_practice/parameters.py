"""Parameter blocks of deliberate_practice (conf/*/parameters/deliberate_practice.yml), one model per block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py). Rules
that span blocks (the initial set within the sample budget, the default omega inside the sweep) are
:func:`check_across_blocks`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = [
    "DataParams",
    "EvaluationParams",
    "GeneratorParams",
    "GuidanceParams",
    "LearnerParams",
    "LoopParams",
    "PruneParams",
    "RuntimeParams",
    "SamplerParams",
    "Seed",
    "StaticParams",
    "check_across_blocks",
]


class SplitParams(ParamsModel):
    """Stratified split of the real images: generator training (the pretraining stand-in), val, test."""

    generator: float = Field(0.6, gt=0, lt=1)  # also trains the reference classifier
    val: float = Field(0.1, gt=0, lt=1)
    test: float = Field(0.3, gt=0, lt=1)

    @model_validator(mode="after")
    def _sums_to_one(self) -> SplitParams:
        total = self.generator + self.val + self.test
        if abs(total - 1.0) > 1e-6:
            raise ValueError(
                f"deliberate_practice.data.split fractions must sum to 1, got generator={self.generator}"
                f" + val={self.val} + test={self.test} = {total:.4g}; change one of them"
            )
        return self


class OODParams(ParamsModel):
    """The shifted real test set (ImageNet-R/Sketch stand-in): rotation, stroke change, additive noise."""

    rotation_deg: float = Field(25.0, ge=0, le=180)
    noise_std: float = Field(0.3, ge=0)
    # stroke thickening (grey dilation) on half of the digits, erosion on the other half
    morphology: bool = True


class DataParams(ParamsModel):
    image_size: int = Field(8, ge=8, le=1024)  # digits are 8x8; 16 = bilinear upsampling
    split: SplitParams = SplitParams()
    ood: OODParams = OODParams()


class GeneratorParams(ParamsModel):
    """The class-conditional DDPM trained in the pipeline (or a pretrained diffusers checkpoint)."""

    # mlp: residual-MLP denoiser; unet2d: diffusers UNet2DModel; pretrained: the catalog's
    # deliberate_practice.pretrained_generator (a Stable-Diffusion-class folder, --env paper)
    backend: Literal["mlp", "unet2d", "pretrained"] = "mlp"
    width: int = Field(256, ge=8)
    res_blocks: int = Field(3, ge=1)
    unet_channels: list[int] = Field([32, 64], min_length=1)
    train_steps: int = Field(1500, ge=1)
    lr: float = Field(1e-3, gt=0)
    batch: int = Field(256, ge=1)
    num_train_timesteps: int = Field(200, ge=2)
    beta_schedule: Literal["squaredcos_cap_v2", "linear", "scaled_linear"] = "squaredcos_cap_v2"
    label_dropout: float = Field(
        0.1, ge=0, lt=1
    )  # label -> null label, for classifier-free guidance
    prompt_template: str = "a photo of a {}"  # pretrained backend: class-name prompts
    resolution: int = Field(512, ge=8)  # pretrained backend: generated image size (latents / 8)


class SamplerParams(ParamsModel):
    steps: int = Field(40, ge=1)
    cfg_scale: float = Field(2.0, ge=0)
    eta: float = Field(0.0, ge=0, le=1)
    batch_size: int = Field(500, ge=1)


class GuidanceParams(ParamsModel):
    """Entropy-guided sampling (the predecessor's cond_fn): criterion, omega, frequency, blend."""

    criterion: Literal["entropy", "loss"] = "entropy"
    omega: float = Field(0.1, ge=0)
    omega_sweep: list[float] = Field([0.05, 0.1, 0.2], min_length=1)
    freq: int = Field(1, ge=1)
    # x0: the learner sees x0_hat; official: sqrt(1-abar) x0_hat + (1 - sqrt(1-abar)) x_t (fg_pipe.py)
    blend: Literal["x0", "official"] = "x0"
    # clamp x0_hat to [-1, 1], or min-max normalise each image as the official process_image does
    image: Literal["clamp", "minmax"] = "clamp"

    @model_validator(mode="after")
    def _sweep_non_negative(self) -> GuidanceParams:
        bad = [w for w in self.omega_sweep if w < 0]
        if bad:
            raise ValueError(
                f"deliberate_practice.guidance.omega_sweep must hold omegas >= 0, got {bad}"
            )
        return self


class ViTParams(ParamsModel):
    patch: int = Field(2, ge=1)
    hidden: int = Field(32, ge=4)
    layers: int = Field(2, ge=1)
    heads: int = Field(4, ge=1)


class LearnerParams(ParamsModel):
    arch: Literal["mlp", "small_cnn", "vit"] = "mlp"
    hidden: int = Field(128, ge=1)
    lr: float = Field(1e-3, gt=0)
    batch: int = Field(128, ge=1)
    vit: ViTParams = ViTParams()


class LoopParams(ParamsModel):
    """The DP loop: initial set, samples per plateau, evaluation cadence, patience, budgets."""

    n0: int = Field(200, ge=1)
    delta_n: int = Field(200, ge=1)
    eval_every: int = Field(50, ge=1)
    patience: int = Field(3, ge=1)
    max_iters: int = Field(1500, ge=1)
    max_samples: int = Field(1000, ge=1)


class StaticParams(ParamsModel):
    # iteration budget of each static run; null = loop.max_iters, the budget DP gets
    iters: int | None = Field(None, ge=1)
    sizes: list[int] = Field([200, 500, 1000, 2000, 4000], min_length=1)

    def budget(self, loop: LoopParams) -> int:
        return self.iters or loop.max_iters

    @model_validator(mode="after")
    def _sizes_positive(self) -> StaticParams:
        if min(self.sizes) < 1:
            raise ValueError(f"deliberate_practice.static.sizes must be >= 1, got {self.sizes}")
        return self


class PruneParams(ParamsModel):
    """Generate-then-prune: a big unguided pool, scored by a learner trained on part of it."""

    pool: int = Field(4000, ge=2)
    keep: int = Field(1000, ge=1)
    scorer_train_size: int = Field(1000, ge=1)


class DiagnosticsParams(ParamsModel):
    samples: int = Field(300, ge=10)
    learner_train_size: int = Field(200, ge=10)
    learner_iters: int = Field(300, ge=1)


class EvaluationParams(ParamsModel):
    replicates: int = Field(
        3, ge=1
    )  # seeds of the loop, each a sub-stream of deliberate_practice.seed
    quality_samples: int = Field(1000, ge=10)
    diagnostics: DiagnosticsParams = DiagnosticsParams()


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Rules that span blocks (the project context calls this before any node runs)."""
    loop, guidance, prune = (blocks.get(k) for k in ("loop", "guidance", "prune"))
    if loop is not None and loop.n0 > loop.max_samples:
        raise ValueError(
            f"deliberate_practice.loop.n0 = {loop.n0} is above the sample budget "
            f"deliberate_practice.loop.max_samples = {loop.max_samples}; lower n0 or raise max_samples"
        )
    if guidance is not None and guidance.omega not in guidance.omega_sweep:
        raise ValueError(
            f"deliberate_practice.guidance.omega = {guidance.omega} must be one of "
            f"deliberate_practice.guidance.omega_sweep {guidance.omega_sweep} (the sweep runs it)"
        )
    if prune is not None and (prune.keep > prune.pool or prune.scorer_train_size > prune.pool):
        raise ValueError(
            f"deliberate_practice.prune.keep = {prune.keep} and scorer_train_size = "
            f"{prune.scorer_train_size} must not exceed deliberate_practice.prune.pool = {prune.pool}"
        )
