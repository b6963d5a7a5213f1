"""core_kernel end to end in the fast environment, through a real KedroSession in a project copy."""

import json
import math

import pandas as pd
import pytest

from paper_pipelines.pipelines.core_kernel.report import METRICS
from tests.kedro_helpers import (
    OTHER_SEED,
    assert_other_seed_contract,
    block_network,
    fast_seed_params,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "core_kernel"
CONTRACT = (
    "weight_rel_error_mkkm",
    "weight_rel_error_simplemkkm",
    "weight_rel_error_latefusion",
    "uniform_weight_rel_error_simplemkkm",
    "speedup_simplemkkm_largest_n",
    "acc_full",
    "acc_core",
)
TIMING_KEYS = ("seconds", "speedup", "full_seconds_exponent")


def _untimed(metrics: dict) -> dict:
    return {k: v for k, v in metrics.items() if not any(t in k for t in TIMING_KEYS)}


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below (7-15 s of pipeline time), with sockets blocked; at the
    default seed, or at PAPER_PIPELINES_FAST_SEED (tests.kedro_helpers.fast_seed_params)."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast", runtime_params=fast_seed_params(SLUG))
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


@pytest.fixture(scope="module")
def metrics(fast_run):
    return latest_json(fast_run / "data/fast/08_reporting" / SLUG / "metrics.json")


def test_metrics_keep_the_contract(metrics):
    assert set(CONTRACT) <= set(METRICS)
    for key in CONTRACT:
        assert math.isfinite(metrics[key]), key


def test_core_kernel_reproduces_all_three_algorithms_weights(metrics):
    # Core kernel (s = 40 on n = 300) reproduces all three algorithms' weights to < 2 %.
    for algorithm in ("mkkm", "simplemkkm", "latefusion"):
        assert metrics[f"weight_rel_error_{algorithm}"] < 0.02


def test_projection_beats_uniform_sampling_of_the_same_size(metrics):
    # spec check 3
    assert metrics["weight_rel_error_simplemkkm"] < metrics["uniform_weight_rel_error_simplemkkm"]


def test_extension_clusters_as_well_as_full_mkc_and_scales(metrics):
    # spec check 4, with its 0.03 margin
    assert metrics["acc_core"] >= metrics["acc_full"] - 0.03
    assert metrics["acc_core_largest_n"] >= 0.9  # well-separated synthetic set, n = 5000
    assert metrics["speedup_simplemkkm_largest_n"] > 1.0


def test_results_have_one_row_per_method(fast_run):
    path = fast_run / "data/fast/08_reporting" / SLUG / "results.parquet"
    results = pd.read_parquet(path / versions_of(path)[-1] / "results.parquet")
    assert results.columns[0] == "method"
    assert list(results["method"]) == [
        "projection",
        "uniform",
        "leverage",
        "full_simplemkkm",
        "average_kernel",
        "best_single_kernel",
    ]
    assert {"weight_rel_error_simplemkkm", "acc", "seconds"} <= set(results.columns)
    by_method = results.set_index("method")
    assert by_method.loc["projection", "clustering"] == "core_projection_s40"
    assert by_method.loc["projection", "weight_rel_error_simplemkkm"] < 0.02
    assert (by_method["acc"].between(0, 1)).all()


def test_core_weights_table_holds_every_construction_size_and_draw(fast_run):
    path = fast_run / "data/fast/07_model_output" / SLUG / "core_weights_table.parquet"
    table = pd.read_parquet(path / versions_of(path)[-1] / "core_weights_table.parquet")
    assert {"algorithm", "method", "s", "draw", "rel_error", "seconds"} <= set(table.columns)
    projection = table[(table.algorithm == "simplemkkm") & (table.method == "projection")]
    assert sorted(projection.s) == [20, 40]  # conf/fast/parameters/core_kernel.yml
    assert set(table.method) == {"projection", "uniform", "leverage"}
    # The official discrete late fusion is reported beside the continuous one, on every construction.
    discrete = table[table.algorithm == "latefusion_discrete"]
    assert set(discrete.method) == {"projection", "uniform", "leverage"}
    assert (discrete.rel_error >= 0).all()


