"""si_pipeline end to end in the fast environment, through a real KedroSession in a project copy:
its artefacts, determinism, the seed, and bad parameters writing nothing."""

import json

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError
from paper_pipelines.pipelines.si_pipeline.report import CLAIMS, METRICS
from tests.kedro_helpers import (
    OTHER_SEED,
    assert_other_seed_contract,
    fast_seed_params,
    files_under,
    make_project_copy,
    run_session,
    versions_of,
)

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
OUT = "07_model_output/si_pipeline"
REPORTING = "08_reporting/si_pipeline"


def _first(path):
    """The first run's version of a versioned dataset (runs 1 and 2: seed 0; run 3: OTHER_SEED)."""
    return path / versions_of(path)[0] / path.name


def _first_json(path) -> dict:
    return json.loads(_first(path).read_text())


def _strip(metrics: dict) -> dict:
    """Metrics without CPU timings (they differ between runs)."""
    return {k: v for k, v in metrics.items() if not any(t in k for t in TIMING)}


def _metrics_versions(root) -> list[dict]:
    path = root / REPORTING / "metrics.json"
    return [json.loads((path / v / "metrics.json").read_text()) for v in versions_of(path)]


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """Two fast runs with the same seed (for determinism), then one at tests.test_other_seed's
    OTHER_SEED (that test leaves si_pipeline to this module); about 30 s in all. The first two are at
    PAPER_PIPELINES_FAST_SEED when it is set (tests.kedro_helpers.fast_seed_params)."""
    project = make_project_copy(tmp_path_factory.mktemp("si_pipeline") / "project")
    run_session(project, "si_pipeline", env="fast", runtime_params=fast_seed_params("si_pipeline"))
    run_session(project, "si_pipeline", env="fast", runtime_params=fast_seed_params("si_pipeline"))
    run_session(project, "si_pipeline", env="fast", runtime_params={"si_pipeline.seed": OTHER_SEED})
    return project


@pytest.fixture(scope="module")
def root(fast_run):
    return fast_run / "data/fast"


def test_metrics_keep_their_contract(root):
    metrics = _first_json(root / REPORTING / "metrics.json")
    for key in [*CONTRACT, *METRICS]:
        assert key in metrics, key
    assert metrics["n_null_replications"] == 10
    for key in CONTRACT[:5]:
        assert 0.0 <= metrics[key] <= 1.0
    assert 0.0 < metrics["mean_seconds_per_test"] < 5.0
    assert metrics["n_failed_tests"] == 0
    assert metrics["exactness_max_abs_diff"] <= 2e-3


def test_cv_inside_the_test(root):
    """fast: op1 with lasso alpha in {0.08, 0.12}, 3 folds."""
    metrics = _first_json(root / REPORTING / "metrics.json")
    assert metrics["n_null_replications_cv"] == 4 and metrics["n_failed_tests_cv"] == 0
    for key in CV_KEYS:
        assert 0.0 <= metrics[key] <= 1.0, key
    cv = _first_json(root / OUT / "cv_choice.json")
    assert len(cv["candidates"]) == 2 and cv["chosen"] in cv["cv_error"]
    assert cv["cv_error"][cv["chosen"]] == min(cv["cv_error"].values())
    cv_rows = pd.read_parquet(_first(root / OUT / "cv_results_table.parquet"))
    assert sorted(cv_rows["feature"]) == cv["selection"]["features"]
    assert (cv_rows["candidate"] == cv["chosen"]).all()
    assert cv_rows["p_value"].between(0, 1).all() and cv_rows["p_oc"].between(0, 1).all()
    cv_p = pd.read_parquet(_first(root / OUT / "cv_pvalues_table.parquet"))
    assert set(cv_p["experiment"]) == {"null", "power", "real"}
    assert set(cv_p["candidate"]) <= set(cv["cv_error"])


def test_results_table_has_one_row_per_method(root):
    results = pd.read_parquet(_first(root / REPORTING / "results.parquet"))
    assert list(results["method"]) == ["parametric", "over_conditioning", "naive"]
    assert results["null_fpr"].between(0, 1).all()


