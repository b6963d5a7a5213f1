"""Registers one pipeline per paper folder under pipelines/."""

from __future__ import annotations

import importlib
import warnings
from importlib.resources import files

from kedro.framework.project import find_pipelines, pipelines
from kedro.pipeline import Pipeline

# `kedro run` with no --pipeline runs the main job only (dlp), never all twenty papers by surprise.
MAIN_JOB = "dlp"

# Optional pipelines that live inside a paper's folder: registered and run by name, but not papers
# (the scoreboard and the per-paper tests read paper_slugs()). Name -> module with create_pipeline.
OPTIONAL_PIPELINES = {"les_molecules": "paper_pipelines.pipelines.les.molecules.pipeline"}


def paper_slugs() -> list[str]:
    """Every paper folder under paper_pipelines/pipelines/ (a folder is a paper, its name the slug)."""
    root = files("paper_pipelines.pipelines")
    return sorted(
        p.name
        for p in root.iterdir()
        if p.is_dir() and not p.name.startswith((".", "_")) and (p / "__init__.py").is_file()
    )


def register_pipelines() -> dict[str, Pipeline]:
    """Each folder in pipelines/ is one paper; its slug is the pipeline name and namespace.

    Kedro imports only the requested papers (`kedro run --pipeline=<slug>`); an unknown name fails
    here with the list of known ones instead of an import error.
    """
    requested = getattr(pipelines, "_requested_pipelines", None) or []
    known = [*paper_slugs(), *OPTIONAL_PIPELINES]
    unknown = sorted(set(requested) - set(known) - {"__default__"})
    if unknown:
        raise KeyError(
            f"Unknown pipeline(s) {unknown}. Known pipelines: {', '.join(known)} "
            f"(and __default__ = {MAIN_JOB}); see `kedro registry list`."
        )
    # A paper that fails to import is skipped with a warning so it cannot block the others;
    # tests/test_registry.py fails CI when any paper folder does not register.
    # only optional pipelines asked for: no paper folder to import (find_pipelines would warn that
    # pipelines/les_molecules does not exist)
    only_optional = requested and set(requested) <= set(OPTIONAL_PIPELINES)
    found = {} if only_optional else find_pipelines(raise_errors=False)
    found["__default__"] = found.get(MAIN_JOB, Pipeline([]))
    for name, module in OPTIONAL_PIPELINES.items():
        if not requested or name in requested:
            try:
                found[name] = importlib.import_module(module).create_pipeline()
            except Exception as exc:  # as find_pipelines(raise_errors=False) does for a paper
                if name in requested:
                    raise
                warnings.warn(f"optional pipeline {name} did not register: {exc!r}", stacklevel=1)
    return found
