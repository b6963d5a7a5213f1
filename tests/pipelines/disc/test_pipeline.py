"""disc end to end in the fast environment, through a real KedroSession in a project copy."""

import pandas as pd
import pytest
from kedro.io.core import Version

from paper_pipelines.common.params import ParameterError
from paper_pipelines.datasets import TorchDataset
from paper_pipelines.pipelines.disc.report import CLAIMS, METRICS, SOCIAL_RUNS
from tests.kedro_helpers import (
    block_network,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "disc"


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below (about 15 s of pipeline time), with sockets blocked."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest_parquet(path):
    return pd.read_parquet(path / versions_of(path)[-1] / path.name)


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / "data/fast"
    names = [
        "01_raw/disc/digits_table.parquet",
        "05_model_input/disc/canvas_pools.npz",
        "06_models/disc/expert_c_model.pt",
        "06_models/disc/expert_d_model.pt",
        "07_model_output/disc/baseline_scores.json",
        "08_reporting/disc/metrics.json",
        "08_reporting/disc/results.parquet",
        "08_reporting/disc/claims.parquet",
        "08_reporting/disc/accuracy_plot.png",
        "08_reporting/disc/selective_weight_plot.png",
    ]
    names += [f"06_models/disc/social_{v}_{t}_model.pt" for t, v in SOCIAL_RUNS]
    names += [f"07_model_output/disc/scores_{v}_{t}.json" for t, v in SOCIAL_RUNS]
    for name in names:
        assert len(versions_of(root / name)) == 1, name


def test_results_have_one_row_per_variant_and_task(fast_run):
    results = _latest_parquet(fast_run / "data/fast/08_reporting/disc/results.parquet")
    cls = results[results.task == "cls"]
    box = results[results.task == "box"]
    assert list(cls.method) == ["upe", "concat", "self", "upg", "disc_h", "disc", "disc_late"]
    assert list(box.method) == ["upe", "concat", "self", "upg", "disc_h"]
    assert results["mean"].between(0, 1).all() and (results["train_seconds"] >= 0).all()
    by = results.set_index(["task", "method"])
    assert (
        by.loc[("cls", "upg"), "lam"] == 1.0 and by.loc[("cls", "disc"), "selective"] == "feature"
    )
    assert (
        by.loc[("cls", "self"), "partner"] == "self"
        and by.loc[("box", "disc_h"), "partner"] == "classifier"
    )
    delta = by.loc[("cls", "disc_h"), "mean"] - by.loc[("cls", "upe"), "mean"]
    assert by.loc[("cls", "disc_h"), "delta_vs_upe"] == pytest.approx(delta)


def test_metrics_keep_the_contract_and_every_claim_is_checked(fast_run):
    metrics = latest_json(fast_run / "data/fast/08_reporting/disc/metrics.json")
    assert set(METRICS) <= set(metrics)
    assert all(0 <= metrics[k] <= 1 for k in METRICS)
    assert metrics["replicates"] == 1 and 0 < metrics["w_main_mean_disc"] < 1
    claims = _latest_parquet(fast_run / "data/fast/08_reporting/disc/claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool and list(claims["gates"]) == [c.gates for c in CLAIMS]
    assert claims["gates"].sum() == 3


def test_saved_states_reload_into_models(fast_run):
    from paper_pipelines.pipelines.disc.experts import load_specialist

    path = fast_run / "data/fast/06_models/disc/expert_c_model.pt"
    record = TorchDataset(filepath=str(path), version=Version(None, None)).load()
    assert record["task"] == "cls" and len(record["states"]) == 1
    load_specialist(record["states"][0], 16, (16, 32, 64), "cls")
    social = TorchDataset(
        filepath=str(fast_run / "data/fast/06_models/disc/social_disc_cls_model.pt"),
        version=Version(None, None),
    ).load()
    assert any(k.startswith("confid_main.") for k in social["states"][0])
    assert social["lam"] == [0.59]


def test_run_record_names_every_collaboration_node(fast_run):
    record = latest_json(fast_run / "data/fast/09_tracking/run_record.json")
    assert record["status"] == "success" and record["pipelines"] == ["disc"]
    for task, variant in SOCIAL_RUNS:
        assert f"disc.{variant}_{task}.train_collaboration" in record["node_seconds"]


def test_unknown_variant_fails_before_anything_is_written(fast_run):
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises(ParameterError, match=r"disc\.variants\.cls\.magic"):
        run_session(
            fast_run, SLUG, env="fast", runtime_params={"disc.variants.cls.magic": {"lam": 0.5}}
        )
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all("metrics" not in str(p) and "results" not in str(p) for p in new), new
