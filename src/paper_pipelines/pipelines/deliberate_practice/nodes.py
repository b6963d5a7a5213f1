"""deliberate_practice nodes: typed blocks in, the method modules called, data out (no I/O, no plotting)."""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream, substream_seed

from . import data as real_data
from . import figures, metrics, practice, report, study
from . import generator as gen
from .parameters import (
    DataParams,
    EvaluationParams,
    GeneratorParams,
    GuidanceParams,
    LearnerParams,
    LoopParams,
    PruneParams,
    RuntimeParams,
    SamplerParams,
    Seed,
    StaticParams,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def split_real_images(real_images: dict, data: DataParams, seed: Seed) -> dict:
    """Stratified generator / val / test split of the real images (val drives the plateau rule only)."""
    x, y = real_images["x"], real_images["y"]
    if data.image_size != x.shape[-1]:
        x = real_data.resize_images(x, data.image_size)
    splits = real_data.stratified_split(x, y, data.split.model_dump(), substream(seed, "split"))
    logger.info("real splits: %s", {k: len(v["y"]) for k, v in splits.items()})
    return {**splits, "class_names": list(real_images["class_names"])}


def make_ood_test(real_splits: dict, data: DataParams, seed: Seed) -> dict:
    """The shifted real test set (rotation, stroke thickening / erosion, noise): the OOD stand-in."""
    o = data.ood
    x = real_data.shift_images(
        real_splits["test"]["x"], substream(seed, "ood"), o.rotation_deg, o.noise_std, o.morphology
    )
    return {"x": x, "y": real_splits["test"]["y"]}


# ---------------------------------------------------------------- preprocess
def fit_reference_classifier(real_splits: dict) -> Any:
    """An RBF SVM on the real generator split: judges whether a sample still shows its class."""
    from sklearn.svm import SVC

    x, y = real_splits["generator"]["x"], real_splits["generator"]["y"]
    return SVC(gamma="scale").fit(x.reshape(len(x), -1), y)


def train_generator(
    real_splits: dict,
    pretrained_generator: Any,
    generator: GeneratorParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> tuple[dict, dict]:
    """Train the class-conditional DDPM on the real generator split (nothing for a pretrained one)."""
    apply_runtime(runtime)
    if generator.backend == "pretrained":
        if pretrained_generator is None:
            raise ValueError(
                "deliberate_practice.generator.backend = 'pretrained' needs the catalog entry "
                "deliberate_practice.pretrained_generator with source: diffusers_folder (--env paper)"
            )
        return {}, {"backend": "pretrained"}
    x, y = real_splits["generator"]["x"], real_splits["generator"]["y"]
    torch.manual_seed(substream_seed(seed, "generator_init"))
    model = _denoiser(generator, x.shape[1:], len(real_splits["class_names"]))
    scheduler = gen.train_scheduler(generator.num_train_timesteps, generator.beta_schedule)
    started = time.perf_counter()
    losses = gen.train_ddpm(
        model, scheduler, x, y, generator.train_steps, generator.batch, generator.lr,
        generator.label_dropout, substream_seed(seed, "generator_train"),
    )  # fmt: skip
    tail = losses[-max(1, len(losses) // 10) :]
    summary = {
        "backend": generator.backend,
        "train_seconds": time.perf_counter() - started,
        "final_loss": float(np.mean(tail)),
        "loss_every_50": losses[::50],
        "alpha_bar_T": float(scheduler.alphas_cumprod[-1]),
    }
    return {k: v.detach().clone() for k, v in model.state_dict().items()}, summary


def _denoiser(generator: GeneratorParams, shape, num_classes: int):
    return gen.make_denoiser(
        generator.backend, tuple(shape), num_classes, generator.width, generator.res_blocks,
        generator.unet_channels,
    )  # fmt: skip


def load_generator(
    generator_state: dict,
    pretrained_generator: Any,
    real_splits: dict,
    generator: GeneratorParams,
    data: DataParams,
    runtime: RuntimeParams,
) -> Any:
    """The sampler's view of the generator (in memory): the trained DDPM or the pretrained model."""
    device = apply_runtime(runtime)
    names = real_splits["class_names"]
    if generator.backend == "pretrained":
        components = {
            k: (v.to(device) if hasattr(v, "to") else v) for k, v in pretrained_generator.items()
        }
        return gen.latent_generator(
            components, names, generator.prompt_template, data.image_size, generator.resolution
        )
    shape = real_splits["test"]["x"].shape[1:]
    model = _denoiser(generator, shape, len(names))
    model.load_state_dict(generator_state)
    config = gen.train_scheduler(generator.num_train_timesteps, generator.beta_schedule).config
    return gen.PixelGenerator(model.to(device), config)


# ---------------------------------------------------------------- train
def _context(generator, real_splits, ood, sampler, guidance, learner, loop, seed, runtime):
    device = apply_runtime(runtime)
    return study.Context(
        generator, real_splits, ood, sampler, guidance, learner, loop, seed, device
    )


def assess_generator(
    generator: Any,
    real_splits: dict,
    reference: Any,
    generator_training: dict,
    sampler: SamplerParams,
    evaluation: EvaluationParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> dict:
    """Generator quality: reference-classifier accuracy and per-class pixel-mean error of unguided samples."""
    device = apply_runtime(runtime)
    labels = practice.class_balanced_labels(evaluation.quality_samples, generator.num_classes)
    started = time.perf_counter()
    g = torch.Generator().manual_seed(substream_seed(seed, "quality"))
    noise = torch.randn((len(labels), *generator.shape), generator=g).to(device)
    from .guidance import sample

    images = sample(generator, labels, noise, sampler.steps, sampler.cfg_scale, sampler.eta).cpu()
    images = study._to_learner_shape(images, real_splits["test"]["x"].shape[1:]).numpy()
    seconds = time.perf_counter() - started
    real = real_splits["generator"]
    predicted = reference.predict(images.reshape(len(images), -1))
    return {
        **generator_training,
        "samples": int(len(labels)),
        "reference_accuracy": metrics.label_agreement(predicted, labels),
        "class_mean_mse": metrics.class_mean_mse(images, labels, real["x"], real["y"]),
        "unguided_seconds_per_sample": seconds / len(labels),
    }


def run_static(
    generator: Any,
    real_splits: dict,
    ood_test: dict,
    sampler: SamplerParams,
    guidance: GuidanceParams,
    learner: LearnerParams,
    loop: LoopParams,
    static: StaticParams,
    prune: PruneParams,
    evaluation: EvaluationParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> tuple[pd.DataFrame, dict]:
    """Static unguided sets (prefixes of one class-balanced pool per replicate), same iteration budget."""
    ctx = _context(
        generator, real_splits, ood_test, sampler, guidance, learner, loop, seed, runtime
    )
    size = max(max(static.sizes), prune.pool)
    pools = {f"rep{r}": study.unguided_pool(ctx, size, r) for r in range(evaluation.replicates)}
    curves = study.static_runs(ctx, pools, static.sizes, evaluation.replicates, static.budget(loop))
    return curves, pools


def run_deliberate_practice(
    generator: Any,
    real_splits: dict,
    ood_test: dict,
    sampler: SamplerParams,
    guidance: GuidanceParams,
    learner: LearnerParams,
    loop: LoopParams,
    evaluation: EvaluationParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> tuple[pd.DataFrame, dict, dict]:
    """The DP loop at every omega of the sweep; the default-omega learner of replicate 0 is kept."""
    ctx = _context(
        generator, real_splits, ood_test, sampler, guidance, learner, loop, seed, runtime
    )
    curves, pools, learners = study.dp_runs(ctx, guidance.omega_sweep, evaluation.replicates)
    model = learners[(guidance.omega, 0)]
    return curves, pools, {k: v.detach().cpu().clone() for k, v in model.state_dict().items()}


def run_static_equal_n(
    generator: Any,
    real_splits: dict,
    ood_test: dict,
    static_pools: dict,
    dp_curves: pd.DataFrame,
    sampler: SamplerParams,
    guidance: GuidanceParams,
    learner: LearnerParams,
    loop: LoopParams,
    static: StaticParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    """The static set of DP's final pool size, where static.sizes lacks it."""
    ctx = _context(
        generator, real_splits, ood_test, sampler, guidance, learner, loop, seed, runtime
    )
    return study.equal_n_static_runs(
        ctx, static_pools, dp_curves, guidance.omega, static.sizes, static.budget(loop)
    )


def run_generate_then_prune(
    generator: Any,
    real_splits: dict,
    ood_test: dict,
    static_pools: dict,
    sampler: SamplerParams,
    guidance: GuidanceParams,
    learner: LearnerParams,
    loop: LoopParams,
    prune: PruneParams,
    evaluation: EvaluationParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    ctx = _context(
        generator, real_splits, ood_test, sampler, guidance, learner, loop, seed, runtime
    )
    return study.prune_runs(ctx, static_pools, prune, evaluation.replicates)


def run_real_reference(
    generator: Any,
    real_splits: dict,
    ood_test: dict,
    sampler: SamplerParams,
    guidance: GuidanceParams,
    learner: LearnerParams,
    loop: LoopParams,
    evaluation: EvaluationParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    ctx = _context(
        generator, real_splits, ood_test, sampler, guidance, learner, loop, seed, runtime
    )
    return study.real_reference_runs(ctx, real_splits["generator"], evaluation.replicates)


def run_guidance_diagnostics(
    generator: Any,
    real_splits: dict,
    ood_test: dict,
    reference: Any,
    sampler: SamplerParams,
    guidance: GuidanceParams,
    learner: LearnerParams,
    loop: LoopParams,
    evaluation: EvaluationParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    """Same noise, unguided vs each omega: learner entropy, reference label agreement, time per sample."""
    ctx = _context(
        generator, real_splits, ood_test, sampler, guidance, learner, loop, seed, runtime
    )
    return study.guidance_diagnostics(
        ctx, reference, guidance.omega_sweep, evaluation.diagnostics, evaluation.replicates
    )


# ---------------------------------------------------------------- evaluate
def collect_curves(
    static_curves: pd.DataFrame,
    static_equal_n_curves: pd.DataFrame,
    dp_curves: pd.DataFrame,
    prune_curves: pd.DataFrame,
    real_curves: pd.DataFrame,
) -> pd.DataFrame:
    """Every accuracy curve in one table: strategy, omega, N, replicate, iteration, val/test/OOD accuracy."""
    return report.collect_curves(
        [static_curves, static_equal_n_curves, dp_curves, prune_curves, real_curves]
    )


def summarise_metrics(
    accuracy_curves: pd.DataFrame,
    guidance_diagnostics: pd.DataFrame,
    generator_report: dict,
    guidance: GuidanceParams,
    loop: LoopParams,
) -> dict:
    """The metrics contract (report.METRICS) and the numbers behind every claim."""
    return report.build_metrics(
        accuracy_curves, guidance_diagnostics, generator_report, guidance, loop
    )


def tabulate_results(
    accuracy_curves: pd.DataFrame, guidance_diagnostics: pd.DataFrame, guidance: GuidanceParams
) -> pd.DataFrame:
    """One row per method (DP per omega, static per N, prune, real) with final accuracies."""
    return report.build_results(accuracy_curves, guidance_diagnostics, guidance)


def check_claims(metrics: dict) -> pd.DataFrame:
    """Each claim of report.CLAIMS with our values, the paper's, and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "deliberate_practice")


def plot_scaling(accuracy_curves: pd.DataFrame, guidance: GuidanceParams) -> Figure:
    return figures.scaling_figure(accuracy_curves, guidance.omega)


def plot_guidance(guidance_diagnostics: pd.DataFrame) -> Figure:
    return figures.guidance_figure(guidance_diagnostics)
