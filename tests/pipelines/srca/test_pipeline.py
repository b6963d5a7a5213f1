"""srca end to end in the fast environment, through a real KedroSession in a project copy."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError, validate_params
from paper_pipelines.pipelines.srca import nodes
from paper_pipelines.pipelines.srca.parameters import (
    DataParams,
    EvaluationParams,
    ModelParams,
    PreprocessParams,
    check_across_blocks,
)
from paper_pipelines.pipelines.srca.report import CLAIMS, METRICS
from tests.kedro_helpers import (
    block_network,
    fast_seed_params,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

CONTRACT = [
    "mse_ratio_srca_over_pca_circle_k1",
    "mse_ratio_srca_over_pca_co2_k1",
    "phase_recovery_circle",
    "max_ratio_srca_over_pca_flat",
    "coranking_auc_srca_sphere",
    "coranking_auc_pca_sphere",
]


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below (about 10 s of pipeline time), with sockets blocked;
    at the default seed, or at PAPER_PIPELINES_FAST_SEED (tests.kedro_helpers.fast_seed_params)."""
    project = make_project_copy(tmp_path_factory.mktemp("srca") / "project")
    with block_network() as attempts:
        run_session(project, "srca", env="fast", runtime_params=fast_seed_params("srca"))
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _metrics(project):
    return latest_json(project / "data/fast/08_reporting/srca/metrics.json")


def test_metrics_keep_the_contract(fast_run):
    metrics = _metrics(fast_run)
    assert tuple(CONTRACT) == METRICS
    assert set(CONTRACT) <= set(metrics)
    assert all(np.isfinite(metrics[key]) for key in CONTRACT)


def test_exact_sphere_is_recovered(fast_run):  # spec check 1
    metrics = _metrics(fast_run)
    assert metrics["exact_sphere_mse"] < 1e-8
    assert metrics["exact_sphere_radius_error"] < 1e-4
    assert metrics["exact_sphere_center_error"] < 1e-4


def test_curved_data_beats_pca(fast_run):  # spec check 3
    metrics = _metrics(fast_run)
    assert metrics["mse_ratio_srca_over_pca_circle_k1"] <= 0.2
    assert metrics["phase_recovery_circle"] >= 0.95
    assert metrics["mse_ratio_srca_over_pca_co2_k1"] <= 0.25


def test_flat_tables_never_worse_than_pca(fast_run):  # spec check 4
    assert _metrics(fast_run)["max_ratio_srca_over_pca_flat"] <= 1.01


def test_out_of_sample_beats_pca(fast_run):  # spec check 5
    metrics = _metrics(fast_run)
    assert metrics["oos_mse_ratio_srca_over_pca_circle_k1"] < 1
    assert metrics["oos_mse_ratio_srca_over_pca_co2_k1"] < 1


def test_coranking_on_the_sphere(fast_run):  # spec check 6
    metrics = _metrics(fast_run)
    assert metrics["coranking_auc_srca_sphere"] >= 0.95
    assert metrics["coranking_auc_srca_sphere"] >= metrics["coranking_auc_pca_sphere"] + 0.3


def test_results_table_has_one_row_per_method(fast_run):
    results_dir = fast_run / "data/fast/08_reporting/srca/results.parquet"
    results = pd.read_parquet(results_dir / versions_of(results_dir)[-1] / "results.parquet")
    assert {"SRCA", "PCA", "Spherelets", "Isomap"} <= set(results["method"])
    assert results["method"].is_unique and results.columns[0] == "method"
    assert "mse_circle_k1" in results.columns


def test_claims_table_holds_where_the_fast_run_checks(fast_run):
    path = fast_run / "data/fast/08_reporting/srca/claims.parquet"
    claims = pd.read_parquet(path / versions_of(path)[-1] / "claims.parquet").set_index("claim")
    assert list(claims.index) == [c.id for c in CLAIMS]
    # the fast run has no cell-cycle data and CO2 only at k = 1: those two claims cannot hold there
    unchecked = {"cellcycle_order", "co2_loop_k2_beats_pca"}
    assert claims.drop(index=list(unchecked))["holds"].all()
    assert not claims.loc[list(unchecked), "holds"].any()


def test_versioned_artefacts(fast_run):
    reporting = fast_run / "data/fast/08_reporting/srca"
    for name in ("embedding_plot.png", "mse_plot.png", "coranking_plot.png"):
        assert len(versions_of(reporting / name)) == 1, name
    model_out = fast_run / "data/fast/07_model_output/srca"
    for name in ("mse_table.parquet", "coranking_table.parquet", "phase_table.parquet"):
        assert len(versions_of(model_out / name)) == 1, name
    mse = pd.read_parquet(
        model_out
        / "mse_table.parquet"
        / versions_of(model_out / "mse_table.parquet")[0]
        / "mse_table.parquet"
    )
    assert set(mse.evaluation) == {"in_sample", "out_of_sample"}
    models_dir = fast_run / "data/fast/05_model_input/srca"
    for name in ("srca_models.npz", "srca_embeddings.npz"):
        assert len(versions_of(models_dir / name)) == 1, name
    assert len(versions_of(fast_run / "data/fast/01_raw/srca/datasets.npz")) == 1
    # scikit-learn's PCA fits go through skops, not pickle
    assert len(versions_of(fast_run / "data/fast/06_models/srca/baseline_models.skops")) == 1


