"""One bad-input check for every paper and every parameter block, in the spirit of scikit-learn's
common estimator checks: a new paper is covered without writing a line.

For each registered paper and each top-level block under its slug, three bad inputs are passed as a user
would pass them: an out-of-range value and a misspelt key with ``--params`` (runtime parameters of a real
KedroSession), a value of the wrong type in a conf file of its own environment. Each must fail before any
node runs, with a message that names ``<slug>.<block>.<key>``, and leave the data root empty.
"""

from __future__ import annotations

import copy
import functools
import inspect
import shutil
import typing
from pathlib import Path
from typing import Any

import annotated_types as at
import pytest
import yaml
from pydantic import BaseModel

from paper_pipelines.common.params import parameter_requirements
from paper_pipelines.pipeline_registry import paper_slugs
from tests.kedro_helpers import PROJECT_ROOT, files_under, make_project_copy, run_session

MISSING = object()


@functools.cache
def _pipeline(slug: str):
    import importlib

    return importlib.import_module(f"paper_pipelines.pipelines.{slug}").create_pipeline()


@functools.cache
def _all_fast_parameters() -> dict[str, Any]:
    """Every paper's parameters as the fast environment resolves them (base deep-merged with fast).

    Loaded once: the loader reads and merges every paper's files whichever slug is asked for, and
    this runs at collection, once per xdist worker (it was ~1.5 s per paper, 20 times)."""
    from kedro.config import OmegaConfigLoader

    loader = OmegaConfigLoader(
        str(PROJECT_ROOT / "conf"),
        base_env="base",
        default_run_env="fast",
        merge_strategy={"parameters": "soft"},
    )
    return loader["parameters"]


def _fast_parameters(slug: str) -> dict[str, Any]:
    """The paper's parameters as the fast environment resolves them (callers copy before editing)."""
    return _all_fast_parameters()[slug]


def _unwrap(annotation: Any) -> tuple[Any, list]:
    """(inner type, constraint metadata) of ``X``, ``X | None`` and ``Annotated[X, ...]``."""
    metadata: list = []
    if typing.get_origin(annotation) is typing.Annotated:
        annotation, *metadata = typing.get_args(annotation)
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if args and type(None) in typing.get_args(annotation) and len(args) == 1:
        annotation = args[0]
    return annotation, metadata


def _model(annotation: Any) -> type[BaseModel] | None:
    inner, _ = _unwrap(annotation)
    return inner if inspect.isclass(inner) and issubclass(inner, BaseModel) else None


def _fields(model: type[BaseModel], prefix: tuple[str, ...] = ()):
    """(path, annotation, metadata) of every leaf field, nested blocks flattened."""
    for name, info in model.model_fields.items():
        nested = _model(info.annotation)
        if nested is not None:
            yield from _fields(nested, (*prefix, name))
        else:
            yield (*prefix, name), info.annotation, list(info.metadata)


def _rules(metadata: list) -> list:
    """Constraint objects, with a ``Field(...)`` inside ``Annotated`` (e.g. ``Seed``) opened up."""
    out = []
    for item in metadata:
        out.extend(getattr(item, "metadata", None) or [item])
    return out


def _violation(annotation: Any, metadata: list) -> Any:
    """A value that breaks the field's declared range or choices, or MISSING if it declares none."""
    inner, extra = _unwrap(annotation)
    for rule in _rules([*metadata, *extra]):
        if isinstance(rule, at.Ge):
            return rule.ge - 1
        if isinstance(rule, at.Gt):
            return rule.gt
        if isinstance(rule, at.Le):
            return rule.le + 1
        if isinstance(rule, at.Lt):
            return rule.lt
    if typing.get_origin(inner) is typing.Literal:
        return "no_such_choice"
    return MISSING


def _wrong_type(leaves: list, values: dict) -> tuple[tuple[str, ...], Any]:
    """A scalar leaf (a list or mapping cannot be overwritten by a scalar in a conf file) and a value of
    the wrong type for it: text for a number, a flag or a choice; a mapping for text."""
    for path, annotation, _ in leaves:
        current: Any = values
        for part in path:
            current = current.get(part, MISSING) if isinstance(current, dict) else MISSING
        if isinstance(current, list | dict):
            continue
        inner, _ = _unwrap(annotation)
        if inner is str:
            return path, {"oops": 1}
        return path, "not_a_number"
    raise AssertionError(f"no scalar field to give a wrong type among {[p for p, _, _ in leaves]}")


