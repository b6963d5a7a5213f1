"""Parameter blocks: one strict pydantic model per top-level block, checked by Kedro before any node runs.

A node argument annotated with a :class:`ParamsModel` subclass and fed ``params:<block>`` is validated
by Kedro 1.7 (``kedro.validation``) for the pipelines being run, when the catalog is built, so a bad
value stops the run before the first node starts and before anything is written.
:class:`paper_pipelines.context.ProjectContext` runs :func:`check_parameters` first, which adds what
Kedro does not check (misspelt block names, untyped scalars such as ``seed``) and words every error as
``<slug>.<block>.<key> = value: rule; fix``.
"""

from __future__ import annotations

import difflib
import inspect
import re
import typing
from collections.abc import Iterable, Mapping
from typing import Annotated, Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

M = TypeVar("M", bound="ParamsModel")

# The seed every paper declares once, at `<slug>.seed`; sub-streams are derived from it
# (paper_pipelines.common.runtime.substream).
Seed = Annotated[int, Field(ge=0, strict=True)]


class ParameterError(ValueError):
    """A parameter value a paper cannot use; the message names the key, the value and what is allowed."""


class ParamsModel(BaseModel):
    """Strict pydantic model: unknown keys are errors (a typo must not be silently ignored)."""

    model_config = ConfigDict(extra="forbid", frozen=True, protected_namespaces=())


class RuntimeParams(ParamsModel):
    """The `runtime` block every paper has: where and on how many threads it computes."""

    device: str = Field("auto", pattern=r"^(auto|cpu|cuda(:\d+)?|mps)$")
    # Small torch models run fastest on these 2-core machines with one intra-op thread.
    torch_threads: int | None = Field(1, ge=1)
    blas_threads: int | None = Field(None, ge=1)


def fix_hint(slug: str) -> str:
    return (
        f"Fix it in conf/base/parameters/{slug}.yml (or conf/<env>/parameters/{slug}.yml for one "
        "environment) or with --params."
    )


_TYPE_TAGS = {"int", "float", "str", "bool", "none", "list", "dict", "tuple", "set"}


def _is_type_tag(part: Any) -> bool:
    text = str(part)
    return isinstance(part, str) and (
        text in _TYPE_TAGS or "[" in text or text.startswith("function-")
    )


def format_validation_error(
    exc: ValidationError, prefix: str, model: type[BaseModel] | None = None
) -> str:
    """One line per pydantic error: ``prefix.key = value is invalid: rule`` (unknown keys list the allowed)."""
    lines = []
    for err in exc.errors():
        # pydantic adds the union member tried ("int", "literal['a']") to the location: drop those
        loc = [str(p) for p in err["loc"] if not _is_type_tag(p)]
        key = ".".join([prefix, *loc])
        if err["type"] in ("extra_forbid", "extra_forbidden"):
            allowed = _allowed_keys(model, loc[:-1])
            hint = f" (allowed keys here: {', '.join(allowed)})" if allowed else ""
            lines.append(f"unknown parameter {key}{hint}")
        elif err["type"] == "missing":
            lines.append(f"parameter {key} is required but missing")
        else:
            lines.append(f"parameter {key} = {err.get('input')!r} is invalid: {err['msg']}")
    return "; ".join(lines)


def _allowed_keys(model: type[BaseModel] | None, path: list[str]) -> list[str]:
    """Field names of ``model`` at the nested ``path`` (empty when it cannot be followed)."""
    for part in path:
        field = model.model_fields.get(part) if model else None
        model = _model_of(field.annotation) if field else None
    return sorted(model.model_fields) if model else []


