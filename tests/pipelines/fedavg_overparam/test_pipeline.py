"""fedavg_overparam end to end in the fast environment, through a real KedroSession in a project copy."""

import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError
from tests.kedro_helpers import (
    block_network,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

SLUG = "fedavg_overparam"
REPORTING = f"data/fast/08_reporting/{SLUG}"
OUTPUT = f"data/fast/07_model_output/{SLUG}"


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below (a few seconds of pipeline time), with sockets blocked."""
    project = make_project_copy(tmp_path_factory.mktemp(SLUG) / "project")
    with block_network() as attempts:
        run_session(project, SLUG, env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    return project


def _latest_parquet(path):
    return pd.read_parquet(path / versions_of(path)[-1] / path.name)


def test_fast_run_writes_versioned_outputs(fast_run):
    for name in (
        f"{REPORTING}/metrics.json",
        f"{REPORTING}/results.parquet",
        f"{REPORTING}/claims.parquet",
        f"{REPORTING}/ntk_change_plot.png",
        f"{REPORTING}/linearisation_plot.png",
        f"{REPORTING}/heterogeneity_gap_plot.png",
        f"{REPORTING}/fed_vs_central_plot.png",
        f"{OUTPUT}/client_splits_table.parquet",
        f"{OUTPUT}/sweep_table.parquet",
        f"{OUTPUT}/curves_table.parquet",
        f"{OUTPUT}/width_1.kernel_regime_trace.json",
        f"{OUTPUT}/width_2.heterogeneity_trace.json",
    ):
        assert len(versions_of(fast_run / name)) == 1, name


def test_metrics_keep_the_contract_and_every_claim_is_checked(fast_run):
    from paper_pipelines.pipelines.fedavg_overparam.report import CLAIMS, METRICS

    metrics = latest_json(fast_run / f"{REPORTING}/metrics.json")
    assert set(METRICS) <= set(metrics)
    assert metrics["kernel_regime_widths"] == [16, 64] and metrics["heterogeneity_widths"] == [
        16,
        64,
    ]
    claims = _latest_parquet(fast_run / f"{REPORTING}/claims.parquet")
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool and list(claims["gates"]) == [c.gates for c in CLAIMS]
    assert claims.set_index("claim").loc["kernel_moves_less_with_width", "paper"] == (
        "ntk_change_slope = -0.5"
    )


def test_the_kernel_and_the_weights_move_less_at_the_wider_width_even_at_fast_scale(fast_run):
    metrics = latest_json(fast_run / f"{REPORTING}/metrics.json")
    assert metrics["ntk_change_by_width"]["64"] < metrics["ntk_change_by_width"]["16"]
    assert metrics["linearisation_rmse_widest"] < metrics["linearisation_rmse_narrowest"]
    assert metrics["weight_rmse_slope"] < 0 and 0.5 < metrics["weight_l2_ratio"] < 2


def test_sweep_table_has_every_width_and_method_with_the_centralised_twin(fast_run):
    sweep = _latest_parquet(fast_run / f"{OUTPUT}/sweep_table.parquet")
    a = sweep[sweep.experiment == "kernel_regime"]
    b = sweep[sweep.experiment == "heterogeneity"]
    assert sorted(zip(a.width, a.method, strict=True)) == [
        (16, "centralised"), (16, "fedavg_noniid"), (64, "centralised"), (64, "fedavg_noniid"),
    ]  # fmt: skip
    assert set(b.method) == {"fedavg_iid", "fedavg_noniid", "centralised"} and len(b) == 6
    assert (a.rounds == 10).all() and (a.ntk_change > 0).all()
    central = a[a.method == "centralised"]
    assert (central.fed_central_rmse == 0).all() and central.divergence.isna().all()
    assert (a[a.method == "fedavg_noniid"].divergence > 0).all()
    # every parameter of the wider net moves less; MLP sizes: 64*n + n + n*n + n + n + 1
    assert list(a[a.method == "centralised"].n_params) == [
        64 * 16 + 16 * 16 + 16 + 33,
        64 * 64 + 64 * 64 + 64 + 129,
    ]


def test_results_have_one_row_per_method_at_the_widest_width(fast_run):
    results = _latest_parquet(fast_run / f"{REPORTING}/results.parquet")
    assert list(zip(results.experiment, results.method, strict=True)) == [
        ("kernel_regime", "centralised"), ("kernel_regime", "fedavg_noniid"),
        ("heterogeneity", "centralised"), ("heterogeneity", "fedavg_iid"),
        ("heterogeneity", "fedavg_noniid"),
    ]  # fmt: skip
    assert set(results.width) == {64}
    assert "seconds" not in results.columns


def test_client_splits_give_each_experiment_its_iid_and_non_iid_partition(fast_run):
    splits = _latest_parquet(fast_run / f"{OUTPUT}/client_splits_table.parquet")
    a = splits[(splits.experiment == "kernel_regime") & (splits.role == "train")]
    assert a.groupby("split").size().to_dict() == {"iid": 60, "noniid": 60}  # 10 clients x 6
    b = splits[(splits.experiment == "heterogeneity") & (splits.role == "test")]
    assert len(b) == 200


def test_curves_count_total_iterations_as_round_times_tau(fast_run):
    curves = _latest_parquet(fast_run / f"{OUTPUT}/curves_table.parquet")
    a = curves[curves.experiment == "kernel_regime"]
    assert (a.iterations == 2 * a["round"]).all() and a["round"].max() == 10
    start = a[a["round"] == 0].groupby("width").test_loss.nunique()
    assert (start == 1).all()  # FedAvg and its twin start from the same initial weights


def test_run_record_times_each_width_node(fast_run):
    record = latest_json(fast_run / "data/fast/09_tracking/run_record.json")
    assert record["status"] == "success" and record["pipelines"] == [SLUG]
    assert record["node_seconds"][f"{SLUG}.width_2.train_kernel_regime"] > 0


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({f"{SLUG}.kernel_regime.widths": [0, 16]}, r"kernel_regime\.widths\.0"),
        ({f"{SLUG}.heterogeneity.widths": [32]}, r"heterogeneity\.widths"),
        ({f"{SLUG}.kernel_regime.tau": 0}, r"kernel_regime\.tau = 0"),
        ({f"{SLUG}.heterogeneity.rounds": 0}, r"heterogeneity\.rounds = 0"),
        ({f"{SLUG}.heterogeneity.lr": -1.0}, r"heterogeneity\.lr = -1\.0"),
        ({f"{SLUG}.data.dirichlet_alpha": 0.0}, r"data\.dirichlet_alpha = 0\.0"),
        ({f"{SLUG}.data.clients": 200}, r"data\.clients = 200 x min_client_size"),
        ({f"{SLUG}.model.family": "vit"}, r"model\.family = 'vit'"),
        ({f"{SLUG}.kernel_regime.loss": "hinge"}, r"kernel_regime\.loss = 'hinge'"),
        ({f"{SLUG}.heterogeneity.optimizer": "adam"}, r"heterogeneity\.optimizer = 'adam'"),
        ({f"{SLUG}.kernel_regime.widths": [16, 32, 64, 128, 256, 512]}, r"kernel_regime\.widths"),
    ],
)
def test_bad_input_is_rejected_before_any_node(override, message):
    """The check the session runs first (ProjectContext), on the fast parameters with one bad value."""
    import importlib

    from paper_pipelines.common.params import check_parameters, nest_dotted
    from paper_pipelines.pipeline_registry import paper_slugs
    from tests.test_bad_input import _fast_parameters

    params = {SLUG: _fast_parameters(SLUG)}
    ((key, value),) = override.items()
    block, leaf = key.split(".")[1], key.split(".")[2]
    params = {SLUG: {**params[SLUG], block: {**params[SLUG][block], leaf: value}}}
    assert nest_dotted(override)  # the same dotted key --params takes
    pipeline = importlib.import_module(f"paper_pipelines.pipelines.{SLUG}").create_pipeline()
    with pytest.raises(ParameterError, match=message):
        check_parameters(params, [pipeline], paper_slugs())


def test_bad_width_through_a_session_writes_nothing(fast_run):
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises(ParameterError, match=r"kernel_regime\.widths"):
        run_session(
            fast_run, SLUG, env="fast", runtime_params={f"{SLUG}.kernel_regime.widths": [16]}
        )
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = files_under(fast_run / "data") - set(before)
    assert all("metrics" not in str(p) and "trace" not in str(p) for p in new), new


def test_missing_image_folder_names_the_catalog_entry_and_writes_nothing(fast_run):
    env = fast_run / "conf/no_folder"
    (env / "catalog").mkdir(parents=True, exist_ok=True)
    (env / "parameters").mkdir(exist_ok=True)
    (env / "catalog" / f"{SLUG}.yml").write_text(
        f"{SLUG}.image_folder:\n  type: paper_pipelines.pipelines.{SLUG}.data.ImageFolderDataset\n"
        "  path: /no/such/MNIST\n  layout: mnist\n"
    )
    (env / "parameters" / f"{SLUG}.yml").write_text(f"{SLUG}:\n  data:\n    source: mnist\n")
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises(FileNotFoundError, match=rf"'{SLUG}\.image_folder' has no data") as info:
        run_session(fast_run, SLUG, env="no_folder")
    assert "/no/such/MNIST" in str(info.value) and "nothing was run or written" in str(info.value)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = files_under(fast_run / "data") - set(before)
    assert all("metrics" not in str(p) and "splits" not in str(p) for p in new), new


def test_digits_source_with_a_folder_entry_missing_is_explained():
    from paper_pipelines.pipelines.fedavg_overparam.nodes import load_images
    from paper_pipelines.pipelines.fedavg_overparam.parameters import DataParams

    with pytest.raises(ValueError, match=r"image_folder.*--env paper"):
        load_images(None, DataParams(source="cifar10"))
    assert load_images(None, DataParams())["x"].shape == (1797, 1, 8, 8)


def test_same_seed_same_trace_and_another_seed_another_one():
    """Determinism of one width node, called directly on tiny settings (no session needed)."""
    from paper_pipelines.common.params import RuntimeParams
    from paper_pipelines.pipelines.fedavg_overparam import nodes
    from paper_pipelines.pipelines.fedavg_overparam.parameters import (
        DataParams,
        KernelRegimeParams,
        ModelParams,
    )

    data = DataParams(kernel_per_client=3, heterogeneity_train=100)
    images = nodes.load_images(None, data)
    block = KernelRegimeParams(rounds=3, tau=1, ntk_every=3, ntk_samples=10, widths=[8, 16])
    train = nodes.kernel_regime_node(0)

    def run(seed):
        splits = nodes.make_client_splits(images, data, seed)
        return train(images, splits, data, ModelParams(), block, seed, RuntimeParams())

    first, second, other = run(0), run(0), run(1)
    for trace in (first, second):
        trace.pop("seconds")
    assert first == second
    assert other["fedavg_noniid"]["test_loss"] != first["fedavg_noniid"]["test_loss"]
    empty = nodes.kernel_regime_node(4)(
        images, None, data, ModelParams(), block, 0, RuntimeParams()
    )
    assert empty == {"experiment": "kernel_regime", "width": None}
