"""End-to-end: the fast Kedro run, its artefacts, determinism, and a bad parameter writing nothing."""

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError
from tests.kedro_helpers import files_under, latest_json, run_session, versions_of

CONTRACT = [
    "null_fpr_parametric",
    "null_fpr_oc",
    "null_fpr_naive",
    "power_parametric",
    "power_oc",
    "mean_seconds_per_test",
    "n_null_replications",
]
CV_KEYS = [
    "null_fpr_parametric_cv",
    "null_fpr_oc_cv",
    "null_fpr_naive_cv",
    "power_parametric_cv",
    "power_oc_cv",
    "real_rejection_parametric_cv",
    "real_rejection_oc_cv",
]
TIMING = ("seconds",)


def _latest(path):
    return path / versions_of(path)[-1] / path.name


def test_fast_run(project_copy):
    run_session(project_copy, "si_pipeline", env="fast")
    root = project_copy / "data/fast"
    metrics = latest_json(root / "08_reporting/si_pipeline/metrics.json")
    for key in CONTRACT:
        assert key in metrics, key
    assert metrics["n_null_replications"] == 20
    for key in CONTRACT[:5]:
        assert 0.0 <= metrics[key] <= 1.0
    assert 0.0 < metrics["mean_seconds_per_test"] < 5.0
    assert metrics["n_failed_tests"] == 0
    assert metrics["exactness_max_abs_diff"] <= 2e-3
    # CV inside the test (fast: op1 with lasso alpha in {0.08, 0.12}, 3 folds)
    assert metrics["n_null_replications_cv"] == 6 and metrics["n_failed_tests_cv"] == 0
    for key in CV_KEYS:
        assert 0.0 <= metrics[key] <= 1.0, key
    cv = latest_json(root / "07_model_output/si_pipeline/cv_choice.json")
    assert len(cv["candidates"]) == 2 and cv["chosen"] in cv["cv_error"]
    assert cv["cv_error"][cv["chosen"]] == min(cv["cv_error"].values())
    cv_rows = pd.read_parquet(
        _latest(root / "07_model_output/si_pipeline/cv_results_table.parquet")
    )
    assert sorted(cv_rows["feature"]) == cv["selection"]["features"]
    assert (cv_rows["candidate"] == cv["chosen"]).all()
    assert cv_rows["p_value"].between(0, 1).all() and cv_rows["p_oc"].between(0, 1).all()
    cv_p = pd.read_parquet(_latest(root / "07_model_output/si_pipeline/cv_pvalues_table.parquet"))
    assert set(cv_p["experiment"]) == {"null", "power", "real"}
    assert set(cv_p["candidate"]) <= set(cv["cv_error"])

    results = pd.read_parquet(_latest(root / "08_reporting/si_pipeline/results.parquet"))
    assert list(results["method"]) == ["parametric", "over_conditioning", "naive"]
    si = pd.read_parquet(_latest(root / "07_model_output/si_pipeline/si_results_table.parquet"))
    assert set(si["dag"]) == {"op1", "op2"}
    assert ((si["inf_p"] <= si["p_value"] + 1e-12) & (si["p_value"] <= si["sup_p"] + 1e-12)).all()
    assert si["p_value"].between(0, 1).all() and si["p_oc"].between(0, 1).all()
    spec = latest_json(root / "07_model_output/si_pipeline/fs_spec.json")
    assert spec["op1"]["namespace"] == "si_pipeline.op1"
    assert sorted(spec["op2"]["selection"]["features"]) == sorted(
        si.loc[si["dag"] == "op2", "feature"].tolist()
    )
    for name in ("null_qq_plot.png", "power_plot.png"):
        assert len(versions_of(root / "08_reporting/si_pipeline" / name)) == 1
    for name in (
        "analysed_data_table.parquet",
        "null_pvalues_table.parquet",
        "power_table.parquet",
        "real_table.parquet",
        "calibration.json",
    ):
        assert len(versions_of(root / "07_model_output/si_pipeline" / name)) == 1, name

    # determinism: a second run with the same seeds gives the same metrics (CPU timings aside)
    run_session(project_copy, "si_pipeline", env="fast")
    versions = versions_of(root / "08_reporting/si_pipeline/metrics.json")
    assert len(versions) == 2
    import json

    first, second = (
        json.loads(
            (root / "08_reporting/si_pipeline/metrics.json" / v / "metrics.json").read_text()
        )
        for v in versions
    )
    strip = lambda m: {k: v for k, v in m.items() if not any(t in k for t in TIMING)}  # noqa: E731
    assert strip(first) == strip(second)


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("si_pipeline.inference.search_strategy", "pi9", "si_pipeline.inference.search_strategy"),
        ("si_pipeline.data.missing_rate", 1.5, "si_pipeline.data.missing_rate"),
        ("si_pipeline.cv.folds", 1, "si_pipeline.cv.folds"),
        ("si_pipeline.cv.condition_on", "winner", "si_pipeline.cv.condition_on"),
        ("si_pipeline.cv.dags", ["op7"], "si_pipeline.cv.dags"),
        ("si_pipeline.cv.grid", {"op1": {"lasso": {"alpha": [-1.0]}}}, "cv.grid.op1"),
        ("si_pipeline.cv.grid", {"op1": {"lasso": {"beta": [1.0]}}}, "cv.grid"),
    ],
)
def test_bad_parameter_fails_and_writes_nothing(project_copy, key, value, message):
    before = files_under(project_copy / "data")
    with pytest.raises(ParameterError, match=message):
        run_session(project_copy, "si_pipeline", env="fast", runtime_params={key: value})
    after = {p for p in files_under(project_copy / "data") if "09_tracking" not in str(p)}
    assert after == before
