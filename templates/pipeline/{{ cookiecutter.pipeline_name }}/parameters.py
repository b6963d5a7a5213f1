"""Parameter blocks of {{ cookiecutter.pipeline_name }} (conf/*/parameters/{{ cookiecutter.pipeline_name }}.yml), one model per block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = ["DataParams", "EvaluationParams", "MethodParams", "RuntimeParams", "Seed"]


class DataParams(ParamsModel):
    """The generated data: n rows, d features, Gaussian noise, a held-out test fraction."""

    n: int = Field(500, ge=10)
    d: int = Field(8, ge=1)
    noise: float = Field(0.5, ge=0)
    test_frac: float = Field(0.3, gt=0, lt=1)


class MethodParams(ParamsModel):
    """The method's own knobs, named as the paper names them."""

    ridge: float = Field(1.0, ge=0)


class EvaluationParams(ParamsModel):
    metric: Literal["mse", "mae"] = "mse"


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Rules that span blocks (the project context calls this before any node runs)."""
    data = blocks.get("data")
    if data is not None and data.n * data.test_frac < 2:
        raise ValueError(
            "{{ cookiecutter.pipeline_name }}.data.n * {{ cookiecutter.pipeline_name }}.data.test_frac "
            f"must leave at least 2 test rows, got {data.n} * {data.test_frac}"
        )
