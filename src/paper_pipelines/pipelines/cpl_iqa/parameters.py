"""Parameter blocks of cpl_iqa (conf/*/parameters/cpl_iqa.yml), one model per top-level block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py). Rules
that span blocks (the graph's k against the number of images, a split with no labelled image) are in
:func:`check_across_blocks`. Choices the paper does not pin down (spec: "[reconstructed]") are
parameters here, each with a comment.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = [
    "AblationParams",
    "BaselineParams",
    "DataParams",
    "EvaluationParams",
    "LabelParams",
    "ModelParams",
    "RuntimeParams",
    "Seed",
    "SplitParams",
    "Stage1Params",
    "Stage2Params",
    "check_across_blocks",
]

Distortion = Literal["blur", "noise", "jpeg", "contrast", "brightness", "saturation"]
Conversion = Literal["two_bin", "gaussian", "onehot"]


class DataParams(ParamsModel):
    """SynAuth-IQA (crops of shipped images, mixed synthetic distortions, simulated raters) or a folder."""

    n_images: int = Field(1000, ge=20)
    source: Literal["synthetic", "folder"] = "synthetic"
    patch: int = Field(64, ge=16, le=1024)  # crop side (synthetic) or resize side (folder)
    rescale_min: float = Field(0.25, gt=0, le=1)
    rescale_max: float = Field(0.6, gt=0, le=1)
    min_distortions: int = Field(1, ge=1, le=6)
    max_distortions: int = Field(3, ge=1, le=6)
    raters: int = Field(15, ge=1)
    rater_sd: float = Field(8.0, ge=0)
    distortions: list[Distortion] = Field(
        default=["blur", "noise", "jpeg", "contrast", "brightness", "saturation"], min_length=1
    )
    fr_metrics: list[Literal["gmsd", "ssim"]] = Field(default=["gmsd", "ssim"], min_length=1)

    @model_validator(mode="after")
    def _ranges_ordered(self) -> DataParams:
        if self.rescale_min > self.rescale_max:
            raise ValueError(
                f"cpl_iqa.data.rescale_min={self.rescale_min} exceeds rescale_max={self.rescale_max}"
            )
        if self.min_distortions > self.max_distortions:
            raise ValueError(
                f"cpl_iqa.data.min_distortions={self.min_distortions} exceeds "
                f"max_distortions={self.max_distortions}"
            )
        if self.max_distortions > len(set(self.distortions)):
            raise ValueError(
                f"cpl_iqa.data.max_distortions={self.max_distortions} exceeds the "
                f"{len(set(self.distortions))} distinct cpl_iqa.data.distortions"
            )
        return self


class SplitParams(ParamsModel):
    """labelled : unlabelled : test ratio (KonIQ-10k protocol 1:3:1), over several split seeds."""

    n_splits: int = Field(3, ge=1)
    ratio: list[float] = Field(default=[1.0, 3.0, 1.0], min_length=3, max_length=3)

    @model_validator(mode="after")
    def _ratio_usable(self) -> SplitParams:
        labelled, unlabelled, test = self.ratio
        if labelled <= 0 or test <= 0 or unlabelled < 0:
            raise ValueError(
                f"cpl_iqa.split.ratio={self.ratio} needs a positive labelled and test share "
                "(a split with no labelled image cannot warm up the model) and a non-negative "
                "unlabelled share"
            )
        return self


class LabelParams(ParamsModel):
    """Scalar MOS -> K-bin vector label (preprocessing)."""

    bins: int = Field(100, ge=2)
    conversion: Conversion = "two_bin"  # paper: entropy minimisation = the local two-bin split
    gaussian_sigma: float = Field(5.0, gt=0)  # the rebuttal's "normal distribution simulation"


class ModelParams(ParamsModel):
    """One network: backbone -> embedding -> softmax over bins; score = expectation over bin centres."""

    embed_dim: int = Field(256, ge=2)
    backbone: Literal["small_cnn", "feature_mlp", "resnet101"] = "small_cnn"
    channels: list[int] = Field(
        default=[16, 32, 64, 128], min_length=1
    )  # small_cnn, stride-2 convs
    hidden: list[int] = Field(default=[128], min_length=0)  # feature_mlp hidden layers


class Stage1Params(ParamsModel):
    """Supervised warm-up on the labelled set (cross-entropy to the vector labels)."""

    epochs: int = Field(30, ge=1)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-4, ge=0)
    batch_size: int = Field(32, ge=1)


class Stage2Params(ParamsModel):
    """T rounds of {label propagation + confidence, training on mixed batches}."""

    rounds: int = Field(4, ge=1)
    epochs_per_round: int = Field(3, ge=1)
    lr: float = Field(1e-3, gt=0)
    weight_decay: float = Field(1e-4, ge=0)
    batch_labeled: int = Field(16, ge=1)
    batch_unlabeled: int = Field(48, ge=1)
    knn_k: int = Field(10, ge=1)
    gamma: float = Field(0.9, gt=0, lt=1)  # paper 0.99 (conf/paper); 0.9 at this graph size
    affinity_power: float = Field(3.0, gt=0)
    cg_iters: int = Field(20, ge=1)
    cg_tol: float = Field(1e-6, gt=0)
    confidence: Literal["entropy", "none"] = "entropy"
    graph_features: Literal["embedding", "nss", "concat"] = "embedding"


class AblationParams(ParamsModel):
    """Variants run on the same splits beside CPL-IQA (each a full Stage 1 + Stage 2 where needed)."""

    unit_weights: bool = True
    paper_gamma: float | None = Field(0.99, gt=0, lt=1)  # null: skip the gamma ablation
    conversions: list[Conversion] = Field(default=["onehot", "gaussian"], min_length=0)


class BaselineParams(ParamsModel):
    """Supervised-only, full supervision, NSS + SVR; the pretrained BRISQUE SVR when installed."""

    svr_c: float = Field(10.0, gt=0)
    svr_gamma: Literal["scale", "auto"] = "scale"
    supervised_all_labels: bool = True
    nss_svr: bool = True
    brisque_pretrained: bool = True


class EvaluationParams(ParamsModel):
    """PLCC either raw or after the customary 4-parameter logistic fit (VQEG)."""

    plcc_logistic: bool = False
    scatter_seed: int = Field(0, ge=0)  # which split seed the predicted-vs-MOS figure shows


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """The graph's k must be below the labelled + unlabelled images; each split part non-empty."""
    data, split, stage2 = blocks.get("data"), blocks.get("split"), blocks.get("stage2")
    if data is None or split is None:
        return
    total = sum(split.ratio)
    n_labeled = int(data.n_images * split.ratio[0] / total)
    n_test = int(data.n_images * split.ratio[2] / total)
    if n_labeled < 2 or n_test < 2:
        raise ValueError(
            f"cpl_iqa.split.ratio={split.ratio} with cpl_iqa.data.n_images={data.n_images} leaves "
            f"{n_labeled} labelled and {n_test} test images; at least 2 of each are needed: raise "
            "n_images or the labelled/test shares"
        )
    if stage2 is not None:
        n_graph = data.n_images - n_test
        if stage2.knn_k >= n_graph:
            raise ValueError(
                f"cpl_iqa.stage2.knn_k={stage2.knn_k} must be below the {n_graph} labelled + "
                "unlabelled images the graph is built on: lower knn_k or raise cpl_iqa.data.n_images"
            )
    evaluation = blocks.get("evaluation")
    if evaluation is not None and evaluation.scatter_seed >= split.n_splits:
        raise ValueError(
            f"cpl_iqa.evaluation.scatter_seed={evaluation.scatter_seed} must be below "
            f"cpl_iqa.split.n_splits={split.n_splits}"
        )
