"""End-to-end: the srca pipeline in the fast environment through a real KedroSession."""

import json

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError
from paper_pipelines.pipelines.srca import nodes
from tests.kedro_helpers import files_under, latest_json, run_session, versions_of

CONTRACT = [
    "mse_ratio_srca_over_pca_circle_k1",
    "mse_ratio_srca_over_pca_co2_k1",
    "phase_recovery_circle",
    "max_ratio_srca_over_pca_flat",
    "coranking_auc_srca_sphere",
    "coranking_auc_pca_sphere",
]


def test_fast_run_outputs_checks_and_determinism(project_copy):
    run_session(project_copy, "srca", env="fast")
    reporting = project_copy / "data/fast/08_reporting/srca"
    metrics_path = reporting / "metrics.json"
    metrics = latest_json(metrics_path)
    assert set(CONTRACT) <= set(metrics)
    assert all(np.isfinite(metrics[key]) for key in CONTRACT)
    # The spec's checks that hold at fast scale.
    assert metrics["exact_sphere_mse"] < 1e-8  # check 1
    assert metrics["exact_sphere_radius_error"] < 1e-4
    assert metrics["exact_sphere_center_error"] < 1e-4
    assert metrics["mse_ratio_srca_over_pca_circle_k1"] <= 0.2  # check 3
    assert metrics["phase_recovery_circle"] >= 0.95
    assert metrics["mse_ratio_srca_over_pca_co2_k1"] <= 0.25
    assert metrics["max_ratio_srca_over_pca_flat"] <= 1.01  # check 4
    assert metrics["oos_mse_ratio_srca_over_pca_circle_k1"] < 1  # check 5
    assert metrics["oos_mse_ratio_srca_over_pca_co2_k1"] < 1
    assert metrics["coranking_auc_srca_sphere"] >= 0.95  # check 6
    assert metrics["coranking_auc_srca_sphere"] >= metrics["coranking_auc_pca_sphere"] + 0.3

    # Versioned artefacts: results, tables, models, figures.
    results_dir = reporting / "results.parquet"
    results = pd.read_parquet(results_dir / versions_of(results_dir)[-1] / "results.parquet")
    assert {"SRCA", "PCA", "Spherelets", "Isomap"} <= set(results["method"])
    assert "mse_circle_k1" in results.columns
    for name in ("embedding_plot.png", "mse_plot.png", "coranking_plot.png"):
        assert len(versions_of(reporting / name)) == 1, name
    model_out = project_copy / "data/fast/07_model_output/srca"
    for name in ("mse_table.parquet", "coranking_table.parquet", "phase_table.parquet"):
        assert len(versions_of(model_out / name)) == 1, name
    mse = pd.read_parquet(
        model_out
        / "mse_table.parquet"
        / versions_of(model_out / "mse_table.parquet")[0]
        / "mse_table.parquet"
    )
    assert set(mse.evaluation) == {"in_sample", "out_of_sample"}
    models_dir = project_copy / "data/fast/05_model_input/srca"
    for name in ("srca_models.pkl", "baseline_models.pkl", "datasets.pkl", "srca_embeddings.pkl"):
        assert len(versions_of(models_dir / name)) == 1, name

    # Determinism: a second run with the same seeds gives the same metrics, as a new version.
    run_session(project_copy, "srca", env="fast")
    assert len(versions_of(metrics_path)) == 2
    first, second = (
        json.loads((metrics_path / v / "metrics.json").read_text())
        for v in versions_of(metrics_path)
    )
    assert first == second


def test_bad_parameter_fails_naming_key_and_writes_nothing(project_copy):
    before = files_under(project_copy / "data")
    with pytest.raises(Exception) as info:
        run_session(
            project_copy,
            "srca",
            env="fast",
            runtime_params={"srca.data.circle.D": 1},
        )
    assert "srca.data.circle.D" in str(info.value)
    written = files_under(project_copy / "data") - before
    # only the failed run's record may appear; no pipeline output
    assert all("09_tracking" in str(p) for p in written), written


def test_bad_model_parameter_names_allowed_values():
    with pytest.raises(ParameterError, match="srca.model.subset_search"):
        nodes.fit_srca_models({}, {"k": {"circle": [1]}, "subset_search": "bogus"})
    with pytest.raises(ParameterError, match=r"srca.model.*k\[circle\]"):
        nodes.fit_srca_models({}, {"k": {"circle": [0]}})


def test_nan_and_constant_columns_fail_in_preprocess():
    raw = {"wine": {"X": np.array([[1.0, 2.0], [np.nan, 1.0], [3.0, 0.0]])}}
    with pytest.raises(ValueError, match="NaN"):
        nodes.prepare_datasets(raw, {"standardise": ["wine"]})
    raw = {"wine": {"X": np.array([[1.0, 2.0], [2.0, 2.0], [3.0, 2.0]])}}
    with pytest.raises(ValueError, match="constant columns \\[1\\]"):
        nodes.prepare_datasets(raw, {"standardise": ["wine"]})
