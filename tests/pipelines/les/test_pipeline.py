"""les end to end in the fast environment: outputs, contract, claims, and bad input that writes nothing."""

import shutil

import pandas as pd
import pytest
from pydantic import ValidationError

from paper_pipelines.common.params import ParameterError
from paper_pipelines.pipelines.les.parameters import (
    DataParams,
    LSOParams,
    OODParams,
    ScoreParams,
    TurboParams,
)
from tests.kedro_helpers import (
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "les"


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    run_session(project, SLUG, env="fast")
    return project


def _latest_parquet(path):
    return pd.read_parquet(path / versions_of(path)[-1] / path.name)


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / "data/fast"
    for name in (
        "08_reporting/les/metrics.json",
        "08_reporting/les/results.parquet",
        "08_reporting/les/claims.parquet",
        "08_reporting/les/auroc_plot.png",
        "08_reporting/les/lso_plot.png",
        "01_raw/les/expressions_table.parquet",
        "05_model_input/les/splits.npz",
        "06_models/les/vae_model.pt",
        "07_model_output/les/ood_scores_table.parquet",
        "07_model_output/les/auroc_table.parquet",
        "07_model_output/les/lso_trajectories_table.parquet",
        "07_model_output/les/score_cost.json",
        "07_model_output/les/training_curve.json",
    ):
        assert len(versions_of(root / name)) == 1, name


def test_ood_table_has_every_group_and_score(fast_run):
    table = _latest_parquet(fast_run / "data/fast/07_model_output/les/ood_scores_table.parquet")
    assert list(table["group"].value_counts().sort_index().items()) == [
        ("data", 16), ("far", 16), ("prior", 16)
    ]  # fmt: skip
    scores = ["les", "polarity", "likelihood", "prior", "train_distance", "uncertainty"]
    assert [c for c in table.columns if c not in ("group", "valid")] == scores
    assert table["valid"].dtype == bool
    assert table[["likelihood", "prior", "train_distance"]].notna().all().all()
    assert (table["prior"] <= 0).all() and (table["likelihood"] <= 0).all()


def test_lso_runs_cover_penalties_and_baselines(fast_run):
    runs = _latest_parquet(
        fast_run / "data/fast/07_model_output/les/lso_trajectories_table.parquet"
    )
    methods = ["none", "les", "likelihood", "prior", "lbfgs_bounded", "turbo"]
    assert list(dict.fromkeys(runs["method"])) == methods
    assert (runs.groupby("method").size() == 2 * 3).all()  # 2 rounds x 3 candidates
    assert runs["objective"][runs["valid"]].notna().all()


def test_metrics_keep_the_contract_and_every_claim_is_checked(fast_run):
    from paper_pipelines.pipelines.les.report import CLAIMS, METRICS

    metrics = latest_json(fast_run / "data/fast/08_reporting/les/metrics.json")
    assert set(METRICS) <= set(metrics)
    assert 0 <= metrics["valid_frac_les"] <= 1 and 0 <= metrics["valid_frac_none"] <= 1
    assert metrics["n_replicates"] == 1
    assert metrics["seconds_per_latent_les"] > metrics["seconds_per_latent_prior"]
    claims = _latest_parquet(fast_run / "data/fast/08_reporting/les/claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool
    assert list(claims["gates"]) == [c.gates for c in CLAIMS]
    results = _latest_parquet(fast_run / "data/fast/08_reporting/les/results.parquet")
    assert list(results["method"])[:4] == ["none", "les", "likelihood", "prior"]
    by_method = results.set_index("method")
    assert by_method.loc["les", "valid_frac_mean"] == metrics["valid_frac_les"]


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"les.score.fd_eps": 0.0}, r"les\.score\.fd_eps = 0\.0"),
        ({"les.lso.n_init": 10000}, r"les\.lso\.n_init = 10000 exceeds"),
        ({"les.lso.turbo.success_tolerance": 0}, r"les\.lso\.turbo\.success_tolerance = 0"),
        ({"les.lso.turbo.optimiser": "adam"}, r"unknown parameter les\.lso\.turbo\.optimiser"),
    ],
)
def test_bad_parameters_fail_before_anything_is_written(fast_run, override, message):
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises(ParameterError, match=message):
        run_session(fast_run, SLUG, env="fast", runtime_params=override)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all("les" not in str(p) for p in new), new


@pytest.mark.parametrize(
    ("model", "values", "message"),
    [
        (ScoreParams, {"fd_eps": -1e-4}, "greater than 0"),
        (LSOParams, {"alpha": -0.5}, "greater than or equal to 0"),
        (LSOParams, {"penalties": ["none", "les", "magic"]}, "penalties.2"),
        (
            LSOParams,
            {"penalties": ["none", "prior"]},
            r"must include none and les; \['les'\] missing",
        ),
        (ScoreParams, {"decoder_mode": "dropout"}, "decoder_mode"),
        (TurboParams, {"failure_tolerance": 0}, "greater than or equal to 1"),
        (TurboParams, {"initial_length": 2.0}, r"length_min < initial_length <= length_max"),
        (ScoreParams, {"jacobian": "autograd"}, "jacobian"),
        (OODParams, {"scores": ["les", "prior"]}, r"\['polarity', 'likelihood'\] missing"),
        (DataParams, {"max_len": 20}, "max_len"),
    ],
)
def test_bad_blocks_are_refused_with_the_key(model, values, message):
    with pytest.raises(ValidationError, match=message):
        model(**values)


def test_a_token_outside_the_vocabulary_fails_in_the_first_node(fast_run):
    env = fast_run / "conf/bad_tokens"
    shutil.rmtree(env, ignore_errors=True)
    shutil.copytree(fast_run / "conf/fast", env)
    (fast_run / "bad.csv").write_text("expression\nx+1\nsin(x)-2\n")
    (env / "catalog/les.yml").write_text(
        f"les.expressions_input:\n  type: pandas.CSVDataset\n  filepath: {fast_run / 'bad.csv'}\n"
    )
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    try:
        with pytest.raises(Exception, match=r"character '-' at position 6.*not in the grammar"):
            run_session(
                fast_run, SLUG, env="bad_tokens", runtime_params={"les.data.source": "catalog"}
            )
    finally:
        shutil.rmtree(env)
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all("les" not in str(p) for p in new), new
