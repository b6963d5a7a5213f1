"""Parameter blocks of fedda (conf/*/parameters/fedda.yml), one model per block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py). Rules
that span blocks (digit pools against the number of clients) are :func:`check_across_blocks`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = [
    "AdapterParams",
    "BackboneParams",
    "DataParams",
    "EvaluationParams",
    "FLParams",
    "PretrainParams",
    "PromptParams",
    "RuntimeParams",
    "Seed",
    "StudyParams",
    "check_across_blocks",
]

# the rendered domains (data.RENDERERS); a domain folder dataset names its own (PACS: photo,
# art_painting, cartoon, sketch)
RENDERED_DOMAINS = ("photo", "sketch", "texture", "negative")
Method = Literal[
    "zero_shot",
    "local_coop",
    "promptfl",
    "dual_prompt",
    "dual_prompt_vda",
    "fedda_no_tpd",
    "fedda_no_vda",
    "fedda",
]
# scikit-learn's digits: 1797 images (sklearn.datasets.load_digits)
N_DIGITS = 1797


class DataParams(ParamsModel):
    """Rendered digits (a neutral source domain for the mini-CLIP, one client per target domain), or
    a user's domain folders (``domain_folders``: PACS / Office-Home, the catalog entry
    ``fedda.domain_images``), one client per domain folder."""

    source: Literal["rendered_digits", "domain_folders"] = "rendered_digits"
    image_size: int = Field(16, ge=8, le=512)  # stored side; CLIP resizes to its own input size
    n_source_digits: int = Field(700, ge=20)
    renders_per_digit: int = Field(3, ge=1)
    train_frac: float = Field(0.8, gt=0, lt=1)
    # 0 = every class kept in full (the official default, base.sh); > 0: Dirichlet(beta) label skew
    beta: float = Field(0.0, ge=0)
    domains: list[str] = Field(["photo", "sketch", "texture", "negative"], min_length=1)

    @field_validator("domains")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"fedda.data.domains lists a domain twice: {value}")
        return value

    @model_validator(mode="after")
    def _rendered(self) -> DataParams:
        unknown = [d for d in self.domains if d not in RENDERED_DOMAINS]
        if self.source == "rendered_digits" and unknown:
            raise ValueError(
                f"fedda.data.domains: {unknown} cannot be rendered; choose from {list(RENDERED_DOMAINS)} "
                "(or set fedda.data.source: domain_folders for your own domain folders)"
            )
        return self


class BackboneParams(ParamsModel):
    """The frozen dual encoder: the MiniLM text tower + a small CNN image tower trained here
    (``minilm_locked``), or a pretrained CLIP from a local folder (``clip_folder``: the catalog entry
    ``fedda.clip_model``; ViT-B/16 in the paper); text_layers and channels are for the first only."""

    type: Literal["minilm_locked", "clip_folder"] = "minilm_locked"
    text_layers: int = Field(6, ge=1, le=6)  # MiniLM blocks kept (all-MiniLM-L6-v2 has 6)
    channels: list[int] = Field([32, 64, 96], min_length=1)
    # CLIP uses exp(learned) = 100 with its own towers; null = that learned value (clip_folder only)
    logit_scale: float | None = Field(20.0, gt=0)
    dtype: Literal["float32", "float16"] = "float32"


class PretrainParams(ParamsModel):
    """Mini-CLIP image tower: symmetric InfoNCE against frozen MiniLM caption embeddings."""

    steps: int = Field(1500, ge=1)
    batch: int = Field(64, ge=2)
    lr: float = Field(2e-3, gt=0)
    templates: list[str] = Field(
        [
            "a photo of the digit {}",
            "the number {}",
            "a picture of the digit {}",
            "the written number {}",
        ],
        min_length=1,
    )

    @field_validator("templates")
    @classmethod
    def _has_slot(cls, value: list[str]) -> list[str]:
        bad = [t for t in value if t.count("{}") != 1]
        if bad:
            raise ValueError(f"every caption template needs exactly one '{{}}' slot, got {bad}")
        return value


class PromptParams(ParamsModel):
    """Textual Prior Decoupling: L learnable vectors per block, the link phrase between the blocks."""

    n_ctx: int = Field(4, ge=1)  # L (paper: 16)
    init_std: float = Field(0.02, gt=0)
    link_phrase: str = Field("with a style of", min_length=1)
    zero_shot_template: str = "a photo of the digit {}"

    @field_validator("zero_shot_template")
    @classmethod
    def _slot(cls, value: str) -> str:
        if value.count("{}") != 1:
            raise ValueError(f"the zero-shot template needs exactly one '{{}}' slot, got {value!r}")
        return value


class AdapterParams(ParamsModel):
    """Visual Dynamic Adaptation: bottleneck width = feature width / reduction, 3 gate experts."""

    reduction: int = Field(4, ge=1)


class FLParams(ParamsModel):
    """The federated protocol: every client every round, FedAvg of the shared parts by data size."""

    rounds: int = Field(8, ge=1)  # official: 50
    # local steps per round; null = `local_epochs` passes over the client's data (official: 1 epoch)
    local_steps: int | None = Field(3, ge=1)
    local_epochs: int = Field(1, ge=1)
    batch: int = Field(64, ge=1)  # official: 32
    optimizer: Literal["adam", "sgd"] = "adam"  # official: sgd
    lr: float = Field(5e-3, gt=0)  # official: 1e-3
    momentum: float = Field(0.9, ge=0, lt=1)
    weight_decay: float = Field(5e-4, ge=0)


class OfficialOptimizerParams(ParamsModel):
    """The released local optimiser (federated_main.py, base.sh), run beside the default one."""

    optimizer: Literal["adam", "sgd"] = "sgd"
    lr: float = Field(1e-3, gt=0)
    momentum: float = Field(0.9, ge=0, lt=1)
    weight_decay: float = Field(5e-4, ge=0)
    batch: int = Field(32, ge=1)
    local_steps: int | None = Field(None, ge=1)  # null: local_epochs passes over the data
    local_epochs: int = Field(1, ge=1)


class StudyParams(ParamsModel):
    """What the run compares: methods, repeats (sub-streams of the one seed), extra reported runs."""

    methods: list[Method] = Field(min_length=1)
    repeats: int = Field(3, ge=1)
    # FedDDA again with the official optimiser (SGD 1e-3, momentum 0.9, wd 5e-4, batch 32, 1 epoch)
    official_optimizer_repeats: int = Field(1, ge=0)
    official_optimizer: OfficialOptimizerParams = OfficialOptimizerParams()
    # the label-skew setting reported beside the default (null = not run)
    label_skew_beta: float | None = Field(0.5, gt=0)
    label_skew_methods: list[Method] = ["local_coop", "promptfl", "fedda"]
    label_skew_repeats: int = Field(1, ge=0)

    @field_validator("methods")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"fedda.study.methods lists a method twice: {value}")
        return value


class EvaluationParams(ParamsModel):
    """Accuracy = mean over the last rounds of the client-mean personalised test accuracy."""

    last_rounds: int = Field(3, ge=1)


# The methods the metrics contract reads (report.METRICS).
CONTRACT_METHODS = (
    "zero_shot",
    "local_coop",
    "promptfl",
    "dual_prompt_vda",
    "fedda_no_tpd",
    "fedda_no_vda",
    "fedda",
)


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Rules that span blocks (the project context calls this before any node runs)."""
    data, study = blocks.get("data"), blocks.get("study")
    evaluation, fl = blocks.get("evaluation"), blocks.get("fl")
    if isinstance(data, DataParams) and data.source == "rendered_digits":
        per_client = (N_DIGITS - data.n_source_digits) // len(data.domains)
        if per_client < 4:
            raise ValueError(
                f"fedda.data.n_source_digits = {data.n_source_digits} leaves {per_client} digits per "
                f"client for {len(data.domains)} domains; lower it below "
                f"{N_DIGITS - 4 * len(data.domains)}"
            )
    seed = blocks.get("seed")
    backbone = blocks.get("backbone")
    if (
        isinstance(data, DataParams)
        and isinstance(backbone, BackboneParams)
        and data.source == "domain_folders"
        and backbone.type != "clip_folder"
    ):
        raise ValueError(
            "fedda.data.source: domain_folders has no neutral source domain to train the mini-CLIP "
            "on; set fedda.backbone.type: clip_folder (a pretrained CLIP, catalog entry fedda.clip_model)"
        )
    if (
        isinstance(backbone, BackboneParams)
        and backbone.logit_scale is None
        and backbone.type != "clip_folder"
    ):
        raise ValueError(
            "fedda.backbone.logit_scale: null means the CLIP's own learned scale, which only "
            "backbone.type clip_folder has; give a number (the mini-CLIP default is 20.0)"
        )
    if (
        isinstance(data, DataParams)
        and data.source == "rendered_digits"
        and isinstance(study, StudyParams)
        and isinstance(seed, int)
    ):
        # every client's split, computed on the digit labels alone (no rendering): a client left
        # with too few images fails here, before any node runs
        from sklearn.datasets import load_digits

        from .data import client_plans

        client_plans(load_digits().target, data, study, seed)
    if isinstance(study, StudyParams):
        missing = [m for m in CONTRACT_METHODS if m not in study.methods]
        if missing:
            raise ValueError(
                f"fedda.study.methods must include every method of the metrics contract; "
                f"{missing} missing"
            )
    if (
        isinstance(evaluation, EvaluationParams)
        and isinstance(fl, FLParams)
        and evaluation.last_rounds > fl.rounds
    ):
        raise ValueError(
            f"fedda.evaluation.last_rounds = {evaluation.last_rounds} exceeds fedda.fl.rounds = "
            f"{fl.rounds}; lower it"
        )
