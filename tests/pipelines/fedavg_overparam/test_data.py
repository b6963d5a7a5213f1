"""Client splits, the local image folder, the sweep measures and the cross-block parameter rules."""

import gzip
import pickle
import struct

import numpy as np
import pytest

from paper_pipelines.pipelines.fedavg_overparam import data, metrics, parameters


def _labels():
    y = np.repeat(np.arange(10), 30)
    return y, np.zeros(len(y), bool)


def test_kernel_regime_split_is_class_pure_non_iid_and_balanced_iid():
    y, is_test = _labels()
    frame = data.kernel_regime_split(y, is_test, [0, 1], 10, 4, None, np.random.default_rng(0))
    non = frame[frame.split == "noniid"]
    iid = frame[frame.split == "iid"]
    classes = non.assign(label=y[non["sample"]]).groupby("client").label.unique()
    assert all(list(classes[c]) == [0] for c in range(5))
    assert all(list(classes[c]) == [1] for c in range(5, 10))
    iid_counts = iid.assign(label=y[iid["sample"]]).groupby(["client", "label"]).size()
    assert (iid_counts == 2).all() and len(iid_counts) == 20  # 2 zeros and 2 ones per client
    assert set(non["sample"]) == set(iid["sample"])  # one pool, dealt two ways
    test = frame[frame.role == "test"]["sample"]
    assert set(test).isdisjoint(non["sample"]) and set(y[test]) == {0, 1}
    assert len(test) == 60 - 40


def test_kernel_regime_split_names_the_key_when_a_class_is_too_small():
    y, is_test = _labels()
    with pytest.raises(ValueError, match="kernel_per_client = 7"):
        data.kernel_regime_split(y, is_test, [0, 1], 10, 7, None, np.random.default_rng(0))


def test_dirichlet_partition_assigns_every_sample_once_and_respects_the_minimum():
    y, _ = _labels()
    owner = data.dirichlet_partition(y, 10, 0.1, 2, np.random.default_rng(0))
    assert owner.shape == y.shape and np.bincount(owner, minlength=10).min() >= 2
    # small alpha: most clients see few classes; large alpha: nearly every client sees every class
    few = np.mean([len(np.unique(y[owner == c])) for c in range(10)])
    many = data.dirichlet_partition(y, 10, 1000.0, 2, np.random.default_rng(0))
    assert few < 6 < np.mean([len(np.unique(y[many == c])) for c in range(10)])
    with pytest.raises(ValueError, match="dirichlet_alpha"):
        data.dirichlet_partition(y, 10, 0.1, 40, np.random.default_rng(0), max_tries=5)


def test_heterogeneity_split_shares_one_training_pool_and_a_disjoint_test_set():
    y, is_test = _labels()
    frame = data.heterogeneity_split(y, is_test, 10, 200, None, 0.5, 1, np.random.default_rng(1))
    non, iid = (frame[frame.split == s] for s in ("noniid", "iid"))
    assert set(non["sample"]) == set(iid["sample"]) and len(non) == 200
    assert np.bincount(iid.client).tolist() == [20] * 10
    test = frame[frame.role == "test"]["sample"]
    assert len(test) == 100 and set(test).isdisjoint(non["sample"])


def test_mnist_and_cifar_folders_are_read_offline(tmp_path):
    mnist = tmp_path / "MNIST" / "raw"
    mnist.mkdir(parents=True)
    for prefix, n in (("train", 3), ("t10k", 2)):
        images = np.arange(n * 4, dtype=np.uint8).reshape(n, 2, 2) * 10
        with gzip.open(mnist / f"{prefix}-images-idx3-ubyte.gz", "wb") as fh:
            fh.write(struct.pack(">IIII", 2051, n, 2, 2) + images.tobytes())
        (mnist / f"{prefix}-labels-idx1-ubyte").write_bytes(
            struct.pack(">II", 2049, n) + np.arange(n, dtype=np.uint8).tobytes()
        )
    loaded = data.ImageFolderDataset(str(tmp_path / "MNIST"), "mnist").load()
    assert loaded["x"].shape == (5, 1, 2, 2) and loaded["is_test"].tolist() == [0, 0, 0, 1, 1]
    assert loaded["x"][0, 0, 0, 1] == pytest.approx(10 / 255) and loaded["y"].tolist() == [
        0,
        1,
        2,
        0,
        1,
    ]
    cifar = tmp_path / "cifar-10-batches-py"
    cifar.mkdir()
    for stem in [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]:
        batch = {b"data": np.full((2, 3072), 255, np.uint8), b"labels": [3, 4]}
        (cifar / stem).write_bytes(pickle.dumps(batch))
    loaded = data.ImageFolderDataset(str(tmp_path), "cifar10").load()
    assert loaded["x"].shape == (12, 3, 32, 32) and loaded["x"].max() == 1.0
    assert loaded["is_test"].sum() == 2 and loaded["source"] == "cifar10"
    missing = data.ImageFolderDataset(str(tmp_path / "nope"), "mnist")
    assert not missing.exists()


def test_loglog_slope_and_monotonicity_by_hand():
    widths = [16, 64, 256]
    assert metrics.loglog_slope(widths, [1 / w**0.5 for w in widths]) == pytest.approx(-0.5)
    assert metrics.loglog_slope(widths, [3.0 / w for w in widths]) == pytest.approx(-1.0)
    assert np.isnan(metrics.loglog_slope([16, 64], [0.1, float("nan")]))
    assert metrics.strictly_decreasing([3, 2, 1]) and not metrics.strictly_decreasing([3, 3, 1])
    assert not metrics.strictly_decreasing([3, float("nan")])
    assert metrics.relative_gap(1.05, 1.0) == pytest.approx(0.05)