def bad_cases(slug: str) -> list[tuple[str, str, str, Any]]:
    """(case, block, dotted key the error must name, value) for every block of ``slug``."""
    requirements = parameter_requirements([_pipeline(slug)])
    cases = []
    for block in _fast_parameters(slug):
        annotation = requirements.get(f"{slug}.{block}")
        assert annotation is not None, (
            f"{slug}.{block} is read by no typed node argument: type it with its pydantic model "
            f"(paper_pipelines/pipelines/{slug}/parameters.py) or Seed"
        )
        model = _model(annotation)
        if model is None:  # a scalar block such as seed
            bad = _violation(annotation, [])
            assert bad is not MISSING, f"{slug}.{block} declares no range (use Seed / Annotated)"
            cases.append(("out_of_range", block, f"{slug}.{block}", bad))
            cases.append(("wrong_type", block, f"{slug}.{block}", {"oops": 1}))
            continue
        leaves = list(_fields(model))
        ranged = [(p, _violation(a, m)) for p, a, m in leaves]
        ranged = [(p, v) for p, v in ranged if v is not MISSING]
        assert ranged, f"{slug}.{block} ({model.__name__}) declares no range or choice on any field"
        path, value = ranged[0]
        cases.append(("out_of_range", block, ".".join((slug, block, *path)), value))
        path, wrong = _wrong_type(leaves, _fast_parameters(slug)[block])
        cases.append(("wrong_type", block, ".".join((slug, block, *path)), wrong))
        path = leaves[0][0]
        misspelt = (*path[:-1], path[-1][:-1] if len(path[-1]) > 1 else path[-1] + "x")
        cases.append(("unknown_key", block, ".".join((slug, block, *misspelt)), 1))
    return cases


ALL_CASES = [(slug, *case) for slug in paper_slugs() for case in bad_cases(slug)]
# Through a real KedroSession (as `kedro run` meets them): per paper, each kind of bad input once, on
# the block read last; every other case goes through the same check the session calls, without the
# second of Kedro start-up each session costs.
SESSION_CASES = list({(c[0], c[1]): c for c in ALL_CASES}.values())


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    return make_project_copy(tmp_path_factory.mktemp("bad_input") / "project")


def _set(tree: dict, dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    for part in parents:
        tree = tree.setdefault(part, {})
    tree[leaf] = value


@pytest.mark.parametrize(
    ("slug", "case", "block", "key", "value"),
    ALL_CASES,
    ids=[f"{s}.{b}-{c}" for s, c, b, _, _ in ALL_CASES],
)
def test_bad_parameter_is_rejected_naming_the_key(slug, case, block, key, value):
    """The check ProjectContext runs before any node, on the fast parameters with one bad value."""
    from paper_pipelines.common.params import ParameterError, check_parameters

    params = {slug: copy.deepcopy(_fast_parameters(slug))}
    _set(params, key, value)
    with pytest.raises(ParameterError) as failure:
        check_parameters(params, [_pipeline(slug)], paper_slugs())
    assert key in str(failure.value), f"the error does not name {key}: {failure.value}"


@pytest.mark.parametrize(
    ("slug", "case", "block", "key", "value"),
    SESSION_CASES,
    ids=[f"{s}.{b}-{c}" for s, c, b, _, _ in SESSION_CASES],
)
def test_bad_parameter_fails_before_anything_is_written(project, slug, case, block, key, value):
    data_root = project / "data"
    before = files_under(data_root)
    if case == "wrong_type":  # in a conf file, as a user edits conf/<env>/parameters/<slug>.yml
        env = project / "conf" / "bad"
        shutil.rmtree(env, ignore_errors=True)
        shutil.copytree(project / "conf" / "fast", env)
        path = env / "parameters" / f"{slug}.yml"
        params = yaml.safe_load(path.read_text()) if path.exists() else {slug: {}}
        _set(params, key, value)
        path.write_text(yaml.safe_dump(params))
        run = dict(env="bad")
    else:  # kedro run --params "<key>=<value>"
        run = dict(env="fast", runtime_params={key: value})
    with pytest.raises(Exception) as failure:
        run_session(project, slug, **run)
    message = str(failure.value)
    assert key in message, f"the error does not name {key}: {message}"
    assert files_under(data_root) == before, "a failed run wrote files"


def test_a_list_given_as_a_mapping_in_a_conf_file_names_the_key(project):
    """OmegaConf's own message ("Cannot merge incompatible container types") names no key."""
    env = project / "conf" / "bad"
    shutil.rmtree(env, ignore_errors=True)
    shutil.copytree(project / "conf" / "fast", env)
    path = env / "parameters" / "dlp.yml"
    params = yaml.safe_load(path.read_text())
    _set(params, "dlp.pruner.bases", {"oops": 1})
    path.write_text(yaml.safe_dump(params))
    before = files_under(project / "data")
    with pytest.raises(Exception, match=r"dlp.pruner.bases has a different shape in conf/bad"):
        run_session(project, "dlp", env="bad")
    assert files_under(project / "data") == before
