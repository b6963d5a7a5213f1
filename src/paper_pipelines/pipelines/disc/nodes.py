"""disc nodes: typed blocks in, the concept modules called, data out (no I/O, no plotting here)."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.progress import progress
from paper_pipelines.common.runtime import apply_runtime

from . import cifar, data, figures, report, society
from .parameters import (
    DataParams,
    EvaluationParams,
    ExpertParams,
    ProbeParams,
    RuntimeParams,
    Seed,
    SocialParams,
    VariantParams,
    VariantsParams,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_digits_table() -> pd.DataFrame:
    """scikit-learn's shipped 8x8 digits (1797 x 64 pixels and the label)."""
    return data.digits_table()


# ---------------------------------------------------------------- preprocess
def render_pools(
    digits: pd.DataFrame,
    data_params: DataParams,
    probe: ProbeParams,
    evaluation: EvaluationParams,
    seed: Seed,
    cifar100: Any = None,
    cifar_labelled_list: Any = None,
) -> list[dict[str, Any]]:
    """Per replicate (seed + r): disjoint digit pools rendered into canvases with labels and boxes; or
    (data.source cifar100) CIFAR-100's socialisation and downstream pools."""
    replicates = range(evaluation.replicates)
    if data_params.source == "cifar100":
        return cifar_pools(cifar100, cifar_labelled_list, data_params, probe, evaluation, seed)
    pools = [
        data.render_society(digits, data_params, probe.label_frac, seed + r)
        for r in progress(replicates, "rendering pools")
    ]
    logger.info(
        "rendered %d replicate(s): %s",
        len(pools),
        {k: len(pools[0][k]["labels"]) for k in data.POOLS},
    )
    return pools


def cifar_pools(
    cifar100: Any,
    labelled_list: Any,
    data_params: DataParams,
    probe: ProbeParams,
    evaluation: EvaluationParams,
    seed: int,
) -> list[dict[str, Any]]:
    """Per replicate: CIFAR-100's socialisation pool and downstream pool (10 % list, then the test set)."""
    if cifar100 is None:
        raise ValueError(
            "disc.data.source = cifar100 needs the catalog entry disc.cifar100 (a CifarFolderDataset "
            "with your cifar-100-python folder, conf/paper/catalog/disc.yml)"
        )
    pools = [
        cifar.cifar_society(
            cifar100,
            labelled_list,
            probe.label_frac,
            data_params.cifar.social,
            evaluation.tasks,
            seed + r,
        )
        for r in progress(range(evaluation.replicates), "CIFAR-100 pools")
    ]
    logger.info(
        "CIFAR-100: %d replicate(s), social %d, labelled %d, test %d",
        len(pools),
        len(pools[0]["social"]["labels"]),
        int(pools[0]["downstream"]["labelled"].sum()),
        int((~pools[0]["downstream"]["labelled"]).sum()),
    )
    return pools


# ---------------------------------------------------------------- train
def train_expert_cls(
    pools: list[dict],
    expert: ExpertParams,
    seed: Seed,
    runtime: RuntimeParams,
    cls_checkpoint: Any = None,
) -> dict:
    """Individual learning: the classification specialist on clean canvases (or, expert.source
    checkpoint, the frozen ResNet from disc.cls_checkpoint)."""
    device = apply_runtime(runtime)
    if expert.source == "checkpoint":
        return society.checkpoint_expert(cls_checkpoint, "cls", pools, expert, seed)
    return society.train_experts(pools, "cls", expert, seed, device)


def train_expert_det(
    pools: list[dict],
    expert: ExpertParams,
    seed: Seed,
    runtime: RuntimeParams,
    det_checkpoint: Any = None,
) -> dict:
    """Individual learning: the detection specialist (box + small CE) on cluttered canvases (or the
    frozen ResNet backbone of the detector in disc.det_checkpoint)."""
    device = apply_runtime(runtime)
    if expert.source == "checkpoint":
        return society.checkpoint_expert(det_checkpoint, "box", pools, expert, seed)
    return society.train_experts(pools, "box", expert, seed, device)


def train_collaboration(
    main_expert: dict,
    aux_expert: dict,
    pools: list[dict],
    variant: VariantParams,
    social: SocialParams,
    expert: ExpertParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> dict:
    """Socialisation: one variant's transfer blocks (and ConfidNets) trained with both experts frozen."""
    device = apply_runtime(runtime)
    return society.train_variant(
        main_expert, aux_expert, pools, variant, social, expert, seed, device
    )


def probe_collaboration(
    social_model: dict,
    main_expert: dict,
    aux_expert: dict,
    pools: list[dict],
    variant: VariantParams,
    probe: ProbeParams,
    expert: ExpertParams,
    runtime: RuntimeParams,
) -> dict:
    """Downstream probe of one variant's frozen social model on the 10% labelled canvases."""
    device = apply_runtime(runtime)
    return society.score_variant(
        social_model, main_expert, aux_expert, pools, variant, probe, expert, device
    )


def probe_experts(
    expert_c: dict, expert_d: dict, pools: list[dict], probe: ProbeParams, expert: ExpertParams
) -> dict:
    """Up-E and concat: probes on the isolated experts' pooled features, same canvases and labels."""
    return society.score_baselines(expert_c, expert_d, pools, probe, expert)


# ---------------------------------------------------------------- evaluate
def tabulate_results(
    variants: VariantsParams, baseline_scores: dict, *variant_scores: dict
) -> pd.DataFrame:
    """One row per variant and task: mean and std over replicates, deltas vs Up-E and SELF, timings."""
    return report.build_results(variants, baseline_scores, variant_scores)


def summarise_metrics(results: pd.DataFrame, evaluation: EvaluationParams) -> dict[str, Any]:
    return report.build_metrics(results, evaluation)


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim with our values, the paper's, and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "disc")


def plot_accuracy(results: pd.DataFrame) -> Figure:
    return figures.accuracy_by_variant(results)


def plot_selective_weights(disc_scores: dict, evaluation: EvaluationParams) -> Figure:
    return figures.selective_weight_histogram(disc_scores["w_main"], evaluation.w_bins)