def test_same_seed_same_metrics_as_a_new_version(fast_run):
    """Determinism: a second run with the same seed gives the same metrics, as a new version."""
    metrics_path = fast_run / "data/fast/08_reporting/srca/metrics.json"
    first = _metrics(fast_run)
    run_session(fast_run, "srca", env="fast", runtime_params=fast_seed_params("srca"))
    assert len(versions_of(metrics_path)) == 2
    assert _metrics(fast_run) == first


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


def test_coranking_k_without_a_fit_fails_before_any_node(project_copy):
    before = files_under(project_copy / "data")
    with pytest.raises(Exception, match=r"srca\.evaluation\.coranking_k = 1 .*srca\.model\.k"):
        run_session(
            project_copy, "srca", env="fast", runtime_params={"srca.evaluation.coranking_k": 1}
        )
    written = files_under(project_copy / "data") - before
    assert all("09_tracking" in str(p) for p in written), written


def test_every_data_set_needs_its_k():
    blocks = {
        "data": DataParams(datasets=["circle", "iris"]),
        "model": ModelParams(k={"circle": [1]}),
        "evaluation": EvaluationParams(),
    }
    with pytest.raises(ValueError, match=r"srca\.model\.k has no entry .*\['iris'\]"):
        check_across_blocks(blocks)
    check_across_blocks({**blocks, "model": ModelParams(k={"circle": [1], "iris": [1]})})


def test_bad_model_parameter_names_allowed_values():
    with pytest.raises(ParameterError, match="srca.model.subset_search"):
        validate_params(ModelParams, {"k": {"circle": [1]}, "subset_search": "bogus"}, "srca.model")
    with pytest.raises(ParameterError, match=r"srca.model.*k\[circle\]"):
        validate_params(ModelParams, {"k": {"circle": [0]}}, "srca.model")


def test_nan_and_constant_columns_fail_in_preprocess():
    standardise_wine = PreprocessParams(standardise=["wine"])
    raw = {"wine": {"X": np.array([[1.0, 2.0], [np.nan, 1.0], [3.0, 0.0]])}}
    with pytest.raises(ValueError, match="NaN"):
        nodes.prepare_datasets(raw, standardise_wine, 0)
    raw = {"wine": {"X": np.array([[1.0, 2.0], [2.0, 2.0], [3.0, 2.0]])}}
    with pytest.raises(ValueError, match="constant columns \\[1\\]"):
        nodes.prepare_datasets(raw, standardise_wine, 0)


def test_metrics_of_another_data_set_selection_are_strict_json_with_keys_per_data_set():
    """A run without the contract's data sets still writes valid JSON (null, never NaN), and every data
    set the co-ranking evaluated gets its own keys."""
    import json

    from paper_pipelines.pipelines.srca.parameters import EvaluationParams
    from paper_pipelines.pipelines.srca.report import build_metrics

    mse = pd.DataFrame(columns=["dataset", "k", "method", "evaluation", "mse"])
    coranking = pd.DataFrame(
        {
            "dataset": ["circle", "circle", "wine"],
            "method": ["SRCA", "t-SNE", "PCA"],
            "auc_weighted": [0.9, 0.7, 0.5],
        }
    )
    phase = pd.DataFrame(columns=["dataset", "method", "evaluation", "phase_recovery"])
    metrics = build_metrics(mse, coranking, phase, {}, {}, EvaluationParams())
    json.dumps(metrics, allow_nan=False)  # raises on a bare NaN
    assert metrics["coranking_auc_srca_circle"] == 0.9
    assert metrics["coranking_auc_t_sne_circle"] == 0.7
    assert metrics["coranking_auc_pca_wine"] == 0.5
    assert metrics["coranking_auc_srca_sphere"] is None and metrics["phase_recovery_circle"] is None


def test_user_table_from_a_local_catalog_entry_runs_and_a_missing_one_writes_nothing(project_copy):
    """`user` in srca.data.datasets reads the srca.user_table entry; without one the first node fails
    with the fix and nothing is written."""
    params = {
        "srca.data.datasets": ["user"],
        "srca.model.k": {"user": [1]},
        "srca.evaluation.coranking_datasets": [],
        "srca.evaluation.flat_datasets": [],
    }
    before = files_under(project_copy / "data")
    with pytest.raises(Exception, match="srca.user_table holds no table"):
        run_session(project_copy, "srca", env="fast", runtime_params=params)
    written = files_under(project_copy / "data") - before
    assert all("09_tracking" in str(p) for p in written), written  # the failed run's record only
    t = np.linspace(0, 2 * np.pi, 80, endpoint=False)
    pd.DataFrame({"a": 3 * np.cos(t), "b": 3 * np.sin(t), "c": 0.01 * t}).to_csv(
        project_copy / "data/user.csv", index=False
    )
    # conf/local/ in a default run; this run's env is fast, which replaces local
    local = project_copy / "conf/fast/catalog"
    local.mkdir(parents=True, exist_ok=True)
    (local / "srca_user.yml").write_text(
        "srca.user_table:\n  type: pandas.CSVDataset\n  filepath: data/user.csv\n"
    )
    run_session(project_copy, "srca", env="fast", runtime_params=params, to_nodes=["srca.fit_srca"])
    raw = project_copy / "data/fast/01_raw/srca/datasets.npz"
    from paper_pipelines.datasets import ArrayTreeDataset

    loaded = ArrayTreeDataset(filepath=str(raw / versions_of(raw)[0] / "datasets.npz")).load()
    assert loaded["user"]["X"].shape == (80, 3)
