"""nego end to end in the fast environment, through a real KedroSession in a project copy."""

import pandas as pd
import pytest
import torch
from kedro.io.core import Version

from paper_pipelines.common.params import ParameterError
from paper_pipelines.datasets import TorchDataset
from tests.kedro_helpers import (
    block_network,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "nego"
METHODS = ["erm", "gsat_lite", "vrex_oracle", "nego_r"]


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below, with sockets blocked."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest_parquet(path):
    return pd.read_parquet(path / versions_of(path)[-1] / path.name)


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / "data/fast"
    for name in (
        "01_raw/nego/graphs_table.parquet",
        "07_model_output/nego/ood_splits.json",
        "06_models/nego/classifiers_model.pt",
        "07_model_output/nego/train_log_table.parquet",
        "07_model_output/nego/runs_table.parquet",
        "07_model_output/nego/environment_probe.json",
        "07_model_output/nego/explanations.json",
        "08_reporting/nego/metrics.json",
        "08_reporting/nego/results.parquet",
        "08_reporting/nego/claims.parquet",
        "08_reporting/nego/accuracy_plot.png",
        "08_reporting/nego/subgraph_plot.png",
    ):
        assert len(versions_of(root / name)) == 1, name


def test_graph_snapshot_and_splits_agree(fast_run):
    root = fast_run / "data/fast"
    graphs = _latest_parquet(root / "01_raw/nego/graphs_table.parquet")
    splits = latest_json(root / "07_model_output/nego/ood_splits.json")
    assert set(splits) == {"bias", "basis"}
    # conf/fast: 60 train, 20 per validation part, 20 per test part
    assert {p: len(v) for p, v in splits["basis"].items()} == {
        "train": 60, "id_val": 20, "ood_val": 20, "ood_test": 20, "severe_test": 20,
    }  # fmt: skip
    by_id = graphs.set_index("graph_id")
    assert set(by_id.loc[splits["basis"]["ood_test"], "base"]) == {"path"}
    assert set(by_id.loc[splits["basis"]["train"], "base"]) <= {"wheel", "tree", "ladder"}
    severe = by_id.loc[splits["bias"]["severe_test"], "width"]
    assert severe.min() >= 2 * 10 - 5  # base widths doubled (10 +- 5 -> 20 +- 5)


def test_runs_cover_every_method_split_and_seed(fast_run):
    runs = _latest_parquet(fast_run / "data/fast/07_model_output/nego/runs_table.parquet")
    assert sorted(runs.method.unique()) == sorted(METHODS)
    assert set(runs.split) == {"bias", "basis"} and len(runs) == 8
    for part in ("train", "id_val", "ood_val", "ood_test", "severe_test"):
        assert runs[f"acc_{part}"].between(0, 1).all()
    extractor = runs.method.isin(["gsat_lite", "nego_r"])
    assert runs.loc[extractor, "mask_auc"].between(0, 1).all()
    assert runs.loc[~extractor, "mask_auc"].isna().all()
    assert (runs.selected_epoch >= 1).all() and (runs.selected_epoch <= 2).all()


def test_results_metrics_and_claims(fast_run):
    from paper_pipelines.pipelines.nego.report import CLAIMS, METRICS

    root = fast_run / "data/fast/08_reporting/nego"
    metrics = latest_json(root / "metrics.json")
    assert set(METRICS) <= set(metrics)
    results = _latest_parquet(root / "results.parquet")
    row = results[(results.method == "nego_r") & (results.split == "bias")].iloc[0]
    assert row.acc_ood_test == pytest.approx(metrics["acc_bias_nego"])
    assert metrics["severe_drop_nego"] == pytest.approx(row.acc_ood_test - row.acc_severe_test)
    claims = _latest_parquet(root / "claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool and list(claims["gates"]) == [c.gates for c in CLAIMS]
    probe = latest_json(fast_run / "data/fast/07_model_output/nego/environment_probe.json")
    assert 0 <= probe["probe_y_acc"] <= 1 and probe["runs"] == 1


def test_saved_models_reload_and_predict_as_evaluated(fast_run):
    from paper_pipelines.pipelines.nego import study
    from paper_pipelines.pipelines.nego.parameters import (
        DataParams,
        ExtractorParams,
        LossParams,
        ModelParams,
        PromptParams,
        TrainParams,
    )  # fmt: skip

    root = fast_run / "data/fast"
    states = TorchDataset(
        filepath=str(root / "06_models/nego/classifiers_model.pt"), version=Version(None, None)
    ).load()
    assert set(states) == {f"{s}/{m}/seed0" for s in ("bias", "basis") for m in METHODS}
    assert isinstance(next(iter(states["bias/nego_r/seed0"].values())), torch.Tensor)
    graphs = _latest_parquet(root / "01_raw/nego/graphs_table.parquet").set_index("graph_id")
    splits = latest_json(root / "07_model_output/nego/ood_splits.json")
    blocks = (
        DataParams(num_train=60, num_val=20, num_test=20),
        ModelParams(hidden=8, layers=2),
        PromptParams(),
        ExtractorParams(),
        LossParams(),
        TrainParams(epochs=2, batch_size=32, seeds=1),
    )
    cfg = study.run_config("nego_r", *blocks)
    model = study.load_model(states["bias/nego_r/seed0"], cfg, "cpu")
    datasets = study.build_datasets(graphs, {"bias": splits["bias"]})
    from paper_pipelines.pipelines.nego import training

    acc = training.accuracy(model, datasets["bias"]["ood_test"], 256, "cpu")
    runs = _latest_parquet(root / "07_model_output/nego/runs_table.parquet")
    expected = runs[(runs.method == "nego_r") & (runs.split == "bias")].acc_ood_test.iloc[0]
    assert acc == pytest.approx(expected)


@pytest.mark.parametrize(
    ("override", "message"),
    [
        (
            {"nego.split.train_bases": ["wheel", "path"]},
            r"nego\.split\.train_bases and nego\.split\.test_bases overlap",
        ),
        (
            {"nego.data.width_centre": 5, "nego.data.width_spread": 3},
            r"too small to hold the motif",
        ),
    ],
)
def test_bad_input_fails_clearly_and_writes_nothing(fast_run, override, message):
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises((ParameterError, ValueError), match=message):
        run_session(fast_run, SLUG, env="fast", runtime_params=override)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all("nego" not in str(p) for p in new), new
