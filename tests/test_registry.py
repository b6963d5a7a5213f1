"""Every paper folder registers as a pipeline under its own namespace, and config exists for it."""

import pytest
from kedro.framework.project import configure_project, pipelines

from paper_pipelines.pipeline_registry import MAIN_JOB, paper_slugs, register_pipelines
from tests.kedro_helpers import PROJECT_ROOT


@pytest.fixture(scope="module")
def registry():
    configure_project("paper_pipelines")
    pipelines.set_requested(None)
    return register_pipelines()


def test_every_paper_folder_is_registered(registry):
    slugs = paper_slugs()
    assert MAIN_JOB in slugs
    missing = [s for s in slugs if s not in registry or not registry[s].nodes]
    assert not missing, f"paper folders that did not register a pipeline: {missing}"


def test_default_pipeline_is_the_main_job_only(registry):
    assert registry["__default__"].nodes == registry[MAIN_JOB].nodes


@pytest.mark.parametrize("slug", paper_slugs())
def test_each_paper_is_its_own_namespace_with_named_nodes(registry, slug):
    for node in registry[slug].nodes:
        assert node.namespace == slug or node.namespace.startswith(f"{slug}."), node.name
        assert node.name.startswith(f"{slug}.") and "__" not in node.name, node.name
    for name in registry[slug].datasets():
        allowed = name.startswith((f"{slug}.", f"params:{slug}."))
        assert allowed or name in ("parameters", f"params:{slug}"), name


@pytest.mark.parametrize("slug", paper_slugs())
def test_each_paper_has_parameters_and_standard_outputs(registry, slug):
    assert (PROJECT_ROOT / "conf/base/parameters" / f"{slug}.yml").is_file()
    outputs = registry[slug].all_outputs()
    assert f"{slug}.metrics" in outputs and f"{slug}.results" in outputs
    assert any(name.endswith("_plot") for name in outputs), "at least one versioned figure"


def test_unknown_pipeline_names_the_known_ones():
    configure_project("paper_pipelines")
    pipelines.set_requested(["no_such_paper"])
    try:
        with pytest.raises(KeyError, match=r"Unknown pipeline\(s\) \['no_such_paper'\].*dlp"):
            register_pipelines()
    finally:
        pipelines.set_requested(None)
