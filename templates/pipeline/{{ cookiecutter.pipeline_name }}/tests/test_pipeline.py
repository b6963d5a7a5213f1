"""{{ cookiecutter.pipeline_name }} end to end in the fast environment, plus the method on a hand-checkable case."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.{{ cookiecutter.pipeline_name }} import method
from tests.kedro_helpers import latest_json, make_project_copy, run_session, versions_of

SLUG = "{{ cookiecutter.pipeline_name }}"


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    run_session(project, SLUG, env="fast")
    return project


def test_fast_run_writes_versioned_standard_outputs(fast_run):
    root = fast_run / "data/fast/08_reporting" / SLUG
    for name in ("metrics.json", "results.parquet", "claims.parquet", "error_plot.png"):
        assert len(versions_of(root / name)) == 1, name


def test_results_have_one_row_per_method(fast_run):
    path = fast_run / "data/fast/08_reporting" / SLUG / "results.parquet"
    results = pd.read_parquet(path / versions_of(path)[-1] / "results.parquet")
    assert list(results["method"]) == ["method", "mean"]


def test_metrics_keep_the_contract(fast_run):
    from paper_pipelines.pipelines.{{ cookiecutter.pipeline_name }}.report import METRICS

    metrics = latest_json(fast_run / "data/fast/08_reporting" / SLUG / "metrics.json")
    assert set(METRICS) <= set(metrics)


def test_every_claim_is_checked(fast_run):
    from paper_pipelines.pipelines.{{ cookiecutter.pipeline_name }}.report import CLAIMS

    path = fast_run / "data/fast/08_reporting" / SLUG / "claims.parquet"
    claims = pd.read_parquet(path / versions_of(path)[-1] / "claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool


def test_method_recovers_exact_weights_without_ridge():
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    assert np.allclose(method.fit(x, x @ np.array([2.0, -1.0]), ridge=0.0), [2.0, -1.0])
