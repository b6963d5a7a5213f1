"""Base for per-paper parameter models: a bad value fails at node start, naming key, value and rule."""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

M = TypeVar("M", bound="ParamsModel")


class ParameterError(ValueError):
    """A parameter value a paper cannot use; the message names the key, the value and what is allowed."""


class ParamsModel(BaseModel):
    """Strict pydantic model: unknown keys are errors (a typo must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=())


def validate_params(model: type[M], params: dict[str, Any] | M, prefix: str) -> M:
    """Parse ``params`` into ``model``; raise ParameterError whose message names ``prefix.key``.

    ``prefix`` is where the block lives in conf, e.g. ``"dlp.allocation"``.
    """
    if isinstance(params, model):
        return params
    if not isinstance(params, dict):
        raise ParameterError(
            f"parameter block {prefix} must be a mapping, got {type(params).__name__}: {params!r}"
        )
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        lines = []
        for err in exc.errors():
            key = ".".join([prefix, *(str(p) for p in err["loc"])])
            value = err.get("input")
            if err["type"] == "extra_forbidden":
                allowed = ", ".join(sorted(model.model_fields))
                lines.append(f"unknown parameter {key} (allowed keys here: {allowed})")
            elif err["type"] == "missing":
                lines.append(f"parameter {key} is required but missing")
            else:
                lines.append(f"parameter {key} = {value!r} is invalid: {err['msg']}")
        raise ParameterError(
            "; ".join(lines) + f". Fix it in conf/base/parameters/{prefix.split('.')[0]}.yml "
            "or with --params."
        ) from None


def nest_dotted(dotted: dict[str, Any]) -> dict[str, Any]:
    """{"dlp.data.seqlen": 64} -> {"dlp": {"data": {"seqlen": 64}}}, as `kedro run --params` nests keys.

    Keys without dots, and values that are already mappings, pass through unchanged.
    """
    nested: dict[str, Any] = {}
    for key, value in dotted.items():
        *parents, leaf = key.split(".")
        node = nested
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return nested
