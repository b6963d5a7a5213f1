"""Registers one pipeline per paper folder under pipelines/."""

from kedro.framework.project import find_pipelines
from kedro.pipeline import Pipeline

# `kedro run` with no --pipeline runs the main job only (dlp), never all twenty papers by surprise.
MAIN_JOB = "dlp"


def register_pipelines() -> dict[str, Pipeline]:
    """Each folder in pipelines/ is one paper; its slug is the pipeline name and namespace."""
    pipelines = find_pipelines(raise_errors=True)
    pipelines["__default__"] = pipelines.get(MAIN_JOB, Pipeline([]))
    return pipelines
