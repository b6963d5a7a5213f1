"""Every paper's fast run also passes at a seed other than the default, keeping its metrics contract.

Papers' own tests pin behaviour at the default seed; this one makes sure no pipeline depends on it.
"""

from __future__ import annotations

import importlib

import pandas as pd
import pytest

from paper_pipelines.pipeline_registry import paper_slugs
from tests.kedro_helpers import latest_json, make_project_copy, run_session, versions_of

OTHER_SEED = 7


@pytest.mark.parametrize("slug", paper_slugs())
def test_fast_run_at_another_seed_keeps_the_contract(tmp_path, slug):
    project = make_project_copy(tmp_path / "project")
    run_session(project, slug, env="fast", runtime_params={f"{slug}.seed": OTHER_SEED})
    report = importlib.import_module(f"paper_pipelines.pipelines.{slug}.report")
    reporting = project / "data/fast/08_reporting" / slug
    metrics = latest_json(reporting / "metrics.json")
    assert set(report.METRICS) <= set(metrics)
    claims_path = reporting / "claims.parquet"
    claims = pd.read_parquet(claims_path / versions_of(claims_path)[-1] / "claims.parquet")
    assert list(claims["claim"]) == [c.id for c in report.CLAIMS]
    record = latest_json(project / "data/fast/09_tracking/run_record.json")
    assert record["status"] == "success"
    assert record["runtime_params"] == {slug: {"seed": OTHER_SEED}}
