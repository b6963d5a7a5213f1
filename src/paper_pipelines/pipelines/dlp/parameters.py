"""Parameter blocks of dlp (conf/*/parameters/dlp.yml), one model per top-level block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py).
The one rule that spans two blocks is :func:`check_across_blocks`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = [
    "AllocationParams",
    "DataParams",
    "EvaluationParams",
    "ModelParams",
    "PrunerParams",
    "RecoveryParams",
    "RuntimeParams",
    "Seed",
    "TinyParams",
    "check_across_blocks",
]

Allocation = Literal["uniform", "owl", "dlp", "dlp_mean"]
Base = Literal["wanda", "sparsegpt", "magnitude"]
# the paper's comparison, and dlp_mean for spec check 3 (the claims in report.CLAIMS read all four)
PAPER_ALLOCATIONS = ("uniform", "owl", "dlp", "dlp_mean")


class ModelParams(ParamsModel):
    """Which dense LM to prune: the catalog's ``dlp.pretrained_lm``, or a tiny LLaMA trained here.

    The pretrained model (SmolLM2 by default, a Llama-2 folder with ``--env paper``) is a catalog
    entry, never a path parameter; ``tiny_scratch`` is for smoke runs only.
    """

    source: Literal["pretrained", "tiny_scratch"] = "pretrained"
    # cast the dense model to this dtype before pruning (null: keep the catalog's / training dtype);
    # statistics and SparseGPT's arithmetic stay float32 whatever the weights are
    dtype: Literal["float32", "bfloat16", "float16"] | None = None


class TinyParams(ParamsModel):
    """The byte-level LLaMA of ``model.source = tiny_scratch``."""

    n_layer: int = Field(4, ge=1)
    d_model: int = Field(128, ge=8)
    d_ff: int = Field(344, ge=8)
    n_head: int = Field(4, ge=1)
    steps: int = Field(300, ge=1)
    batch: int = Field(16, ge=1)
    seqlen: int = Field(128, ge=8)
    lr: float = Field(3e-3, gt=0)


class DataParams(ParamsModel):
    """The text (offline Python docs, or the paper's C4 + WikiText-2 catalog inputs) and its windows."""

    source: Literal["pydoc_topics", "stdlib_docstrings", "c4_wikitext2"] = "pydoc_topics"
    train_frac: float = Field(0.7, gt=0, lt=1)
    nsamples: int = Field(16, ge=1)
    seqlen: int = Field(256, ge=8)
    eval_windows: int | None = Field(16, ge=1)
    batch_size: int = Field(16, ge=1)


class DLPParams(ParamsModel):
    alpha: float = Field(0.15, gt=0, lt=0.5)
    score_stat: Literal["median", "mean"] = "median"


class OWLParams(ParamsModel):
    m: float = Field(5.0, gt=0)
    lam: float = Field(0.08, gt=0, lt=0.5)


class AllocationParams(ParamsModel):
    target_sparsity: float = Field(0.7, ge=0, lt=1)
    sweep: list[float] = Field(default_factory=list)
    methods: list[Allocation] = Field(default_factory=lambda: list(PAPER_ALLOCATIONS), min_length=1)
    dlp: DLPParams = DLPParams()
    owl: OWLParams = OWLParams()
    min_layer_sparsity: float = Field(0.01, ge=0, lt=1)

    @model_validator(mode="after")
    def _sweep_in_range(self) -> AllocationParams:
        bad = [s for s in self.sweep if not 0 <= s < 1]
        if bad:
            raise ValueError(f"allocation.sweep values must be in [0, 1), got {bad}")
        # the paper's comparison and the claims (report.METRICS, report.CLAIMS) need all four
        missing = [m for m in PAPER_ALLOCATIONS if m not in self.methods]
        if missing:
            raise ValueError(
                f"allocation.methods must include {', '.join(PAPER_ALLOCATIONS)} (the paper's "
                f"comparison, and the released code's mean score for spec check 3); {missing} missing"
            )
        return self

    @property
    def sparsities(self) -> list[float]:
        """The target first, then the sweep, without repeats."""
        return list(dict.fromkeys([self.target_sparsity, *self.sweep]))


class SparseGPTParams(ParamsModel):
    blocksize: int = Field(128, ge=1)
    percdamp: float = Field(0.01, gt=0)
    # exact: floor(s*n) weights per column block; released: the released fasterprune's rule,
    # every weight <= the value at sorted position floor(s*n) (at least one more, plus ties)
    mask_rule: Literal["exact", "released"] = "exact"


class PrunerParams(ParamsModel):
    # whose masks are saved and who goes through recovery / zero-shot (first: a scalar, so a wrong
    # type in a conf file reaches this model instead of failing the list merge of `bases`)
    default_method: Allocation = "dlp"
    bases: list[Base] = Field(default_factory=lambda: ["wanda"], min_length=1)
    sparsity_type: str = "unstructured"
    use_variant: bool = False
    sparsegpt: SparseGPTParams = SparseGPTParams()

    @field_validator("sparsity_type")
    @classmethod
    def _known_pattern(cls, value: str) -> str:
        from paper_pipelines.pipelines.dlp.pruners import parse_sparsity_type

        parse_sparsity_type(value)
        return value


class RecoveryParams(ParamsModel):
    enabled: bool = False
    steps: int = Field(200, ge=1)
    batch: int = Field(4, ge=1)
    seqlen: int = Field(256, ge=8)
    lr: float = Field(1e-4, gt=0)
    rank: int = Field(8, ge=1)
    lora_alpha: int = Field(16, ge=1)
    dropout: float = Field(0.05, ge=0, lt=1)


class EvaluationParams(ParamsModel):
    batch_size: int = Field(4, ge=1)
    zero_shot_tasks: list[str] = Field(default_factory=list)


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """The pruned model saved (masks, LoRA, zero-shot) must be one of the allocations that run."""
    pruner, allocation = blocks.get("pruner"), blocks.get("allocation")
    if pruner is None or allocation is None:
        return
    if pruner.default_method not in allocation.methods:
        raise ValueError(
            f"parameter dlp.pruner.default_method={pruner.default_method!r} is not among "
            f"dlp.allocation.methods={allocation.methods}; add it there or choose one of them"
        )
