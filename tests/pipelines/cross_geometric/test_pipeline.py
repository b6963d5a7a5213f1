"""cross_geometric end to end in the fast environment, through a real KedroSession in a project copy."""

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError
from tests.kedro_helpers import (
    block_network,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "cross_geometric"


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below (about 10 s of pipeline time), sockets blocked."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest(path):
    return pd.read_parquet(path / versions_of(path)[-1] / path.name)


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / "data/fast"
    for name in (
        "08_reporting/cross_geometric/metrics.json",
        "08_reporting/cross_geometric/results.parquet",
        "08_reporting/cross_geometric/claims.parquet",
        "08_reporting/cross_geometric/gate_plot.png",
        "08_reporting/cross_geometric/auc_plot.png",
        "01_raw/cross_geometric/events_table.parquet",
        "05_model_input/cross_geometric/snapshots.npz",
        "05_model_input/cross_geometric/tree_scores.npz",
        "05_model_input/cross_geometric/evaluation_edges.npz",
        "06_models/cross_geometric/hybrid_gate_model.pt",
        "06_models/cross_geometric/euclid_model.pt",
        "06_models/cross_geometric/static_gae_model.pt",
        "07_model_output/cross_geometric/hybrid_gate_log_table.parquet",
        "07_model_output/cross_geometric/gate_table.parquet",
    ):
        assert len(versions_of(root / name)) == 1, name


def test_results_cover_every_method_source_and_seed(fast_run):
    results = _latest(fast_run / "data/fast/08_reporting/cross_geometric/results.parquet")
    runs = set(zip(results["method"], results["source"], results["seed"], strict=True))
    for method in ("euclid", "hyperbolic", "hybrid_gate", "static_gae"):
        for source in ("mixed_synthetic", "collegemsg"):
            assert {(method, source, 0), (method, source, 1)} <= runs
    assert ("hybrid_const", "mixed_synthetic", 1) in runs and (
        "hybrid_const",
        "collegemsg",
        0,
    ) not in runs  # noqa: E501
    assert ("euclid", "pure_euclidean", 0) in runs and (
        "no_tree_score",
        "mixed_synthetic",
        0,
    ) in runs
    assert results["auc"].between(0, 1).all() and results["ap"].between(0, 1).all()


def test_metrics_keep_the_contract_and_every_claim_is_checked(fast_run):
    from paper_pipelines.pipelines.cross_geometric.report import CLAIMS, METRICS

    metrics = latest_json(fast_run / "data/fast/08_reporting/cross_geometric/metrics.json")
    assert set(METRICS) <= set(metrics) and metrics["n_seeds"] == 2
    assert all(isinstance(metrics[k], float) for k in METRICS)
    claims = _latest(fast_run / "data/fast/08_reporting/cross_geometric/claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool and list(claims["gates"]) == [c.gates for c in CLAIMS]
    assert claims.set_index("claim").loc["pubmed_hybrid_not_below_euclid", "holds"] == False  # noqa: E712


def test_gate_table_has_both_regions(fast_run):
    gates = _latest(fast_run / "data/fast/07_model_output/cross_geometric/gate_table.parquet")
    mixed = gates[gates["source"] == "mixed_synthetic"]
    assert set(mixed["region"]) == {"hyperbolic", "euclidean"}
    assert mixed["gate"].between(0, 1).all() and (mixed["tree_score"] >= 0).all()


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"cross_geometric.snapshots.test_length": 4},
            r"fewer than cross_geometric\.snapshots\.test_length \+ 2",
        ),  # noqa: E501
        ({"cross_geometric.geometry.curvature": 0.0}, r"cross_geometric\.geometry\.curvature"),
        (
            {"cross_geometric.data.sources": ["mixed_synthetic", "htgn_file"]},
            r"htgn_snapshots holds no HTGN",
        ),  # noqa: E501
    ],
)
def test_bad_input_fails_clearly_and_writes_nothing(fast_run, override, message):
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises((ParameterError, ValueError), match=message):
        run_session(fast_run, SLUG, env="fast", runtime_params=override)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all("cross_geometric" not in str(p) for p in new), new
