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

from . import clip_towers, data, figures, mini_clip, report, study, towers
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
def load_images(data_params: DataParams, domain_images: Any) -> tuple[dict[str, Any], dict]:
    """The images and what the run knows about them (source, class names, client domains):
    scikit-learn's digits and scikit-image's photographs (shipped in the wheels), or a user's
    domain folders (the catalog entry ``fedda.domain_images``, empty unless set)."""
    if data_params.source == "domain_folders":
        if not domain_images:
            raise ValueError(
                "fedda.data.source is domain_folders but the catalog entry fedda.domain_images is "
                "empty: point it at your <domain>/<class>/<image> folder (conf/paper/catalog/fedda.yml)"
            )
        raw = data.load_domain_folders(domain_images, data_params.domains, data_params.image_size)
        raw["source"] = "domain_folders"
    else:
        raw = data.load_digits_and_backgrounds()
        raw["class_names"], raw["source"] = data.CLASS_NAMES, "rendered_digits"
    info = {
        "source": raw["source"],
        "class_names": list(raw["class_names"]),
        "domains": list(data_params.domains),
    }
    return raw, info


def load_towers(
    backbone: BackboneParams, runtime: RuntimeParams, clip_model: Any
) -> tuple[towers.TextTower, dict[str, torch.nn.Module]]:
    """The frozen text tower: all-MiniLM-L6-v2 from its wheel, truncated to backbone.text_layers, or
    the text tower of the CLIP in ``fedda.clip_model`` (backbone.type clip_folder). The CLIP's vision
    tower comes out of the same load as ``{"vision": tower}`` (a CLIP folder is read once); ``{}`` for
    the mini-CLIP, whose image tower the pipeline trains."""
    device = apply_runtime(runtime)
    if backbone.type == "clip_folder":
        text, image = clip_towers.clip_towers(clip_model)
        text, pretrained = text.to(device), {"vision": image.to(device)}
    else:
        text, pretrained = towers.load_minilm_text(backbone.text_layers).to(device), {}
    return (text.to(getattr(torch, backbone.dtype)) if device != "cpu" else text), pretrained


# ---------------------------------------------------------------- preprocess
def render_source_domain(raw: dict[str, Any], data_params: DataParams, seed: Seed) -> dict:
    """The mini-CLIP's neutral source domain (80/20 by digit), from the source pool of digits; empty
    for domain folders (a pretrained CLIP needs none)."""
    if raw["source"] == "domain_folders":
        empty = np.zeros((0, 3, data_params.image_size, data_params.image_size), np.uint8)
        none = np.zeros(0, np.int64)
        return {
            "train_images": empty,
            "train_labels": none,
            "test_images": empty,
            "test_labels": none,
        }
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
    splits and renders each) and for the label-skew setting; for domain folders, one client per
    folder with a fresh train/test split per setting."""
    if raw["source"] == "domain_folders":
        chosen = data.settings(
            data_params.beta, study_params.repeats, study_params.label_skew_beta,
            study_params.label_skew_repeats,
        )  # fmt: skip
        return {
            key: data.split_domain_clients(
                raw["domains"], data_params.train_frac, beta, substream(seed, "split", key)
            )
            for key, beta in chosen.items()
        }
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


def summarise_partitions(client_data: dict[str, Any], dataset_info: dict) -> pd.DataFrame:
    """Images per class, split and client of every setting."""
    return data.partition_stats(client_data, dataset_info["class_names"])


def embed_captions(
    text_tower: towers.TextTower, dataset_info: dict, pretrain: PretrainParams
) -> torch.Tensor:
    """Frozen caption features (templates, classes, dim) the image tower is trained against."""
    names = dataset_info["class_names"]
    return mini_clip.caption_embeddings(text_tower, names, pretrain.templates).cpu()


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
    its held-out source accuracy with the caption prompts as the tower's sanity report. A pretrained
    CLIP (backbone.type clip_folder) is used as it is: nothing to train, no report."""
    if backbone.type == "clip_folder":
        return {}, {"source_zero_shot_accuracy": float("nan"), "steps": 0}
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
    tower_state: dict[str, torch.Tensor],
    client_data: dict[str, Any],
    backbone: BackboneParams,
    pretrained_image_tower: dict[str, torch.nn.Module],
    runtime: RuntimeParams,
) -> dict[str, Any]:
    """Frozen image features of every client image (computed once: the image tower never trains),
    from the trained mini-CLIP tower or the CLIP's vision tower (already on the run's device)."""
    apply_runtime(runtime)
    if backbone.type == "clip_folder":
        tower = pretrained_image_tower["vision"]
    else:
        tower = towers.ImageTower(backbone.channels, tower_state["proj.weight"].shape[0])
        tower.load_state_dict(tower_state)

    def encode(images: np.ndarray) -> torch.Tensor:
        return towers.encode_images(tower, mini_clip.as_tensor(images)).float().cpu()

    out: dict[str, Any] = {}
    for key, clients in client_data.items():
        out[key] = {
            name: {
                "train_x": encode(c["train_images"]),
                "train_y": np.asarray(c["train_labels"]),
                "test_x": encode(c["test_images"]),
                "test_y": np.asarray(c["test_labels"]),
            }
            for name, c in clients.items()
        }
    return out


def _local(fl: FLParams | OfficialOptimizerParams) -> LocalTraining:
    return LocalTraining(
        fl.optimizer, fl.lr, fl.momentum, fl.weight_decay, fl.batch, fl.local_steps, fl.local_epochs
    )


def logit_scale(backbone: BackboneParams, tower: towers.TextTower) -> float:
    """backbone.logit_scale, or (null, clip_folder) the CLIP's own learned scale exp(logit_scale)."""
    return backbone.logit_scale if backbone.logit_scale is not None else tower.logit_scale


def _grid(jobs, features, tower, info, prompt, adapter, local, fl, backbone, seed, label):
    return study.run_grid(
        jobs, features, tower, info["class_names"], prompt, adapter.reduction, local, fl.rounds,
        logit_scale(backbone, tower), seed, label,
    )  # fmt: skip


def train_methods(
    features: dict[str, Any],
    text_tower: towers.TextTower,
    dataset_info: dict,
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
        jobs, features, text_tower, dataset_info, prompt, adapter, _local(fl), fl, backbone, seed,
        "methods",
    )  # fmt: skip
    return runs, {k: v for k, v in states.items() if k.endswith("@main_0")}


def train_official_optimizer(
    features: dict[str, Any],
    text_tower: towers.TextTower,
    dataset_info: dict,
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
        jobs, features, text_tower, dataset_info, prompt, adapter, official, fl, backbone, seed,
        "official SGD",
    )  # fmt: skip
    return runs


def train_label_skew(
    features: dict[str, Any],
    text_tower: towers.TextTower,
    dataset_info: dict,
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
        jobs, features, text_tower, dataset_info, prompt, adapter, _local(fl), fl, backbone, seed,
        "label skew",
    )  # fmt: skip
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
