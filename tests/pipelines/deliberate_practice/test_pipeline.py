"""deliberate_practice end to end in the fast environment, through a real KedroSession in a project copy."""

import shutil

import numpy as np
import pandas as pd
import pytest
from kedro.io.core import Version

from paper_pipelines.common.params import ParameterError
from paper_pipelines.datasets import ArrayTreeDataset, TorchDataset
from tests.kedro_helpers import (
    block_network,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "deliberate_practice"


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below, with sockets blocked (nothing may download)."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest(path):
    return path / versions_of(path)[-1] / path.name


def _table(fast_run, name):
    return pd.read_parquet(
        _latest(fast_run / "data/fast/07_model_output" / SLUG / f"{name}_table.parquet")
    )


def _arrays(fast_run, name):
    path = fast_run / "data/fast/05_model_input" / SLUG / f"{name}.npz"
    return ArrayTreeDataset(filepath=str(path), version=Version(None, None)).load()


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / "data/fast"
    for name in (
        "08_reporting/deliberate_practice/metrics.json",
        "08_reporting/deliberate_practice/results.parquet",
        "08_reporting/deliberate_practice/claims.parquet",
        "08_reporting/deliberate_practice/scaling_plot.png",
        "08_reporting/deliberate_practice/guidance_plot.png",
        "03_primary/deliberate_practice/real_splits.npz",
        "03_primary/deliberate_practice/ood_test.npz",
        "05_model_input/deliberate_practice/static_pools.npz",
        "05_model_input/deliberate_practice/dp_pool.npz",
        "06_models/deliberate_practice/generator_model.pt",
        "06_models/deliberate_practice/learner_model.pt",
        "06_models/deliberate_practice/reference.skops",
        "07_model_output/deliberate_practice/generator_report.json",
        "07_model_output/deliberate_practice/accuracy_curves_table.parquet",
    ):
        assert len(versions_of(root / name)) == 1, name


def test_metrics_keep_the_contract_and_every_claim_is_checked(fast_run):
    from paper_pipelines.pipelines.deliberate_practice.report import CLAIMS, METRICS

    metrics = latest_json(fast_run / "data/fast/08_reporting" / SLUG / "metrics.json")
    assert set(METRICS) <= set(metrics)
    assert metrics["replicates"] == 1 and metrics["max_iters"] == 200
    # fast scale: DP spends its 150-sample budget (n0 = 50 + two rounds of 50)
    assert metrics["samples_dp"] == 150
    assert 1 <= metrics["iters_to_pass_static_best"] <= 201
    claims = pd.read_parquet(_latest(fast_run / "data/fast/08_reporting" / SLUG / "claims.parquet"))
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool
    assert (
        claims.set_index("claim")
        .loc["imagenet100_ratios", "paper"]
        .startswith("samples_ratio_static_best_over_dp = 3.4")
    )


def test_curves_cover_every_strategy_on_the_evaluation_grid(fast_run):
    curves = _table(fast_run, "accuracy_curves")
    assert set(curves.strategy) == {"static", "dp", "prune", "real"}
    assert sorted(curves[curves.strategy == "dp"].omega.unique()) == [0.1, 0.2]
    for _, run in curves.groupby(["strategy", "omega", "n", "replicate"]):
        assert run.iteration.tolist() == list(range(20, 201, 20))
    assert curves[["val_acc", "test_acc", "ood_acc"]].stack().between(0, 1).all()
    # DP's static twin of equal size (150) was run, because static.sizes has only 50 and 100
    assert 150 in set(curves[curves.strategy == "static"].n)


def test_dp_pool_keeps_round_and_entropy_and_grows_by_delta_n(fast_run):
    pools = _arrays(fast_run, "dp_pool")
    assert set(pools) == {"omega0p1_rep0", "omega0p2_rep0"}
    pool = pools["omega0p1_rep0"]
    assert pool["x"].shape == (150, 1, 8, 8) and pool["x"].min() >= -1 and pool["x"].max() <= 1
    assert np.bincount(pool["round"]).tolist() == [50, 50, 50]
    assert np.isfinite(pool["entropy_at_generation"]).all()
    assert (pool["entropy_at_generation"] <= np.log(10) + 1e-5).all()
    static = _arrays(fast_run, "static_pools")["rep0"]
    assert static["x"].shape == (200, 1, 8, 8) and np.bincount(static["y"]).tolist() == [20] * 10


def test_results_have_one_row_per_method(fast_run):
    results = pd.read_parquet(
        _latest(fast_run / "data/fast/08_reporting" / SLUG / "results.parquet")
    )
    assert list(results.method) == [
        "dp",
        "dp_omega_0p2",
        "static_n50",
        "static_n100",
        "static_n150",
        "prune",
        "real",
    ]
    metrics = latest_json(fast_run / "data/fast/08_reporting" / SLUG / "metrics.json")
    assert results.set_index("method").loc["dp", "test_acc"] == pytest.approx(metrics["acc_dp"])


def test_guidance_diagnostics_and_generator_report(fast_run):
    diag = _table(fast_run, "guidance_diagnostics")
    assert diag.omega.tolist() == [0.0, 0.1, 0.2]
    assert diag.mean_entropy.between(0, np.log(10) + 1e-5).all()
    report = latest_json(fast_run / "data/fast/07_model_output" / SLUG / "generator_report.json")
    assert report["samples"] == 100 and report["alpha_bar_T"] < 1e-6
    assert 0 <= report["reference_accuracy"] <= 1
    learner = TorchDataset(
        filepath=str(fast_run / "data/fast/06_models" / SLUG / "learner_model.pt"),
        version=Version(None, None),
    ).load()
    assert learner["net.1.weight"].shape == (128, 64)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"deliberate_practice.loop.n0": 500}, r"deliberate_practice\.loop\.n0 = 500 is above"),
        ({"deliberate_practice.guidance.omega": -0.1}, r"deliberate_practice\.guidance\.omega"),
    ],
)
def test_bad_input_fails_before_anything_is_written(fast_run, override, message):
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises(Exception, match=message) as info:
        run_session(fast_run, SLUG, env="fast", runtime_params=override)
    assert isinstance(info.value, (ParameterError, ValueError))
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all("metrics" not in str(p) and "05_model_input" not in str(p) for p in new), new


def test_missing_generator_folder_names_the_catalog_entry(fast_run):
    env = fast_run / "conf/no_generator"
    shutil.rmtree(env, ignore_errors=True)
    shutil.copytree(fast_run / "conf/fast", env)
    (env / "catalog").mkdir(exist_ok=True)
    (env / "catalog/deliberate_practice.yml").write_text(
        "deliberate_practice.pretrained_generator:\n"
        "  type: paper_pipelines.pipelines.deliberate_practice.checkpoint.DiffusionCheckpointDataset\n"
        "  source: diffusers_folder\n  path: /no/such/sd15\n"
    )
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    try:
        with pytest.raises(
            FileNotFoundError, match=r"'deliberate_practice\.pretrained_generator' has no data"
        ):
            run_session(fast_run, SLUG, env="no_generator")
    finally:
        shutil.rmtree(env)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
