"""cpl_iqa nodes: typed blocks in, the method modules called, data out (no I/O, no plotting here)."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream

from . import data, figures, quality, report, study
from .features import feature_matrix
from .labels import convert_labels, rescale_mos
from .parameters import (
    AblationParams,
    BaselineParams,
    DataParams,
    EvaluationParams,
    LabelParams,
    ModelParams,
    RuntimeParams,
    Seed,
    SplitParams,
    Stage1Params,
    Stage2Params,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_source_images(real_images: Any, real_labels: Any, data_params: DataParams) -> dict:
    """The 22 shipped reference scenes (synthetic), or a user's IQA folder and its label CSV."""
    if data_params.source == "synthetic":
        return {"kind": "synthetic", "references": data.load_shipped_images()}
    if not real_images or real_labels is None:
        missing = "cpl_iqa.real_images" if not real_images else "cpl_iqa.real_labels (label CSV)"
        raise ValueError(
            f"cpl_iqa.data.source = 'folder' needs {missing}; nothing was run or written. Point the "
            "catalog entries at the images and the label CSV (conf/paper/catalog/cpl_iqa.yml, --env paper)"
        )
    images, table = data.load_folder_set(
        real_images, real_labels, data_params.n_images, data_params.patch
    )
    quality.check_mos(table["mos"].to_numpy(), "cpl_iqa.real_labels")
    return {"kind": "folder", "images": images, "table": table}


# ---------------------------------------------------------------- preprocess
def make_iqa_set(source: dict, data_params: DataParams, seed: Seed) -> tuple[dict, pd.DataFrame]:
    """SynAuth-IQA: crops of the references with 1-3 mixed distortions, and the log of what was applied."""
    if source["kind"] == "folder":
        return {"distorted": source["images"]}, source["table"]
    pristine, distorted, log = data.make_synthetic_set(
        source["references"], data_params.n_images, data_params.patch,
        (data_params.rescale_min, data_params.rescale_max), data_params.distortions,
        (data_params.min_distortions, data_params.max_distortions), substream(seed, "images"),
    )  # fmt: skip
    return {"distorted": distorted, "pristine": pristine}, log


def score_quality(
    iqa_images: dict, distortion_log: pd.DataFrame, data_params: DataParams, seed: Seed
):
    """The MOS table: FR scores, latent quality and the simulated study's MOS (or the folder's MOS)."""
    if "pristine" not in iqa_images:
        return distortion_log[["image_id", "mos"]].assign(mos_sd=np.nan)
    table = pd.DataFrame({"image_id": distortion_log["image_id"]})
    pairs = list(zip(iqa_images["pristine"] / 255.0, iqa_images["distorted"] / 255.0, strict=True))
    scores = {}
    for name in data_params.fr_metrics:
        scores[name] = np.array([quality.FR_METRICS[name][0](ref, dis) for ref, dis in pairs])
        table[name] = scores[name]
    table["latent"] = quality.to_quality_scale(quality.latent_quality(scores))
    mos, sd = quality.simulate_study(
        table["latent"].to_numpy(),
        data_params.raters,
        data_params.rater_sd,
        substream(seed, "raters"),
    )
    quality.check_mos(mos, "cpl_iqa simulated MOS")
    return table.assign(mos=mos, mos_sd=sd)


def split_ssl(mos_table: pd.DataFrame, split: SplitParams, seed: Seed) -> dict:
    """Labelled / unlabelled / test indices per split seed (ratio split.ratio)."""
    streams = [substream(seed, "split", k) for k in range(split.n_splits)]
    splits = data.make_splits(len(mos_table), split.ratio, split.n_splits, streams)
    return {f"split{k}": s for k, s in enumerate(splits)}


def convert_vector_labels(mos_table: pd.DataFrame, labels: LabelParams, ablations: AblationParams):
    """MOS rescaled to [1, K] and its vector label under every conversion the run uses."""
    mos = mos_table["mos"].to_numpy(float)
    low, high = float(mos.min()), float(mos.max())
    scaled = rescale_mos(mos, low, high, labels.bins)
    vectors = {
        c: convert_labels(scaled, c, labels.bins, labels.gaussian_sigma)
        for c in study.warmup_conversions(labels, ablations)
    }
    return {"mos_scaled": scaled, "low": low, "high": high, "vectors": vectors}


