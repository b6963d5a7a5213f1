"""fedda nodes: typed blocks in, the method called, data out (no I/O, no plotting)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream, substream_seed

from . import data, figures, mini_clip, report, study, towers
from .federated import LocalTraining
from .parameters import (
    AdapterParams,
    BackboneParams,
    DataParams,
    EvaluationParams,
    FLParams,
    OfficialOptimizerParams,
    PretrainParams,
    PromptParams,
    RuntimeParams,
    Seed,
    StudyParams,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_images() -> dict[str, Any]:
    """scikit-learn's digits and scikit-image's photographs and textures (shipped in the wheels)."""
    return data.load_digits_and_backgrounds()


def load_text_tower(backbone: BackboneParams, runtime: RuntimeParams) -> towers.TextTower:
    """The frozen text tower: all-MiniLM-L6-v2 from its wheel, truncated to backbone.text_layers."""
    device = apply_runtime(runtime)
    tower = towers.load_minilm_text(backbone.text_layers).to(device)
    return tower.to(getattr(torch, backbone.dtype)) if device != "cpu" else tower


# ---------------------------------------------------------------- preprocess
def render_source_domain(raw: dict[str, Any], data_params: DataParams, seed: Seed) -> dict:
    """The mini-CLIP's neutral source domain (80/20 by digit), from the source pool of digits."""
    source, _ = data.source_split(
        len(raw["labels"]), data_params.n_source_digits, substream(seed, "pools")
    )
    rng = substream(seed, "source")
    train, test = data.train_test_split(source, data_params.train_frac, rng)
    render = lambda g, s, r, _: data.render_source(g, s, r)  # noqa: E731
    x_tr, y_tr = data.render_many(train, raw, render, data_params.image_size, 6, rng)
    x_te, y_te = data.render_many(test, raw, render, data_params.image_size, 1, rng)
    return {"train_images": x_tr, "train_labels": y_tr, "test_images": x_te, "test_labels": y_te}


def render_client_domains(
    raw: dict[str, Any], data_params: DataParams, study_params: StudyParams, seed: Seed
) -> dict[str, Any]:
    """One client per domain from disjoint digit pools, for every repeat (a fresh draw of pools,
    splits and renders each) and for the label-skew setting."""
    plans = data.client_plans(raw["labels"], data_params, study_params, seed)
    return {
        key: data.render_clients(
            raw,
            plan,
            data_params.image_size,
            data_params.renders_per_digit,
            substream(seed, "render", key),
        )  # fmt: skip
        for key, plan in plans.items()
    }


def summarise_partitions(client_data: dict[str, Any]) -> pd.DataFrame:
    """Images per class, split and client of every rendered setting."""
    return data.partition_stats(client_data)


def embed_captions(text_tower: towers.TextTower, pretrain: PretrainParams) -> torch.Tensor:
    """Frozen caption features (templates, classes, dim) the image tower is trained against."""
    return mini_clip.caption_embeddings(text_tower, data.CLASS_NAMES, pretrain.templates).cpu()


