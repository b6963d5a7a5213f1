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


def _sdf_env(project, name, sdf_path, extra=""):
    """A Kedro environment whose molecules come from ``sdf_path`` through nego.molecules_sdf."""
    env = project / "conf" / name
    (env / "catalog").mkdir(parents=True, exist_ok=True)
    (env / "parameters").mkdir(exist_ok=True)
    (env / "catalog" / "nego.yml").write_text(
        "nego.molecules_sdf:\n  type: paper_pipelines.datasets.SDFDataset\n"
        f"  filepath: {sdf_path}\n"
    )
    (env / "parameters" / "nego.yml").write_text(
        "nego:\n  split:\n    kinds: [molecules]\n    molecule_source: catalog\n"
        f"    molecule_label: activity\n{extra}"
    )
    return name


@pytest.mark.parametrize(
    ("case", "message"),
    [
        (
            "missing",
            r"Input dataset 'nego\.molecules_sdf' has no data at /no/such/folder/mine\.sdf\. It is "
            r"an input you supply: put your file there, or point the entry 'nego\.molecules_sdf'",
        ),
        ("no_molecule", r"RDKit parsed no molecule from .*mine\.sdf"),
        ("no_label", r"nego\.split\.molecule_label = 'activity': 40 of 40 molecules"),
    ],
)
def test_a_bad_users_sdf_fails_clearly_and_writes_nothing(fast_run, tmp_path, case, message):
    from tests.pipelines.nego.test_molecules_sdf import alcohols, write_sdf

    sdf = tmp_path / "mine.sdf"
    if case == "no_molecule":
        sdf.write_text("a list of names, not molecules\n")
    elif case == "no_label":
        write_sdf(sdf, [(smiles, {"solubility": "high"}) for smiles, _ in alcohols(40)])
    else:
        sdf = "/no/such/folder/mine.sdf"
    env = _sdf_env(fast_run, f"sdf_{case}", sdf)
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises(Exception, match=message) as info:
        run_session(fast_run, SLUG, env=env)
    if case == "missing":  # refused by the input check before any node
        assert isinstance(info.value, FileNotFoundError)
        assert "nothing was run or written" in str(info.value)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all("nego" not in str(p) for p in new), new


def test_a_users_sdf_runs_through_the_catalog_entry(tmp_path):
    """40 alcohols labelled active / inactive: two classes, trained and evaluated end to end."""
    from tests.pipelines.nego.test_molecules_sdf import alcohols, write_sdf

    project = make_project_copy(tmp_path / "project")
    sdf = write_sdf(tmp_path / "mine.sdf", alcohols(40))
    small = (
        "  model:\n    hidden: 8\n    layers: 2\n"
        "  train:\n    epochs: 1\n    batch_size: 16\n    methods: [erm, nego_r]\n"
        "  evaluation:\n    explain_graphs: 2\n"
    )
    run_session(project, SLUG, env=_sdf_env(project, "user_sdf", sdf, small))
    root = project / "data"
    graphs = _latest_parquet(root / "01_raw/nego/graphs_table.parquet")
    assert set(graphs["split"]) == {"molecules"} and len(graphs) == 40
    assert graphs["width"].tolist() == list(range(2, 42))
    assert graphs["y"].tolist() == [1, 0] * 20  # active (even k) = 0, inactive = 1
    runs = _latest_parquet(root / "07_model_output/nego/runs_table.parquet")
    assert sorted(runs["method"]) == ["erm", "nego_r"] and set(runs["split"]) == {"molecules"}
    assert runs["acc_ood_test"].between(0, 1).all() and runs["mask_auc"].isna().all()
    states = TorchDataset(
        filepath=str(root / "06_models/nego/classifiers_model.pt"), version=Version(None, None)
    ).load()
    head = states["molecules/erm/seed0"]
    last = sorted(k for k in head if k.endswith(".weight"))[-1]
    assert head[last].shape[0] == 2  # the classifier's last layer: one output per label value
