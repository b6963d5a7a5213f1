"""Every paper's paper-scale environment (conf/paper/) loads and validates; it is never run in CI.
So do the other side environments (conf/full/, conf/bench/): a key they set must be one the paper reads."""

from __future__ import annotations

import importlib

import pytest
from kedro.config import OmegaConfigLoader
from kedro.io import DataCatalog

from paper_pipelines.common.params import check_parameters
from paper_pipelines.pipeline_registry import OPTIONAL_PIPELINES, paper_slugs
from paper_pipelines.settings import CONFIG_LOADER_ARGS
from tests.kedro_helpers import PROJECT_ROOT


@pytest.fixture(scope="module")
def paper_config():
    args = {k: v for k, v in CONFIG_LOADER_ARGS.items() if k != "default_run_env"}
    loader = OmegaConfigLoader(str(PROJECT_ROOT / "conf"), env="paper", **args)
    return loader["parameters"], loader["catalog"]


@pytest.mark.parametrize("slug", paper_slugs())
def test_paper_parameters_validate(paper_config, slug):
    parameters, _ = paper_config
    pipeline = importlib.import_module(f"paper_pipelines.pipelines.{slug}").create_pipeline()
    check_parameters({slug: parameters[slug]}, [pipeline], paper_slugs())


def test_paper_catalog_builds(paper_config, tmp_path):
    _, catalog = paper_config
    built = DataCatalog.from_config(catalog)  # constructs every entry without loading any
    assert "run_record" in built


SIDE_ENVS = sorted(
    p.name
    for p in (PROJECT_ROOT / "conf").iterdir()
    if p.is_dir() and p.name not in ("base", "local")
)


@pytest.mark.parametrize("env", SIDE_ENVS)
def test_every_side_environment_validates_for_the_papers_it_sets(env):
    args = {k: v for k, v in CONFIG_LOADER_ARGS.items() if k != "default_run_env"}
    parameters = OmegaConfigLoader(str(PROJECT_ROOT / "conf"), env=env, **args)["parameters"]
    folder = PROJECT_ROOT / "conf" / env / "parameters"
    slugs = sorted(p.stem for p in folder.glob("*.yml")) if folder.is_dir() else []
    known = {**{s: f"paper_pipelines.pipelines.{s}" for s in paper_slugs()}, **OPTIONAL_PIPELINES}
    assert set(slugs) <= set(known), (
        f"conf/{env}/parameters names no known paper or optional pipeline"
    )
    for slug in slugs:
        pipeline = importlib.import_module(known[slug]).create_pipeline()
        check_parameters({slug: parameters[slug]}, [pipeline], list(known))
