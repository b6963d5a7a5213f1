"""Registers one pipeline per paper folder under pipelines/."""

from __future__ import annotations

from importlib.resources import files

from kedro.framework.project import find_pipelines, pipelines
from kedro.pipeline import Pipeline

# `kedro run` with no --pipeline runs the main job only (dlp), never all twenty papers by surprise.
MAIN_JOB = "dlp"


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
    unknown = sorted(set(requested) - set(paper_slugs()) - {"__default__"})
    if unknown:
        raise KeyError(
            f"Unknown pipeline(s) {unknown}. Known pipelines: {', '.join(paper_slugs())} "
            f"(and __default__ = {MAIN_JOB}); see `kedro registry list`."
        )
    # A paper that fails to import is skipped with a warning so it cannot block the others;
    # tests/test_registry.py fails CI when any paper folder does not register.
    found = find_pipelines(raise_errors=False)
    found["__default__"] = found.get(MAIN_JOB, Pipeline([]))
    return found