def test_discrete_late_fusion_is_reported_beside_the_continuous_one(fast_run, metrics):
    for key in (
        "weight_rel_error_latefusion_discrete",
        "uniform_weight_rel_error_latefusion_discrete",
    ):
        assert math.isfinite(metrics[key]), key
    path = fast_run / "data/fast/08_reporting" / SLUG / "results.parquet"
    results = pd.read_parquet(path / versions_of(path)[-1] / "results.parquet").set_index("method")
    assert results.loc["projection", "weight_rel_error_latefusion_discrete"] == pytest.approx(
        metrics["weight_rel_error_latefusion_discrete"]
    )


def test_claims_table_names_every_spec_check(fast_run):
    from paper_pipelines.pipelines.core_kernel.report import CLAIMS

    path = fast_run / "data/fast/08_reporting" / SLUG / "claims.parquet"
    claims = pd.read_parquet(path / versions_of(path)[-1] / "claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    held = claims.set_index("claim")["holds"]
    # the checks that hold at fast scale (n = 300, one draw), as the metrics tests above say
    for claim in ("core_weights_within_1pct", "projection_beats_uniform", "extension_matches_full"):
        assert held[claim], claim


def test_figures_and_intermediates_are_versioned(fast_run):
    root = fast_run / "data/fast"
    for plot in ("weight_error_plot.png", "timing_plot.png", "clustering_plot.png"):
        assert len(versions_of(root / "08_reporting" / SLUG / plot)) == 1, plot
    for name in ("core_weights_table.parquet", "full_weights.json", "timing_table.parquet"):
        assert versions_of(root / "07_model_output" / SLUG / name), name


def test_same_seed_same_metrics(fast_run, project_copy):
    """Determinism: a second run with the same seed gives the same numbers (timings aside)."""
    run_session(project_copy, SLUG, env="fast", runtime_params=fast_seed_params(SLUG))
    first = latest_json(fast_run / "data/fast/08_reporting" / SLUG / "metrics.json")
    second = latest_json(project_copy / "data/fast/08_reporting" / SLUG / "metrics.json")
    assert _untimed(first) == _untimed(second)


def test_the_one_seed_drives_the_data_subsample(fast_run, project_copy):
    """core_kernel.seed is the paper's only seed: another value draws another digits subsample.
    The run is at tests.test_other_seed's OTHER_SEED, whose contract check that test leaves to here."""
    run_session(project_copy, SLUG, env="fast", runtime_params={f"{SLUG}.seed": OTHER_SEED})
    assert_other_seed_contract(project_copy, SLUG, OTHER_SEED)
    frames = []
    for root in (fast_run, project_copy):
        path = root / "data/fast/01_raw" / SLUG / "features_table.parquet"
        frames.append(pd.read_parquet(path / versions_of(path)[-1] / "features_table.parquet"))
    assert frames[0].shape == frames[1].shape
    assert not frames[0].equals(frames[1])


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("core_kernel.core.method", "svd", "core_kernel.core.method"),
        ("core_kernel.core.sizes_projection", [20, 40, 5000], "larger than the number of points"),
        ("core_kernel.extension.s_sampling", 400, r"core_kernel\.extension\.s_sampling"),
        ("core_kernel.core.seeds", [0, 1], r"core_kernel\.core\.seeds"),
    ],
)
def test_bad_parameter_fails_before_writing(project_copy, key, value, message):
    before = files_under(project_copy / "data")
    with pytest.raises(Exception, match=message):
        run_session(project_copy, SLUG, env="fast", runtime_params={key: value})
    # Only the framework's run record (status: failed) may appear; no dataset of this paper.
    written = {
        p for p in files_under(project_copy / "data") - before if "09_tracking" not in p.parts
    }
    assert written == set()


def test_metrics_json_round_trips(fast_run):
    path = fast_run / "data/fast/08_reporting" / SLUG / "metrics.json"
    text = (path / versions_of(path)[-1] / "metrics.json").read_text()
    assert "NaN" not in text  # to_jsonable writes null, valid JSON for every reader
    assert json.loads(text)["default_s"] == 40
