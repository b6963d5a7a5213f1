"""cpl_iqa end to end in the fast environment, through a real KedroSession in a project copy."""

import pandas as pd
import pytest
import torch

from tests.kedro_helpers import (
    block_network,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "cpl_iqa"


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below, with sockets blocked (nothing may download)."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest(path):
    suffix = path.name
    return pd.read_parquet(path / versions_of(path)[-1] / suffix)


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / "data/fast"
    for name in (
        "08_reporting/cpl_iqa/metrics.json",
        "08_reporting/cpl_iqa/results.parquet",
        "08_reporting/cpl_iqa/claims.parquet",
        "08_reporting/cpl_iqa/method_srcc_plot.png",
        "08_reporting/cpl_iqa/prediction_plot.png",
        "08_reporting/cpl_iqa/pseudo_label_plot.png",
        "05_model_input/cpl_iqa/iqa_images.npz",
        "05_model_input/cpl_iqa/splits.npz",
        "05_model_input/cpl_iqa/stage1_models.npz",
        "05_model_input/cpl_iqa/cpl_models.npz",
        "07_model_output/cpl_iqa/mos_table.parquet",
        "07_model_output/cpl_iqa/distortion_log_table.parquet",
        "07_model_output/cpl_iqa/pseudo_label_log_table.parquet",
        "06_models/cpl_iqa/svr.skops",
    ):
        assert len(versions_of(root / name)) == 1, name


def test_mos_table_holds_fr_scores_latent_quality_and_simulated_mos(fast_run):
    mos = _latest(fast_run / "data/fast/07_model_output/cpl_iqa/mos_table.parquet")
    assert {"gmsd", "ssim", "latent", "mos", "mos_sd"} <= set(mos.columns)
    assert len(mos) == 200 and mos["mos"].between(1, 100).all()
    # the latent quality is the FR consensus: better SSIM and lower GMSD go with a higher MOS
    assert mos["latent"].corr(mos["ssim"], method="spearman") > 0.5
    assert mos["latent"].corr(mos["gmsd"], method="spearman") < -0.5
    assert mos["mos"].corr(mos["latent"], method="spearman") > 0.8


def test_results_metrics_and_claims_keep_the_contract(fast_run):
    from paper_pipelines.pipelines.cpl_iqa.report import CLAIMS, METRICS

    metrics = latest_json(fast_run / "data/fast/08_reporting/cpl_iqa/metrics.json")
    assert set(METRICS) <= set(metrics) and metrics["n_splits"] == 3
    results = _latest(fast_run / "data/fast/08_reporting/cpl_iqa/results.parquet")
    assert list(results["method"]) == [
        "cpl", "supervised", "supervised_all_labels", "stage1_warmup", "cpl_unit_weights",
        "nss_svr", "brisque_pretrained",
    ]  # fmt: skip
    assert results.set_index("method").loc["cpl", "srcc"] == pytest.approx(metrics["srcc_cpl"])
    assert (results["splits"] == 3).all() and (results["n_test"] == 40).all()
    claims = _latest(fast_run / "data/fast/08_reporting/cpl_iqa/claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool


def test_ci_floor_cpl_not_below_supervised(fast_run):
    """Spec check 4's non-inferiority floor on the fast configuration."""
    metrics = latest_json(fast_run / "data/fast/08_reporting/cpl_iqa/metrics.json")
    assert metrics["srcc_cpl"] >= metrics["srcc_supervised"] - 0.01
    assert metrics["srcc_supervised"] > 0.3  # the models learn something at all


def test_pseudo_label_log_has_a_row_per_round_method_and_split(fast_run):
    log = _latest(fast_run / "data/fast/07_model_output/cpl_iqa/pseudo_label_log_table.parquet")
    cpl = log[log["method"] == "cpl"]
    assert len(cpl) == 3 * 2 and set(cpl["round"]) == {1, 2}
    assert cpl["pseudo_srcc"].between(-1, 1).all() and cpl["mean_confidence"].between(0, 1).all()
    assert (cpl["isolated"] == 0).all()
    assert log[log["method"] == "supervised"]["pseudo_srcc"].isna().all()


def test_a_folder_run_without_its_label_csv_fails_in_the_first_node():
    """The ingest node refuses before anything is made (Kedro writes nothing: the output is in memory)."""
    from paper_pipelines.pipelines.cpl_iqa.nodes import load_source_images
    from paper_pipelines.pipelines.cpl_iqa.parameters import DataParams

    folder = DataParams(source="folder")
    with pytest.raises(ValueError, match=r"needs cpl_iqa\.real_labels \(label CSV\)"):
        load_source_images({"a.jpg": None}, None, folder)
    with pytest.raises(ValueError, match=r"needs cpl_iqa\.real_images;"):
        load_source_images(None, pd.DataFrame({"image": [], "mos": []}), folder)


# The paper-scale backbone (transformers' ResNet): here, not in a unit-test file, because importing
# transformers costs seconds that every mutant would pay again.
def test_resnet101_backbone_has_the_paper_depth_and_a_2048_wide_output(monkeypatch):
    from paper_pipelines.pipelines.cpl_iqa import model as net

    assert net.RESNET101_DEPTHS == (3, 4, 23, 3)
    # one block per stage keeps the test fast; the wiring is the same as at depth 101
    monkeypatch.setattr(net, "RESNET101_DEPTHS", (1, 1, 1, 1))
    torch.manual_seed(0)
    model = net.build_network("resnet101", 16, 100, [], [], 0)
    assert model.backbone.net.config.depths == [1, 1, 1, 1]
    model.eval()
    with torch.no_grad():
        out = model.backbone(torch.zeros((1, 3, 32, 32), dtype=torch.uint8))
    assert out.shape == (1, 2048)
    assert model.head.out_features == 100 and model.embedding[0].in_features == 2048
    state = {k: torch.full_like(v, 0.5) if v.is_floating_point() else v
             for k, v in model.backbone.net.state_dict().items()}  # fmt: skip
    again = net.build_network("resnet101", 16, 100, [], [], 0, backbone_state=state)
    first = next(k for k, v in state.items() if v.is_floating_point())
    assert torch.equal(again.backbone.net.state_dict()[first], state[first])
    assert torch.allclose(model.backbone.mean.flatten(), torch.tensor(net.IMAGENET_MEAN))
