"""End-to-end fast run through a real KedroSession, determinism and a bad-input run."""

import math

import pandas as pd
import pytest

from tests.kedro_helpers import files_under, latest_json, run_session, versions_of

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


def test_fast_run(project_copy):
    run_session(project_copy, "core_kernel", env="fast")
    out = project_copy / "data/fast/08_reporting/core_kernel"
    metrics = latest_json(out / "metrics.json")
    for key in CONTRACT:
        assert math.isfinite(metrics[key]), key
    # Core kernel (s = 40 on n = 300) reproduces all three algorithms' weights to < 2 %.
    for algorithm in ("mkkm", "simplemkkm", "latefusion"):
        assert metrics[f"weight_rel_error_{algorithm}"] < 0.02
    # ... and beats uniform sampling of the same size (spec check 3).
    assert metrics["weight_rel_error_simplemkkm"] < metrics["uniform_weight_rel_error_simplemkkm"]
    # Extension clusters as well as the full method (spec check 4, with its 0.03 margin).
    assert metrics["acc_core"] >= metrics["acc_full"] - 0.03
    assert metrics["acc_core_largest_n"] >= 0.9  # well-separated synthetic set, n = 5000
    assert metrics["speedup_simplemkkm_largest_n"] > 1.0

    results_version = versions_of(out / "results.parquet")[-1]
    results = pd.read_parquet(out / "results.parquet" / results_version / "results.parquet")
    assert {"method_name", "rel_error", "acc", "seconds"} <= set(results.columns)
    assert results.method_name.str.startswith("simplemkkm/projection").any()
    for plot in ("weight_error_plot.png", "timing_plot.png", "clustering_plot.png"):
        assert len(versions_of(out / plot)) == 1
    assert versions_of(
        project_copy / "data/fast/07_model_output/core_kernel/core_weights_table.parquet"
    )
    assert versions_of(project_copy / "data/fast/07_model_output/core_kernel/full_weights.json")

    # Determinism: a second run with the same seed gives the same numbers (timings aside).
    run_session(project_copy, "core_kernel", env="fast")
    versions = versions_of(out / "metrics.json")
    assert len(versions) == 2
    import json

    first, second = (
        json.loads((out / "metrics.json" / v / "metrics.json").read_text()) for v in versions
    )
    assert _untimed(first) == _untimed(second)


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("core_kernel.core.method", "svd", "core_kernel.core.method"),
        ("core_kernel.core.sizes_projection", [20, 40, 5000], "larger than the number of points"),
    ],
)
def test_bad_parameter_fails_before_writing(project_copy, key, value, message):
    before = files_under(project_copy / "data")
    with pytest.raises(Exception, match=message):
        run_session(project_copy, "core_kernel", env="fast", runtime_params={key: value})
    # Only the framework's run record (status: failed) may appear; no dataset of this paper.
    written = {
        p for p in files_under(project_copy / "data") - before if "09_tracking" not in p.parts
    }
    assert written == set()
