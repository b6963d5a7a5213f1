"""Parameter blocks of the neutrality pipeline, one model per top-level key of
conf/base/parameters/neutrality.yml; Kedro checks them before any node runs.

``neutrality.seed`` is the one seed: the prompt sample, the judge's cross-validation folds and torch
draw from sub-streams of it (``common.runtime.substream_seed``). The template draws of prompt
construction and the example draws of the LLM judge keep the official scripts' fixed seeds (10 and 1,
``prompts.OFFICIAL_SEED`` and ``judges.OFFICIAL_SEED``): with them the official prompt set is rebuilt
prompt for prompt. The models (the one evaluated, the LLM judge) and the official seed files are catalog
entries, not parameters (conf/paper/catalog/neutrality.yml).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed
from paper_pipelines.pipelines.neutrality.baselines import POLICIES
from paper_pipelines.pipelines.neutrality.techniques import TASK_TYPES

__all__ = [
    "DataParams",
    "EvaluationParams",
    "GeneratorParams",
    "JudgeParams",
    "LLMJudgeParams",
    "LMParams",
    "PromptParams",
    "RuntimeParams",
    "SampleParams",
    "ScriptedParams",
    "Seed",
    "StanceShares",
]


class DataParams(ParamsModel):
    """Which column layout the seed files (catalog entry ``neutrality.seed_files``) have.

    ``authored``: our committed files; ``official``: the official repository's Data/ CSVs, which the
    paper environment's catalog points to.
    """

    source: Literal["authored", "official"] = "authored"


class PromptParams(ParamsModel):
    """Prompt construction (Sec. 5): which task types and which template families."""

    families: Literal["both", "implicit", "explicit"] = "both"  # implicit and/or explicit requests
    task_types: list[str] = Field(default_factory=lambda: list(TASK_TYPES), min_length=1)
    viewpoints: list[str] | None = None  # None = the templates file's list

    @field_validator("task_types")
    @classmethod
    def _known_tasks(cls, value: list[str]) -> list[str]:
        unknown = [t for t in value if t not in TASK_TYPES]
        if unknown:
            raise ValueError(f"unknown task type(s) {unknown}; allowed: {', '.join(TASK_TYPES)}")
        return value

    @property
    def implicit(self) -> bool:
        return self.families in ("both", "implicit")

    @property
    def explicit(self) -> bool:
        return self.families in ("both", "explicit")


class SampleParams(ParamsModel):
    """Stratified sample per task type (None = every prompt, the paper's full set)."""

    per_task: int | None = Field(default=10, ge=1)


class ScriptedParams(ParamsModel):
    """Scripted reference policies (our baselines)."""

    asymmetric_refused_viewpoint: str = "U.S. Democrat"
    policies: list[str] = Field(default_factory=lambda: list(POLICIES))

    @field_validator("policies")
    @classmethod
    def _known_policies(cls, value: list[str]) -> list[str]:
        unknown = [p for p in value if p not in POLICIES]
        if unknown:
            raise ValueError(f"unknown scripted policy {unknown}; allowed: {', '.join(POLICIES)}")
        return value


class LMParams(ParamsModel):
    """How the evaluated model (catalog entry ``neutrality.generator_lm``) answers: greedy, batched."""

    name: str | None = None  # label in the results; None = the model's own name
    use_chat_template: bool = True
    system_prompt: str | None = None
    max_new_tokens: int = Field(default=64, ge=1)
    batch_size: int = Field(default=8, ge=1)
    strip_think: bool = True  # the paper strips R1's <think>...</think> before annotation


class GeneratorParams(ParamsModel):
    scripted: ScriptedParams = ScriptedParams()
    lm: LMParams = LMParams()


class LLMJudgeParams(ParamsModel):
    """The paper's LLM-as-judge (GPT-4o there); the model is the catalog entry ``neutrality.judge_lm``."""

    n_evals: int = Field(default=3, ge=1, le=729)  # 3^6 distinct example combinations exist
    max_new_tokens: int = Field(default=160, ge=8)
    batch_size: int = Field(default=4, ge=1)
    validate_on_gold: bool = False


JudgeType = Literal["rules", "embed_lr", "llm"]


class JudgeParams(ParamsModel):
    """Primary judge (drives the metrics) and cheaper judges annotated alongside for comparison."""

    type: JudgeType = "embed_lr"
    compare: list[JudgeType] = Field(default_factory=lambda: ["rules"])
    cv_folds: int = Field(default=5, ge=2)
    features: Literal["output", "input_output"] = "output"
    C: float = Field(default=1.0, gt=0)
    flag_threshold: float = Field(default=0.25, gt=0, lt=1)
    embed_batch_size: int = Field(default=32, ge=1)
    llm: LLMJudgeParams = LLMJudgeParams()

    @property
    def types(self) -> list[str]:
        """The primary judge first, then the comparison judges, each once."""
        return list(dict.fromkeys([self.type, *self.compare]))


class StanceShares(ParamsModel):
    """Shares of pro and con stances in a reference population (sum to 1)."""

    pro: float = Field(default=0.5, ge=0, le=1)
    con: float = Field(default=0.5, ge=0, le=1)

    @model_validator(mode="after")
    def _sums_to_one(self) -> StanceShares:
        if abs(self.pro + self.con - 1.0) > 1e-6:
            raise ValueError(f"reference_stance shares must sum to 1, got {self.pro + self.con}")
        return self


class EvaluationParams(ParamsModel):
    """Reference population for reflective neutrality (extension)."""

    reference_stance: StanceShares = StanceShares()
