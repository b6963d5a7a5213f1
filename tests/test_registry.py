"""Every paper folder registers as a pipeline under its own namespace, and config exists for it."""

import re

import pytest
from kedro.framework.project import configure_project, pipelines

from paper_pipelines.common.claims import Claim
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
    assert f"{slug}.claims" in outputs, "the claims table (common.claims.evaluate_claims)"
    assert any(name.endswith("_plot") for name in outputs), "at least one versioned figure"


def test_unknown_pipeline_names_the_known_ones():
    configure_project("paper_pipelines")
    pipelines.set_requested(["no_such_paper"])
    try:
        with pytest.raises(KeyError, match=r"Unknown pipeline\(s\) \['no_such_paper'\].*dlp"):
            register_pipelines()
    finally:
        pipelines.set_requested(None)


# The one shape every paper folder has (shared/conventions.md, "Layout"); a new paper gets it from
# `kedro pipeline create <slug>` (templates/pipeline/).
ROOM_FILES = (
    "__init__.py",
    "pipeline.py",
    "parameters.py",
    "nodes.py",
    "data.py",
    "metrics.py",
    "report.py",
    "figures.py",
)


@pytest.mark.parametrize("slug", paper_slugs())
def test_each_paper_folder_has_the_house_shape(slug):
    room = PROJECT_ROOT / "src/paper_pipelines/pipelines" / slug
    missing = [name for name in ROOM_FILES if not (room / name).is_file()]
    assert not missing, f"{slug} lacks {missing} (see templates/pipeline/)"
    concept = [p.name for p in room.glob("*.py") if p.name not in (*ROOM_FILES, "baselines.py")]
    assert concept, f"{slug} has no method module named after the paper's concepts"
    for name in ("nodes.py", "pipeline.py", "figures.py"):
        text = (room / name).read_text()
        assert "matplotlib.use" not in text and "pyplot" not in text, f"{slug}/{name} uses pyplot"
        assert "validate_params(" not in text, f"{slug}/{name} re-validates a block"
    from importlib import import_module

    report = import_module(f"paper_pipelines.pipelines.{slug}.report")
    assert isinstance(report.METRICS, tuple) and report.METRICS, f"{slug}.report.METRICS"
    assert report.CLAIMS and all(isinstance(c, Claim) for c in report.CLAIMS), f"{slug} CLAIMS"
    ids = [c.id for c in report.CLAIMS]
    assert len(set(ids)) == len(ids), f"{slug}: claim ids repeat"
    for env in ("base", "fast", "paper"):
        assert (PROJECT_ROOT / f"conf/{env}/parameters/{slug}.yml").is_file(), (env, slug)
    assert (PROJECT_ROOT / f"docs/papers/{slug}.md").is_file()
    readme_rows = [
        line
        for line in (PROJECT_ROOT / "README.md").read_text().splitlines()
        if line.startswith(f"| `{slug}` |")
    ]
    assert len(readme_rows) == 1 and "implemented" in readme_rows[0], f"README row of {slug}"


@pytest.mark.parametrize("slug", paper_slugs())
def test_pipeline_has_four_stages_and_node_names_are_function_names(registry, slug):
    text = (PROJECT_ROOT / "src/paper_pipelines/pipelines" / slug / "pipeline.py").read_text()
    stages = [line.strip() for line in text.splitlines() if line.strip().startswith("# ")]
    assert stages and stages[0] == "# ingest" and "# evaluate" in stages, stages
    assert "# preprocess" in stages, stages
    for node in registry[slug].nodes:
        func = getattr(node.func, "__name__", None)
        assert node.name.rsplit(".", 1)[-1] == func, (node.name, func)


@pytest.mark.parametrize("slug", paper_slugs())
def test_every_figure_has_its_own_node(registry, slug):
    for node in registry[slug].nodes:
        plots = [o for o in node.outputs if o.endswith("_plot")]
        assert len(plots) <= 1 and (not plots or len(node.outputs) == 1), node.name


@pytest.fixture(scope="module")
def catalog_config():
    from kedro.config import OmegaConfigLoader
    from kedro.io.catalog_config_resolver import CatalogConfigResolver

    from paper_pipelines import settings

    loader = OmegaConfigLoader(str(PROJECT_ROOT / "conf"), **settings.CONFIG_LOADER_ARGS)
    return CatalogConfigResolver(loader["catalog"])


def ingest_functions(slug: str) -> set[str]:
    """Names of the node functions wired under pipeline.py's `# ingest` comment."""
    text = (PROJECT_ROOT / "src/paper_pipelines/pipelines" / slug / "pipeline.py").read_text()
    block = text.split("# ingest", 1)[1].split("# preprocess", 1)[0]
    return set(re.findall(r"Node\(\s*(?:\w+\.)?(\w+)", block))


@pytest.mark.parametrize("slug", paper_slugs())
def test_what_ingest_loads_or_generates_sits_in_an_early_layer(registry, catalog_config, slug):
    ingest = ingest_functions(slug)
    assert ingest, f"no node under {slug}'s `# ingest` comment"
    for node in registry[slug].nodes:
        if getattr(node.func, "__name__", None) not in ingest:
            continue
        for name in node.outputs:
            config = catalog_config.config.get(name) or catalog_config.resolve_pattern(name)
            if not config or config.get("type") in (
                None,
                "MemoryDataset",
                "kedro.io.MemoryDataset",
            ):
                continue
            layer = ((config.get("metadata") or {}).get("kedro-viz") or {}).get("layer")
            assert layer in ("raw", "intermediate", "primary"), (name, layer)
