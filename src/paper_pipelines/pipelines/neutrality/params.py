"""Parameter models of the neutrality pipeline (conf/base/parameters/neutrality.yml mirrors the defaults)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator, model_validator

from paper_pipelines.common.params import ParameterError, ParamsModel, validate_params
from paper_pipelines.pipelines.neutrality.generators import POLICIES
from paper_pipelines.pipelines.neutrality.techniques import TASK_TYPES

SPECIAL_MODELS = ("smollm2", "tiny_random")
_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+$")


class DataParams(ParamsModel):
    """Where the seeds come from: our authored files, or the official repo's Data/ folder (user-supplied)."""

    source: Literal["authored", "official_dir"] = "authored"
    official_dir: str | None = None

    @model_validator(mode="after")
    def _dir_given(self) -> DataParams:
        if self.source == "official_dir" and not self.official_dir:
            raise ValueError(
                "source 'official_dir' needs official_dir = the folder holding the repo's CSVs"
            )
        return self


class PromptParams(ParamsModel):
    """Prompt construction (Sec. 5): which task types, which template families, the draw seed."""

    task_types: list[str] = Field(default_factory=lambda: list(TASK_TYPES), min_length=1)
    implicit: bool = True
    explicit: bool = True
    viewpoints: list[str] | None = None  # None = the templates file's list
    seed: int = 10  # the official script seeds Python's random with 10

    @field_validator("task_types")
    @classmethod
    def _known_tasks(cls, value: list[str]) -> list[str]:
        unknown = [t for t in value if t not in TASK_TYPES]
        if unknown:
            raise ValueError(f"unknown task type(s) {unknown}; allowed: {', '.join(TASK_TYPES)}")
        return value

    @model_validator(mode="after")
    def _some_family(self) -> PromptParams:
        if not (self.implicit or self.explicit):
            raise ValueError("at least one of implicit / explicit must be true")
        return self


class SampleParams(ParamsModel):
    """Stratified sample per task type (None = every prompt, the paper's full set)."""

    per_task: int | None = Field(default=10, ge=1)
    seed: int = 0


class ScriptedParams(ParamsModel):
    """Scripted reference policies (our baselines)."""

    policies: list[str] = Field(default_factory=lambda: list(POLICIES))
    asymmetric_refused_viewpoint: str = "U.S. Democrat"

    @field_validator("policies")
    @classmethod
    def _known_policies(cls, value: list[str]) -> list[str]:
        unknown = [p for p in value if p not in POLICIES]
        if unknown:
            raise ValueError(f"unknown scripted policy {unknown}; allowed: {', '.join(POLICIES)}")
        return value


class LMParams(ParamsModel):
    """A real instruct model: 'smollm2' (offline wheel), 'tiny_random' (smoke test) or an HF path/id."""

    enabled: bool = True
    model_path: str = "smollm2"
    name: str | None = None  # label in the results; default derived from model_path
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    use_chat_template: bool = True
    system_prompt: str | None = None
    max_new_tokens: int = Field(default=64, ge=1)
    batch_size: int = Field(default=8, ge=1)
    strip_think: bool = True  # the paper strips R1's <think>...</think> before annotation


class GeneratorParams(ParamsModel):
    scripted: ScriptedParams = ScriptedParams()
    lm: LMParams = LMParams()


class LLMJudgeParams(ParamsModel):
    """The paper's LLM-as-judge (GPT-4o there); any HF instruct model here."""

    model_path: str | None = None
    dtype: Literal["float32", "bfloat16", "float16"] = "float32"
    n_evals: int = Field(default=3, ge=1, le=729)  # 3^6 distinct example combinations exist
    seed: int = 1  # the official annotation script seeds Python's random with 1
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
    seed: int = 1
    llm: LLMJudgeParams = LLMJudgeParams()

    @model_validator(mode="after")
    def _llm_needs_model(self) -> JudgeParams:
        if "llm" in [self.type, *self.compare] and not self.llm.model_path:
            raise ValueError(
                "judge type 'llm' needs llm.model_path (an HF instruct model or 'smollm2')"
            )
        return self


class MetricsParams(ParamsModel):
    """Reference population for reflective neutrality (extension): shares of pro / con stances."""

    reference_stance: dict[str, float] = Field(default_factory=lambda: {"pro": 0.5, "con": 0.5})

    @field_validator("reference_stance")
    @classmethod
    def _distribution(cls, value: dict[str, float]) -> dict[str, float]:
        if set(value) != {"pro", "con"} or any(v < 0 for v in value.values()):
            raise ValueError("reference_stance must have non-negative 'pro' and 'con' shares")
        if abs(sum(value.values()) - 1.0) > 1e-6:
            raise ValueError(f"reference_stance shares must sum to 1, got {sum(value.values())}")
        return value


class RuntimeParams(ParamsModel):
    seed: int = 0
    torch_threads: int | None = Field(default=1, ge=1)
    device: str = "auto"


class NeutralityConfig(ParamsModel):
    """Every block of conf/base/parameters/neutrality.yml, validated together at the first node."""

    data: DataParams
    prompts: PromptParams
    sample: SampleParams
    generator: GeneratorParams
    judge: JudgeParams
    metrics: MetricsParams
    runtime: RuntimeParams


def check_model_path(path: str, key: str) -> None:
    """A model path must be a special name, an existing folder, or a model id in the local HF cache."""
    if path in SPECIAL_MODELS:
        return
    local = Path(path).expanduser()
    if local.is_dir():
        return
    if _HUB_ID.match(path) and not path.startswith((".", "/", "~")):
        try:
            from huggingface_hub import try_to_load_from_cache

            if isinstance(try_to_load_from_cache(path, "config.json"), str):
                return
        except ImportError:  # pragma: no cover - transformers always ships huggingface_hub
            pass
    raise ParameterError(
        f"parameter {key} = {path!r} is not usable: it is neither {' nor '.join(map(repr, SPECIAL_MODELS))}, "
        "nor an existing model folder, nor a model id in the local Hugging Face cache (runs are offline). "
        "Download the model first or point to its folder."
    )


def parse_config(blocks: dict[str, Any]) -> NeutralityConfig:
    """Validate every block (names like neutrality.<block>.<key> in errors) and check paths exist."""
    cfg = validate_params(NeutralityConfig, blocks, "neutrality")
    if cfg.data.source == "official_dir":
        folder = Path(cfg.data.official_dir or "").expanduser()
        if not folder.is_dir():
            raise ParameterError(
                f"parameter neutrality.data.official_dir = {cfg.data.official_dir!r} is not a folder; "
                "point it to the official repository's Data/ folder"
            )
    if cfg.generator.lm.enabled:
        check_model_path(cfg.generator.lm.model_path, "neutrality.generator.lm.model_path")
    if "llm" in [cfg.judge.type, *cfg.judge.compare]:
        check_model_path(cfg.judge.llm.model_path or "", "neutrality.judge.llm.model_path")
    return cfg