def validate_params(model: type[M], params: Mapping[str, Any] | M, prefix: str) -> M:
    """Parse ``params`` into ``model`` outside Kedro (notebooks, benchmarks); errors name ``prefix.key``."""
    if isinstance(params, model):
        return params
    if not isinstance(params, Mapping):
        raise ParameterError(
            f"parameter block {prefix} must be a mapping, got {type(params).__name__}: {params!r}. "
            + fix_hint(prefix.split(".")[0])
        )
    try:
        return model.model_validate(dict(params))
    except ValidationError as exc:
        raise ParameterError(
            format_validation_error(exc, prefix, model) + ". " + fix_hint(prefix.split(".")[0])
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


# ----------------------------------------------------------------------------- run-time check
def _annotation(node, dataset: str) -> Any:
    """The type annotation of the node argument fed by ``dataset`` (None when untyped)."""
    func = node.func
    try:
        hints = typing.get_type_hints(func, include_extras=True)
        names = list(inspect.signature(func).parameters)
    except Exception:  # a callable without a signature is simply not checked
        return None
    inputs = node._inputs
    if isinstance(inputs, dict):
        arg = next((a for a, d in inputs.items() if d == dataset), None)
    else:
        seq = [inputs] if isinstance(inputs, str) else list(inputs or [])
        arg = (
            names[seq.index(dataset)]
            if dataset in seq and seq.index(dataset) < len(names)
            else None
        )
    return hints.get(arg) if arg else None


def parameter_requirements(pipelines: Iterable) -> dict[str, Any]:
    """``{"dlp.data": DataParams, "dlp.seed": Seed, ...}``: every ``params:`` input and its annotation."""
    found: dict[str, Any] = {}
    for pipe in pipelines:
        for node in pipe.nodes:
            for name in node.inputs:
                if name.startswith("params:"):
                    key = name.removeprefix("params:")
                    ann = _annotation(node, name)
                    if ann is not None or key not in found:
                        found[key] = ann
    return found


def _lookup(params: Mapping[str, Any], key: str) -> Any:
    node: Any = params
    for part in key.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING
        node = node[part]
    return node


_MISSING = object()


def _suggest(word: str, options: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(options), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def check_parameters(params: Mapping[str, Any], pipelines: Iterable, slugs: Iterable[str]) -> None:
    """Fail before any node runs when a parameter the run will read is wrong, or a key is misspelt.

    ``pipelines`` are the pipelines about to run; ``slugs`` every paper of the project. Checks, in order:
    top-level keys are paper slugs; every key under a running paper's slug is a block some node reads;
    every typed block validates (pydantic models: with their own rules; scalars such as ``seed``: strictly).
    """
    from paper_pipelines.pipeline_registry import OPTIONAL_PIPELINES

    pipelines = list(pipelines)
    # optional pipelines (e.g. les_molecules) own a namespace of parameters without being papers
    slugs = set(slugs) | set(OPTIONAL_PIPELINES)
    errors: list[str] = []
    for top in params:
        if top not in slugs:
            errors.append(
                f"unknown top-level parameter key {top!r}{_suggest(top, slugs)}: every key at the top "
                f"of conf/*/parameters/ must be a paper slug ({', '.join(sorted(slugs))})"
            )
    requirements = parameter_requirements(pipelines)
    running = {key.split(".")[0] for key in requirements}
    for slug in sorted(running & set(params)):
        block = params[slug]
        if not isinstance(block, Mapping):
            errors.append(f"parameter {slug} must be a mapping of blocks, got {block!r}")
            continue
        read = {k.split(".")[1] for k in requirements if k.startswith(f"{slug}.") and "." in k}
        for name in block:
            if name not in read:
                errors.append(
                    f"unknown parameter block {slug}.{name}{_suggest(name, read)}: no node of "
                    f"{slug} reads it (blocks read: {', '.join(sorted(read))})"
                )
    for key, ann in sorted(requirements.items(), key=lambda kv: kv[0]):
        value = _lookup(params, key)
        if ann is None or value is _MISSING:
            continue  # a missing block is reported by InputCheckHooks with the file to restore
        model = _model_of(ann)
        try:
            if model is not None:
                if not isinstance(value, model):
                    if not isinstance(value, Mapping):
                        raise ParameterError(
                            f"parameter block {key} must be a mapping of keys, got {value!r}"
                        )
                    model.model_validate(dict(value))
            elif value is None and _optional(ann):
                continue
            else:
                TypeAdapter(ann).validate_python(value, strict=True)
        except ValidationError as exc:
            errors.append(format_validation_error(exc, key, model))
        except ParameterError as exc:
            errors.append(str(exc))
    if not errors:
        errors = _cross_block_errors(params, requirements, running)
    if errors:
        slug = next(iter(sorted(running)), "<slug>")
        # the keys go on the first line: logs and the scheduler's history keep that line
        keys = dict.fromkeys(k for e in errors for k in re.findall(r"\b[a-z_]\w*(?:\.\w+)+", e))
        raise ParameterError(
            f"Invalid parameters {', '.join(keys) or '(see below)'}; nothing was run or written:\n- "
            + "\n- ".join(errors)
            + "\n"
            + fix_hint(slug)
        )


def _cross_block_errors(params: Mapping[str, Any], requirements: dict, running: set) -> list[str]:
    """Rules that span blocks: ``check_across_blocks(blocks)`` in a paper's parameters.py, if it has one.

    It receives ``{block: validated model or scalar}`` and raises ValueError naming the keys.
    """
    import importlib

    errors = []
    for slug in sorted(running):
        try:
            module = importlib.import_module(f"paper_pipelines.pipelines.{slug}.parameters")
        except ModuleNotFoundError:
            continue
        rule = getattr(module, "check_across_blocks", None)
        if rule is None or not isinstance(params.get(slug), Mapping):
            continue
        blocks = {}
        for name, value in params[slug].items():
            model = _model_of(requirements.get(f"{slug}.{name}"))
            blocks[name] = (
                model.model_validate(dict(value)) if model and isinstance(value, Mapping) else value
            )
        try:
            rule(blocks)
        except ValueError as exc:
            errors.append(str(exc))
    return errors


def _optional(ann: Any) -> bool:
    return type(None) in typing.get_args(ann)


def _model_of(ann: Any) -> type[BaseModel] | None:
    """The pydantic model inside ``ann`` (``Model`` or ``Model | None``), else None."""
    candidates = [ann, *typing.get_args(ann)]
    for c in candidates:
        if inspect.isclass(c) and issubclass(c, BaseModel):
            return c
    return None


__all__ = [
    "ParameterError",
    "ParamsModel",
    "RuntimeParams",
    "Seed",
    "check_parameters",
    "format_validation_error",
    "nest_dotted",
    "parameter_requirements",
    "validate_params",
]
