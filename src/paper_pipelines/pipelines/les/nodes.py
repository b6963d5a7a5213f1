"""les nodes: typed blocks in, the method called, data out (no I/O, no plotting)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream, substream_seed

from . import data, experiments, figures, report
from .grammar import VOCAB
from .parameters import (
    DataParams,
    EvaluationParams,
    LSOParams,
    OODParams,
    RuntimeParams,
    ScoreParams,
    Seed,
    VAEParams,
)
from .vae import ExpressionVAE, train_vae

logger = logging.getLogger(__name__)


def build_vae(vae: VAEParams, state: dict[str, Any] | None = None) -> ExpressionVAE:
    """The official architecture from les.vae, with the given weights (a released w.pth's unused
    encoder embedding and property head are ignored; a missing or misshapen weight is an error)."""
    model = ExpressionVAE(
        vae.latent_dim,
        len(VOCAB),
        19,
        vae.hidden,
        vae.layers,
        vae.dropout,
        vae.eps_std,
        vae.conv_size,
    )
    if state is not None:
        unused = ("property_net.", "encoder.embedding.")
        own = {k: v for k, v in state.items() if not k.startswith(unused)}
        model.load_state_dict(own, strict=True)
    return model.eval()


# ---------------------------------------------------------------- ingest
def generate_expressions(
    expressions_input: pd.DataFrame | None, data_params: DataParams, seed: Seed
) -> pd.DataFrame:
    """The expressions and their objective: from the grammar sampler, or the catalog's table."""
    if data_params.source == "catalog":
        return data.from_catalog(expressions_input)
    rng = substream(seed, "data")
    return data.generate(data_params.n, data_params.max_productions, data_params.max_len, rng)


# ---------------------------------------------------------------- preprocess
def split_expressions(
    table: pd.DataFrame, data_params: DataParams, seed: Seed
) -> dict[str, np.ndarray]:
    """Token ids and objectives, train / test."""
    return data.split(table, data_params.test_frac, substream(seed, "split"))


# ---------------------------------------------------------------- train
def fit_vae(
    splits: dict[str, np.ndarray],
    pretrained_vae: dict[str, Any] | None,
    vae: VAEParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[ExpressionVAE, dict[str, Any]]:
    """Train the GRU VAE from scratch (or load the catalog's state dict) and its training curve."""
    device = apply_runtime(runtime)
    if vae.source == "pretrained":
        if pretrained_vae is None:
            raise ValueError(
                "les.vae.source = pretrained needs the catalog entry les.pretrained_vae (a state dict, "
                "see conf/paper/catalog/les.yml)"
            )
        return build_vae(vae, pretrained_vae), {"source": "pretrained"}
    return trained_vae(lambda: build_vae(vae), splits, vae, device, seed)


def trained_vae(
    build: Callable[[], ExpressionVAE],
    splits: dict[str, np.ndarray],
    vae: VAEParams,
    device: str,
    seed: Seed,
) -> tuple[ExpressionVAE, dict[str, Any]]:
    """The VAE ``build`` makes under the seed's init stream, trained by les's loop on the split's
    tokens (batches from their own stream); on the CPU, with its curve. les_molecules uses it too."""
    torch.manual_seed(substream_seed(seed, "vae-init"))
    model = build()
    generator = torch.Generator().manual_seed(substream_seed(seed, "vae-batches"))
    curve = train_vae(
        model, splits["train_tokens"], splits["test_tokens"], vae.epochs, vae.lr,
        vae.batch_size, vae.beta, generator, device,
    )  # fmt: skip
    return model.cpu().eval(), {"source": "train", **report.curve_dict(curve)}


def score_latents(
    vae_model: dict[str, Any],
    splits: dict[str, np.ndarray],
    vae: VAEParams,
    score: ScoreParams,
    ood: OODParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Table 1: every score on encoded, prior and far latents, the validity of their decodings, and
    the seconds per latent of each score."""
    apply_runtime(runtime)
    return ood_experiment(build_vae(vae, vae_model), splits["train_tokens"], score, ood, seed)


def ood_experiment(
    model: ExpressionVAE,
    train_tokens: np.ndarray,
    score: ScoreParams,
    ood: OODParams,
    seed: Seed,
    evaluate=None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The OOD table and score costs; ``evaluate`` decides validity (default: the grammar parses)."""
    z, groups, reference = experiments.ood_latents(
        model, train_tokens, ood.n_per_group, ood.far_scale, substream(seed, "ood")
    )
    valid = experiments.validity(model.decoder, z, evaluate)
    values, seconds, singular = experiments.ood_scores(
        model, z, reference, list(ood.scores), score.decoder_mode, score.jacobian,
        score.fd_eps, score.dtype, score.batch_size, ood.train_distance_k, ood.uncertainty_models,
    )  # fmt: skip
    if any(singular.values()):
        logger.warning("singular G (score NaN, ranked lowest): %s", singular)
    table = pd.DataFrame({"group": groups, "valid": valid, **values})
    return table, {"seconds_per_latent": seconds, "singular": singular}


def run_lso(
    vae_model: dict[str, Any],
    splits: dict[str, np.ndarray],
    vae: VAEParams,
    score: ScoreParams,
    lso: LSOParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> pd.DataFrame:
    """Every optimisation run: one row per candidate (method, replicate, round, validity, objective)."""
    apply_runtime(runtime)
    model = build_vae(vae, vae_model)
    return experiments.lso_runs(
        model, splits["train_tokens"], splits["train_objective"], lso, score, seed
    )


# ---------------------------------------------------------------- evaluate
def auroc_by_score(ood_scores: pd.DataFrame) -> pd.DataFrame:
    """AUROC of each score for predicting validity, over all latents and per group."""
    return report.auroc_table(ood_scores)


def summarise(
    auroc: pd.DataFrame,
    trajectories: pd.DataFrame,
    score_cost: dict[str, Any],
    training: dict[str, Any],
    evaluation: EvaluationParams,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The metrics contract and the results table (one row per score / penalty)."""
    runs = report.run_table(trajectories, evaluation.top_k)
    return (
        report.build_metrics(auroc, runs, score_cost, training),
        report.build_results(auroc, runs, score_cost),
    )


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim of the paper with our value, the paper's, and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "les")


def plot_auroc(auroc: pd.DataFrame) -> Figure:
    """AUROC for validity per score."""
    return figures.auroc_figure(auroc)


def plot_lso(trajectories: pd.DataFrame) -> Figure:
    """Valid fraction and best valid objective against function evaluations, per penalty."""
    return figures.lso_figure(trajectories)