def _blocks(**data_kw):
    return {
        "data": parameters.DataParams(**data_kw),
        "kernel_regime": parameters.KernelRegimeParams(),
        "heterogeneity": parameters.HeterogeneityParams(),
    }


def test_cross_block_rules_name_the_keys():
    parameters.check_across_blocks(_blocks())  # the defaults fit digits
    with pytest.raises(ValueError, match=r"data\.kernel_per_client = 40"):
        parameters.check_across_blocks(_blocks(kernel_per_client=40))
    with pytest.raises(ValueError, match=r"data\.clients = 800"):
        parameters.check_across_blocks(
            _blocks(clients=800, kernel_per_client=1, kernel_classes=list(range(10)))
        )
    with pytest.raises(ValueError, match=r"heterogeneity_train = 5000"):
        parameters.check_across_blocks(_blocks(heterogeneity_train=5000))
    with pytest.raises(ValueError, match=r"kernel_classes repeats"):
        parameters.check_across_blocks(_blocks(kernel_classes=[1, 1]))


@pytest.mark.parametrize(
    ("widths", "message"),
    [
        ([32], "at least 2"),
        ([0, 32], "greater than or equal to 1"),
        ([64, 32], "strictly increasing"),
    ],
)
def test_widths_need_two_increasing_positive_entries(widths, message):
    with pytest.raises(ValueError, match=message):
        parameters.KernelRegimeParams(widths=widths)


def test_kernel_regime_must_run_the_non_iid_split():
    assert parameters.KernelRegimeParams(splits=["iid", "noniid"]).splits == ["iid", "noniid"]
    with pytest.raises(ValueError, match="splits must list noniid"):
        parameters.KernelRegimeParams(splits=["iid"])


def _trace():
    """A hand-made two-round trace of one width, as the training nodes return it."""
    series = {
        "train_loss": [1.0, 0.5],
        "test_loss": [1.2, 0.6],
        "test_acc": [0.5, 0.9],
        "measures": [{"ntk_change": 0.0}, {"ntk_change": 0.2, "weight_l2": 3.0, "divergence": 0.4}],
    }
    central = {
        "train_loss": [1.0, 0.4],
        "test_loss": [1.2, 0.5],
        "test_acc": [0.5, 0.95],
        "divergence": [None, None],
    }
    return {
        "experiment": "kernel_regime",
        "width": 64,
        "tau": 5,
        "n_params": 100,
        "rounds": [0, 1],
        "methods": ["fedavg_noniid", "centralised"],
        "seconds": 1.5,
        "fedavg_noniid": series,
        "centralised": central,
    }


def test_sweep_table_takes_the_last_round_of_every_method():
    table = metrics.sweep_table([_trace(), {"experiment": "heterogeneity", "width": None}])
    assert list(table.method) == ["centralised", "fedavg_noniid"] and set(table.width) == {64}
    fed = table.set_index("method").loc["fedavg_noniid"]
    assert (fed.test_loss, fed.test_acc, fed.train_loss, fed.rounds) == (0.6, 0.9, 0.5, 1)
    assert (fed.ntk_change, fed.weight_l2, fed.divergence, fed.n_params) == (0.2, 3.0, 0.4, 100)
    assert np.isnan(fed.linearisation_rmse)
    central = table.set_index("method").loc["centralised"]
    assert (
        central.test_acc == 0.95 and np.isnan(central.ntk_change) and np.isnan(central.divergence)
    )
    picked = metrics.pick(table, "kernel_regime", "fedavg_noniid", "test_loss")
    assert picked.to_dict() == {64: 0.6}


def test_curves_count_iterations_as_round_times_tau():
    curves = metrics.curves_table([_trace(), {"width": None}])
    assert len(curves) == 4
    fed = curves[curves.method == "fedavg_noniid"]
    assert list(fed.iterations) == [0, 5] and list(fed.test_loss) == [1.2, 0.6]
    assert list(fed.train_loss) == [1.0, 0.5] and list(fed.test_acc) == [0.5, 0.9]
    assert set(curves.width) == {64} and set(curves.experiment) == {"kernel_regime"}


def test_slope_drops_non_positive_values_and_needs_two_points():
    assert metrics.loglog_slope([1, 4, 16], [1.0, 0.5, 0.0]) == pytest.approx(-0.5)
    assert metrics.loglog_slope([2, 8], [1.0, 0.5]) == pytest.approx(-0.5)
    assert metrics.relative_gap(3.0, 2.0) == pytest.approx(0.5)
    assert np.isnan(metrics.relative_gap(1.0, 0.0))


def test_tables_skip_empty_slots_anywhere_and_keep_a_clean_index():
    table = metrics.sweep_table([{"width": None}, _trace()])
    assert list(table.index) == [0, 1] and list(table.method) == ["centralised", "fedavg_noniid"]
    curves = metrics.curves_table([{"width": None}, _trace()])
    assert len(curves) == 4 and list(curves[curves.method == "centralised"]["round"]) == [0, 1]
    other = table.assign(experiment="heterogeneity", test_loss=9.0)
    both = metrics.pd.concat([table, other])
    assert metrics.pick(both, "kernel_regime", "fedavg_noniid", "test_loss").to_dict() == {64: 0.6}
