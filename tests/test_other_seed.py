"""Every paper's fast run also passes at a seed other than the default, keeping its metrics contract.

Papers' own tests pin behaviour at the default seed; this one makes sure no pipeline depends on it.
"""

from __future__ import annotations

import pytest

from paper_pipelines.pipeline_registry import paper_slugs
from tests.kedro_helpers import (
    OTHER_SEED,
    PROJECT_ROOT,
    assert_other_seed_contract,
    make_project_copy,
    run_session,
)

# Papers whose own tests already make a fast run at OTHER_SEED (to show the seed moves the data) and
# check this same contract on it with assert_other_seed_contract: a second run here would repeat it.
COVERED_BY = {
    "ata": "tests/pipelines/ata/test_pipeline.py",
    "core_kernel": "tests/pipelines/core_kernel/test_pipeline.py",
    "si_pipeline": "tests/pipelines/si_pipeline/test_pipeline.py",
}


@pytest.mark.parametrize("slug", [s for s in paper_slugs() if s not in COVERED_BY])
def test_fast_run_at_another_seed_keeps_the_contract(tmp_path, slug):
    project = make_project_copy(tmp_path / "project")
    run_session(project, slug, env="fast", runtime_params={f"{slug}.seed": OTHER_SEED})
    assert_other_seed_contract(project, slug)


@pytest.mark.parametrize("slug", sorted(COVERED_BY))
def test_the_papers_left_out_check_the_contract_in_their_own_tests(slug):
    assert slug in paper_slugs()
    source = (PROJECT_ROOT / COVERED_BY[slug]).read_text()
    assert "OTHER_SEED" in source and "assert_other_seed_contract(" in source
