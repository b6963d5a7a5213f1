"""Parameter blocks of the ata pipeline (conf/base/parameters/ata.yml), one model per top-level block.

Kedro validates each block before any node runs (the nodes take them typed). ``ata.seed`` is the paper's
one seed (common.params.Seed); every random stream is a named sub-stream of it (common.runtime.substream):
``"workers"`` (worker-id shuffle), ``"data"`` (train/holdout split), ``"optim"`` (torch init and the task
samples), ``"sim"`` (task times and each policy's draws), ``"evaluation"`` (sandwich Monte Carlo).
``ata.runtime`` is the shared common.params.RuntimeParams.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

Policy = Literal["FTA", "GTA", "UTA", "ATA", "ATA_EMP"]

__all__ = [
    "DataParams",
    "EvaluationParams",
    "OptimParams",
    "Policy",
    "RuntimeParams",
    "Seed",
    "SimParams",
    "WorkersParams",
]


class WorkersParams(ParamsModel):
    """The instance: n workers, B tasks per round, the task-time family and its means."""

    n: int = Field(51, ge=1)
    B: int = Field(23, ge=1)
    family: Literal["shifted_exponential", "lognormal", "pareto"] = "shifted_exponential"
    scale: float = Field(1.0, gt=0)
    shift_factor: float = Field(1.0, ge=0)
    means: list[float] | None = None
    lognormal_sigma: float = Field(1.0, gt=0)
    pareto_shape: float = Field(3.0, gt=2)
    shuffle_ids: bool = True

    @field_validator("means")
    @classmethod
    def _positive_means(cls, value: list[float] | None) -> list[float] | None:
        if value is not None and (not value or any(not (m > 0) for m in value)):
            raise ValueError(f"every mean task time must be > 0, got {value}")
        return value

    @model_validator(mode="after")
    def _means_match_n(self) -> WorkersParams:
        if self.means is not None and len(self.means) != self.n:
            raise ValueError(f"means has {len(self.means)} entries but n = {self.n}")
        return self


class DataParams(ParamsModel):
    """Digits split."""

    holdout_frac: float = Field(0.2, gt=0, lt=1)


class OptimParams(ParamsModel):
    """The model and Adam; K comes from ata.sim.K so the trajectory covers every simulated round."""

    model: Literal["mlp", "cnn"] = "mlp"
    hidden: int = Field(64, ge=1)
    lr: float = Field(1.0e-4, gt=0)
    samples_per_task: int = Field(1, ge=1)
    log_every: int = Field(200, ge=1)


class SimParams(ParamsModel):
    """The timing layer: policies, rounds, ATA's constants and the tie-breaking rule."""

    K: int = Field(20000, ge=1)
    policies: list[Policy] = Field(default_factory=lambda: ["FTA", "GTA", "UTA", "ATA", "ATA_EMP"])
    conf_scale: float = Field(2.0, ge=0)
    alpha: float | Literal["auto"] = "auto"
    eta: float | Literal["auto"] = "auto"
    tie_break: Literal["spread", "index"] = "spread"
    uta_mode: Literal["random", "even"] = "random"
    block: int = Field(500, ge=1)

    @field_validator("policies")
    @classmethod
    def _distinct(cls, value: list[str]) -> list[str]:
        if not value or len(set(value)) != len(value):
            raise ValueError(f"policies must be a non-empty list of distinct names, got {value}")
        return value

    @field_validator("alpha", "eta")
    @classmethod
    def _non_negative(cls, value: float | str) -> float | str:
        if not isinstance(value, str) and value < 0:
            raise ValueError(f"must be 'auto' or >= 0, got {value}")
        return value


class EvaluationParams(ParamsModel):
    """Monte-Carlo sandwich check and the regret windows."""

    mc_draws: int = Field(20000, ge=100)
    regret_window: float = Field(0.2, gt=0, le=0.5)