def test_selective_tests_of_the_declared_dags(root):
    si = pd.read_parquet(_first(root / OUT / "si_results_table.parquet"))
    assert set(si["dag"]) == {"op1", "op2"}
    assert ((si["inf_p"] <= si["p_value"] + 1e-12) & (si["p_value"] <= si["sup_p"] + 1e-12)).all()
    assert si["p_value"].between(0, 1).all() and si["p_oc"].between(0, 1).all()
    spec = _first_json(root / OUT / "fs_spec.json")
    assert spec["op1"]["namespace"] == "si_pipeline.op1"
    assert sorted(spec["op2"]["selection"]["features"]) == sorted(
        si.loc[si["dag"] == "op2", "feature"].tolist()
    )
    lasso = next(n for n in spec["op1"]["nodes"] if n["component"] == "lasso")
    assert lasso["hyperparameters"] == {"params:si_pipeline.op1.lasso.alpha": 0.08}


def test_every_artefact_is_versioned(root):
    for name in (
        "null_qq_plot.png",
        "power_plot.png",
        "metrics.json",
        "results.parquet",
        "claims.parquet",
    ):
        assert len(versions_of(root / REPORTING / name)) == 3, name
    for name in (
        "analysed_data_table.parquet",
        "null_pvalues_table.parquet",
        "power_table.parquet",
        "real_table.parquet",
        "calibration.json",
    ):
        assert len(versions_of(root / OUT / name)) == 3, name
    raw = root / "01_raw/si_pipeline/demo_truth.json"  # ingest output: the raw layer
    assert len(versions_of(raw)) == 3
    truth = _first_json(raw)
    assert truth["support"] == [0, 1, 2] and len(truth["outliers"]) == 5


def test_claims_table_reports_every_claim(root):
    """Fast scale runs op1 only: op1's claims are evaluated, op2's are reported as not holding."""
    claims = pd.read_parquet(_first(root / REPORTING / "claims.parquet")).set_index("claim")
    assert list(claims.index) == [c.id for c in CLAIMS]
    assert claims["holds"].map(type).eq(bool).all()
    assert claims.loc["exactness", "holds"]
    assert not claims.loc["validity_op2", "holds"] and "None" in claims.loc["validity_op2", "ours"]


def test_same_seed_gives_same_metrics(root):
    """Determinism: a second run with the same seed gives the same metrics (CPU timings aside)."""
    first, second, _ = _metrics_versions(root)
    assert _strip(first) == _strip(second)


def test_another_seed_changes_the_data(root):
    """si_pipeline.seed drives every stream: OTHER_SEED gives other demo data and null datasets."""
    first, _, other = _metrics_versions(root)
    assert _strip(first) != _strip(other)
    tables = versions_of(root / OUT / "null_pvalues_table.parquet")
    path = root / OUT / "null_pvalues_table.parquet"
    first, other = (pd.read_parquet(path / v / path.name) for v in (tables[0], tables[-1]))
    assert not first["p_parametric"].equals(other["p_parametric"])
    data = root / OUT / "analysed_data_table.parquet"
    versions = versions_of(data)
    a, b = (pd.read_parquet(data / v / data.name) for v in (versions[0], versions[-1]))
    assert not a["x0"].equals(b["x0"])


def test_the_run_at_another_seed_keeps_the_contract(fast_run):
    """tests.test_other_seed's check, on this module's run at OTHER_SEED (the latest one)."""
    assert_other_seed_contract(fast_run, "si_pipeline", OTHER_SEED)


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
        ("si_pipeline.seed", -1, "si_pipeline.seed"),
        ("si_pipeline.op2.soft_ipod", {"lam": 0.02}, "si_pipeline.op2.soft_ipod"),
        ("si_pipeline.calibration.variants", ["op1", "op9"], "si_pipeline.calibration.variants"),
        ("si_pipeline.data", {"source": "diabetes", "n": 500}, "si_pipeline.data.n"),
    ],
)
def test_bad_parameter_fails_and_writes_nothing(project_copy, key, value, message):
    before = files_under(project_copy / "data")
    with pytest.raises(ParameterError, match=message):
        run_session(project_copy, "si_pipeline", env="fast", runtime_params={key: value})
    after = {p for p in files_under(project_copy / "data") if "09_tracking" not in str(p)}
    assert after == before