# ---------------------------------------------------------------- train
def pretrain_mini_clip(
    source_set: dict,
    captions: torch.Tensor,
    backbone: BackboneParams,
    pretrain: PretrainParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[dict[str, torch.Tensor], dict[str, Any]]:
    """Symmetric InfoNCE of a small CNN against the frozen caption features (source domain only);
    its held-out source accuracy with the caption prompts as the tower's sanity report."""
    apply_runtime(runtime)
    tower = mini_clip.pretrain_image_tower(
        mini_clip.as_tensor(source_set["train_images"]),
        torch.as_tensor(source_set["train_labels"]),
        torch.as_tensor(captions).float(),
        backbone.channels, pretrain.steps, pretrain.batch, pretrain.lr, backbone.logit_scale,
        substream_seed(seed, "pretrain"),
    )  # fmt: skip
    feats = towers.encode_images(tower, mini_clip.as_tensor(source_set["test_images"]))
    acc = mini_clip.zero_shot_accuracy(
        feats, torch.as_tensor(source_set["test_labels"]), torch.as_tensor(captions).float().mean(0)
    )
    logger.info("fedda: mini-CLIP source-domain zero-shot accuracy %.3f", acc)
    return tower.state_dict(), {"source_zero_shot_accuracy": acc, "steps": pretrain.steps}


def precompute_client_features(
    tower_state: dict[str, torch.Tensor], client_data: dict[str, Any], backbone: BackboneParams
) -> dict[str, Any]:
    """Frozen image features of every client image (computed once: the image tower never trains)."""
    tower = towers.ImageTower(backbone.channels, tower_state["proj.weight"].shape[0])
    tower.load_state_dict(tower_state)
    out: dict[str, Any] = {}
    for key, clients in client_data.items():
        out[key] = {
            name: {
                "train_x": towers.encode_images(tower, mini_clip.as_tensor(c["train_images"])),
                "train_y": np.asarray(c["train_labels"]),
                "test_x": towers.encode_images(tower, mini_clip.as_tensor(c["test_images"])),
                "test_y": np.asarray(c["test_labels"]),
            }
            for name, c in clients.items()
        }
    return out


def _local(fl: FLParams | OfficialOptimizerParams) -> LocalTraining:
    return LocalTraining(
        fl.optimizer, fl.lr, fl.momentum, fl.weight_decay, fl.batch, fl.local_steps, fl.local_epochs
    )


def _grid(jobs, features, tower, prompt, adapter, local, fl, backbone, seed, label):
    return study.run_grid(
        jobs, features, tower, data.CLASS_NAMES, prompt, adapter.reduction, local, fl.rounds,
        backbone.logit_scale, seed, label,
    )  # fmt: skip


def train_methods(
    features: dict[str, Any],
    text_tower: towers.TextTower,
    prompt: PromptParams,
    adapter: AdapterParams,
    fl: FLParams,
    study_params: StudyParams,
    backbone: BackboneParams,
    seed: Seed,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """FedDDA, its ablations and the baselines on every repeat: per-round per-client accuracy, and the
    final personalised states of repeat 0."""
    jobs = [
        (m, "main", f"main_{r}", r)
        for r in range(study_params.repeats)
        for m in study_params.methods
    ]
    runs, states = _grid(
        jobs, features, text_tower, prompt, adapter, _local(fl), fl, backbone, seed, "methods"
    )
    return runs, {k: v for k, v in states.items() if k.endswith("@main_0")}


def train_official_optimizer(
    features: dict[str, Any],
    text_tower: towers.TextTower,
    prompt: PromptParams,
    adapter: AdapterParams,
    fl: FLParams,
    study_params: StudyParams,
    backbone: BackboneParams,
    seed: Seed,
) -> pd.DataFrame:
    """FedDDA with the released optimiser: SGD lr 1e-3, momentum 0.9, wd 5e-4, batch 32, one epoch."""
    official = _local(study_params.official_optimizer)
    jobs = [
        ("fedda", "official_sgd", f"main_{r}", r)
        for r in range(study_params.official_optimizer_repeats)
    ]
    runs, _ = _grid(
        jobs, features, text_tower, prompt, adapter, official, fl, backbone, seed, "official SGD"
    )
    return runs


def train_label_skew(
    features: dict[str, Any],
    text_tower: towers.TextTower,
    prompt: PromptParams,
    adapter: AdapterParams,
    fl: FLParams,
    study_params: StudyParams,
    backbone: BackboneParams,
    seed: Seed,
) -> pd.DataFrame:
    """Selected methods again with Dirichlet(study.label_skew_beta) label skew inside each client."""
    jobs = [
        (m, "label_skew", f"label_skew_{r}", r)
        for r in range(study_params.label_skew_repeats if study_params.label_skew_beta else 0)
        for m in study_params.label_skew_methods
    ]
    runs, _ = _grid(
        jobs, features, text_tower, prompt, adapter, _local(fl), fl, backbone, seed, "label skew"
    )
    return runs


# ---------------------------------------------------------------- evaluate
def summarise(
    runs: pd.DataFrame,
    official_runs: pd.DataFrame,
    label_skew_runs: pd.DataFrame,
    tower_report: dict[str, Any],
    evaluation: EvaluationParams,
    study_params: StudyParams,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The headline metrics (the contract) and the results table (one row per method and setting)."""
    every = report.all_runs(runs, official_runs, label_skew_runs)
    metrics = report.build_metrics(every, tower_report, evaluation.last_rounds, study_params)
    return metrics, report.build_results(every, evaluation.last_rounds)


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim of the paper with our value, the paper's, and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "fedda")


def plot_accuracy_curves(runs: pd.DataFrame) -> Figure:
    """Client-mean personalised accuracy against the round, one line per method."""
    return figures.accuracy_curves(runs)


def plot_client_accuracy(runs: pd.DataFrame, evaluation: EvaluationParams) -> Figure:
    """Per-client accuracy (last rounds) of every method."""
    return figures.client_accuracy(runs, evaluation.last_rounds)


def plot_gate_weights(runs: pd.DataFrame) -> Figure:
    """FedDDA's mean gate weights {raw, specific, shared} per domain in the last round."""
    return figures.gate_weights(runs)
