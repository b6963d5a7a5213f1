"""The dlp parameter blocks (conf/base/parameters/dlp.yml), validated when a node starts."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from paper_pipelines.common.params import ParamsModel

Allocation = Literal["uniform", "owl", "dlp", "dlp_mean"]
Base = Literal["wanda", "sparsegpt", "magnitude"]


class RuntimeParams(ParamsModel):
    device: str = "auto"
    torch_threads: int | None = Field(default=2, ge=1)


class ModelParams(ParamsModel):
    source: Literal["smollm2_wheel", "hf", "tiny_scratch"] = "smollm2_wheel"
    path: str | None = None
    dtype: Literal["float32", "float16", "bfloat16"] = "float32"

    @model_validator(mode="after")
    def _path_for_hf(self) -> ModelParams:
        if self.source == "hf" and not self.path:
            raise ValueError(
                "model.source 'hf' needs model.path (a model folder or a cached hub id)"
            )
        return self


class TinyParams(ParamsModel):
    n_layer: int = Field(4, ge=1)
    d_model: int = Field(128, ge=8)
    d_ff: int = Field(344, ge=8)
    n_head: int = Field(4, ge=1)
    steps: int = Field(300, ge=1)
    batch: int = Field(16, ge=1)
    seqlen: int = Field(128, ge=8)
    lr: float = Field(3e-3, gt=0)


class DataParams(ParamsModel):
    source: Literal["pydoc_topics", "stdlib_docstrings", "hf_datasets"] = "pydoc_topics"
    train_frac: float = Field(0.7, gt=0, lt=1)
    nsamples: int = Field(16, ge=1)
    seqlen: int = Field(256, ge=8)
    eval_windows: int | None = Field(16, ge=1)
    batch_size: int = Field(16, ge=1)
    calibration: str = "c4"
    evaluation: str = "wikitext2"


class DLPParams(ParamsModel):
    alpha: float = Field(0.15, gt=0, lt=0.5)
    score_stat: Literal["median", "mean"] = "median"


class OWLParams(ParamsModel):
    m: float = Field(5.0, gt=0)
    lam: float = Field(0.08, gt=0, lt=0.5)


class AllocationParams(ParamsModel):
    target_sparsity: float = Field(0.7, ge=0, lt=1)
    sweep: list[float] = Field(default_factory=list)
    methods: list[Allocation] = Field(
        default_factory=lambda: ["uniform", "owl", "dlp"], min_length=1
    )
    dlp: DLPParams = DLPParams()
    owl: OWLParams = OWLParams()
    min_layer_sparsity: float = Field(0.01, ge=0, lt=1)

    @model_validator(mode="after")
    def _sweep_in_range(self) -> AllocationParams:
        bad = [s for s in self.sweep if not 0 <= s < 1]
        if bad:
            raise ValueError(f"allocation.sweep values must be in [0, 1), got {bad}")
        return self

    @property
    def sparsities(self) -> list[float]:
        """The target first, then the sweep, without repeats."""
        return list(dict.fromkeys([self.target_sparsity, *self.sweep]))


class SparseGPTParams(ParamsModel):
    blocksize: int = Field(128, ge=1)
    percdamp: float = Field(0.01, gt=0)


class PrunerParams(ParamsModel):
    bases: list[Base] = Field(default_factory=lambda: ["wanda"], min_length=1)
    sparsity_type: str = "unstructured"
    use_variant: bool = False
    sparsegpt: SparseGPTParams = SparseGPTParams()
    default_method: Allocation = "dlp"

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