def compute_nss_features(iqa_images: dict) -> np.ndarray:
    """Classical NSS features of every blind (distorted) image."""
    return feature_matrix(iqa_images["distorted"])


# ---------------------------------------------------------------- train
def train_warmup(
    iqa_images: dict, nss_features: np.ndarray, vector_labels: dict, splits: dict,
    backbone_weights: Any, model: ModelParams, labels: LabelParams, stage1: Stage1Params,
    ablations: AblationParams, seed: Seed, runtime: RuntimeParams,
) -> tuple[dict, pd.DataFrame]:  # fmt: skip
    """Stage 1 on each split's labelled images (every conversion used); test predictions of the warm-up."""
    device = apply_runtime(runtime)
    return study.run_warmups(
        iqa_images["distorted"], nss_features, vector_labels["vectors"], _splits(splits), model,
        labels, stage1, ablations, seed, device, vector_labels["low"], vector_labels["high"],
        backbone_weights,
    )  # fmt: skip


def train_cpl(
    stage1_models: dict, iqa_images: dict, nss_features: np.ndarray, vector_labels: dict,
    splits: dict, model: ModelParams, labels: LabelParams, stage2: Stage2Params,
    ablations: AblationParams, baselines_params: BaselineParams, seed: Seed, runtime: RuntimeParams,
) -> tuple[dict, pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """Stage 2 (CPL-IQA), its ablations and the supervised controls; per-round pseudo-label log."""
    device = apply_runtime(runtime)
    return study.run_stage2_variants(
        stage1_models, iqa_images["distorted"], nss_features, vector_labels["vectors"],
        vector_labels["mos_scaled"], _splits(splits), model, labels, stage2, ablations,
        baselines_params, seed, device, vector_labels["low"], vector_labels["high"],
    )  # fmt: skip


def train_classical_baselines(
    nss_features: np.ndarray, iqa_images: dict, mos_table: pd.DataFrame, splits: dict,
    baselines_params: BaselineParams,
) -> tuple[dict, pd.DataFrame]:  # fmt: skip
    """NSS + SVR on each split's labelled images; the pretrained BRISQUE SVR's scores when installed."""
    return study.run_classical_baselines(
        nss_features, iqa_images["distorted"], mos_table["mos"].to_numpy(float), _splits(splits),
        baselines_params,
    )  # fmt: skip


# ---------------------------------------------------------------- evaluate
def evaluate_predictions(
    warmup_predictions: pd.DataFrame, cpl_predictions: pd.DataFrame,
    classical_predictions: pd.DataFrame, mos_table: pd.DataFrame, evaluation: EvaluationParams,
) -> pd.DataFrame:  # fmt: skip
    """PLCC / SRCC / KRCC / RMSE of every method on every split's test images."""
    predictions = pd.concat([warmup_predictions, cpl_predictions, classical_predictions])
    return report.score_predictions(predictions, mos_table, evaluation.plcc_logistic)


def summarise_metrics(
    scores: pd.DataFrame, pseudo_label_log: pd.DataFrame, ablations: AblationParams
):
    """The metrics contract (report.METRICS) and the numbers behind the claims."""
    return report.build_metrics(scores, pseudo_label_log, ablations)


def tabulate_results(scores: pd.DataFrame) -> pd.DataFrame:
    """One row per method: the four measures as means (and SRCC sd) over the split seeds."""
    return report.build_results(scores)


def check_claims(metrics: dict) -> pd.DataFrame:
    """Each claim of report.CLAIMS with our values and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "cpl_iqa")


def plot_methods(results: pd.DataFrame) -> Figure:
    return figures.method_figure(results)


def plot_predictions(
    warmup_predictions: pd.DataFrame, cpl_predictions: pd.DataFrame, mos_table: pd.DataFrame,
    evaluation: EvaluationParams,
) -> Figure:  # fmt: skip
    return figures.prediction_figure(
        pd.concat([warmup_predictions, cpl_predictions]), mos_table, evaluation.scatter_seed
    )


def plot_pseudo_labels(pseudo_label_log: pd.DataFrame) -> Figure:
    return figures.pseudo_label_figure(pseudo_label_log)


def _splits(splits: dict) -> list[dict]:
    return [splits[f"split{k}"] for k in range(len(splits))]
