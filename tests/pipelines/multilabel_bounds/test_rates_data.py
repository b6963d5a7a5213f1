"""Slopes and c-trends; the generators, the real data and the label filter."""

import logging

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.multilabel_bounds import data, rates


def test_loglog_slope_of_a_power_law():
    n = np.array([100, 400, 1600])
    assert rates.loglog_slope(n, 3 * n**-0.5) == pytest.approx(-0.5)
    assert rates.loglog_slope(n, np.array([1.0, -0.1, 1 / 16])) == pytest.approx(
        -1.0
    )  # <= 0 dropped
    assert np.isnan(rates.loglog_slope(n, np.array([1.0, 0.0, -1.0])))


def test_c_trend_uses_additive_slack():
    cells = pd.DataFrame(
        {"block": "b", "model": "m", "loss": "l", "eta": 0.0, "n": 100, "c": [2, 10, 50],
         "gap_surrogate": [0.10, 0.08, 0.05]}
    )  # fmt: skip
    row = rates.c_trends(cells, 2, 50, 1.2).iloc[0]
    assert row["ratio"] == pytest.approx(0.5)
    assert row["excess"] == pytest.approx(0.05 - 0.12)
    assert row["slope_c"] < 0


def test_loglog_slope_drops_a_zero_gap():
    # log 0 = -inf must not enter the fit: the two positive points give log(1/4) / log(4) = -1
    n = np.array([100, 400, 1600])
    assert rates.loglog_slope(n, np.array([0.0, 1.0, 0.25])) == pytest.approx(-1.0)


def test_c_trend_rows_name_their_cell_and_guard_the_reference():
    cells = pd.DataFrame(
        {"block": ["b"] * 4, "model": ["m"] * 4, "loss": ["l"] * 4, "eta": [0.1] * 4,
         "n": [100, 100, 400, 400], "c": [2, 50, 10, 50], "gap_auc_loss": [0.0, 0.03, 0.2, 0.1]}
    )  # fmt: skip
    out = rates.c_trends(cells, 2, 50, 1.5, "auc_loss")
    assert list(out.columns) == [
        "block", "model", "loss", "eta", "n", "measure", "k", "ratio", "excess", "slope_c"
    ]  # fmt: skip
    first, second = out.iloc[0], out.iloc[1]
    assert (first["block"], first["model"], first["loss"], first["eta"], first["n"]) == (
        "b", "m", "l", 0.1, 100,
    )  # fmt: skip
    assert first["measure"] == "auc_loss" and first["k"] == 1.5
    assert np.isnan(first["ratio"])  # a zero reference gap has no ratio
    assert first["excess"] == pytest.approx(0.03)
    # n = 400 has no c = 2 cell: neither ratio nor excess, but a slope over the c it has
    assert second["n"] == 400 and np.isnan(second["ratio"]) and np.isnan(second["excess"])
    assert second["slope_c"] == pytest.approx(np.log(0.5) / np.log(5))


def test_cell_means_average_replicates_and_subsets_only():
    gaps = pd.DataFrame(
        {"block": "b", "model": "m", "loss": "l", "eta": 0.0, "n": [100, 100, 400], "c": 2,
         "subset": [0, 1, 0], "train_hamming": [0.1, 0.3, 0.5], "test_hamming": [0.2, 0.6, 0.7],
         "gap_hamming": [0.1, 0.3, 0.2]}
    )  # fmt: skip
    cells = rates.cell_means(gaps)
    assert list(cells.columns) == [*rates.CELL, "train_hamming", "test_hamming", "gap_hamming"]
    assert list(cells.n) == [100, 400]
    np.testing.assert_allclose(cells.train_hamming, [0.2, 0.5])
    np.testing.assert_allclose(cells.test_hamming, [0.4, 0.7])
    np.testing.assert_allclose(cells.gap_hamming, [0.2, 0.2])


def test_n_slopes_one_row_per_cell_without_n():
    n = np.array([100, 400, 1600, 100, 400, 1600])
    cells = pd.DataFrame(
        {
            "block": "b",
            "model": "m",
            "loss": "l",
            "eta": 0.0,
            "n": n,
            "c": [2, 2, 2, 5, 5, 5],
            "gap_auc_loss": np.r_[n[:3] ** -0.5, [0.0, 1.0, 0.25]],
        }
    ).iloc[[2, 0, 1, 5, 4, 3]]  # shuffled: the slope must not depend on the row order
    out = rates.n_slopes(cells, "auc_loss")
    assert list(out.columns) == [
        "block",
        "model",
        "loss",
        "eta",
        "c",
        "measure",
        "slope_n",
        "points",
    ]
    assert list(out.c) == [2, 5] and set(out.block) == {"b"} and set(out.model) == {"m"}
    assert set(out.loss) == {"l"} and set(out.eta) == {0.0} and set(out.measure) == {"auc_loss"}
    np.testing.assert_allclose(out.slope_n, [-0.5, -1.0])
    assert list(out.points) == [3, 2]  # the zero gap does not count


def test_worst_ignores_nan_but_not_everything():
    assert rates.worst(pd.Series([1.0, np.nan, 3.0])) == 3.0
    assert rates.worst(pd.Series([1.0, np.nan, 3.0]), "min") == 1.0
    assert np.isnan(rates.worst(pd.Series([np.nan])))


def test_linear_threshold_pool_shapes_norms_and_positive_rate():
    pool = data.linear_threshold_pool(2000, 5000, 20, 30, "isotropic", 10, 0.92, 3, 0.3, 0.3,
                                      np.random.default_rng(0))  # fmt: skip
    x = pool["X_train"]
    assert x.shape == (2000, 21) and pool["Y_test"].shape == (5000, 30)
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0)
    np.testing.assert_allclose(x[:, -1], 1 / np.sqrt(2))
    assert abs((pool["Y_test"] > 0).mean() - 0.3) < 0.02
    noisy = data.with_noise(pool, 0.1)
    flipped = (noisy["Y_train"] != pool["Y_train"]).mean()
    assert abs(flipped - 0.1) < 0.01
    assert (data.with_noise(pool, 0.0)["Y_train"] == pool["Y_train"]).all()
    # nested in eta: every label flipped at 0.05 is flipped at 0.1
    low = data.with_noise(pool, 0.05)["Y_train"] != pool["Y_train"]
    assert (noisy["Y_train"][low] != pool["Y_train"][low]).all()


def test_spiked_inputs_put_the_energy_and_w_star_on_the_informative_block():
    g = data.raw_features(4000, 100, "spiked", 10, 0.92, np.random.default_rng(1))
    share = (g[:, :10] ** 2).sum() / (g**2).sum()
    assert abs(share - 0.92) < 0.01
    w = data.ground_truth(100, 5, 3, 0.3, 10, np.random.default_rng(2))
    assert not w[10:-1].any() and w[:10].any()
    np.testing.assert_allclose(np.linalg.norm(w, axis=0), 1.0)


def test_usable_labels_drops_a_label_without_positives_and_logs_it(caplog):
    y_train = np.array([[1, -1, 1], [-1, -1, 1], [1, -1, -1], [-1, -1, -1]], float)
    y_test = np.array([[1, 1, 1], [-1, -1, -1]], float)
    with caplog.at_level(logging.INFO):
        kept = data.usable_labels(y_train, y_test, 2, "toy")
    assert list(kept) == [0, 2]
    assert "dropped labels [1]" in caplog.text


def test_yeast_ships_in_the_river_wheel():
    table = data.load_yeast()
    labels = [c for c in table.columns if c.startswith("label_")]
    assert table.shape == (2417, 117) and len(labels) == 14


def test_yeast_without_river_names_the_fallback(monkeypatch):
    monkeypatch.setattr(data, "river_available", lambda: False)
    with pytest.raises(
        ImportError,
        match=r"^the yeast data ships inside the `river` package, which is not installed: "
        r"`pip install river==0\.26\.1`, or set multilabel_bounds\.data\.real\.source: digits "
        r"\(the fallback\)$",
    ):
        data.load_yeast()


def test_multi_digit_fallback():
    table = data.load_multi_digits(50, 3, np.random.default_rng(0))
    labels = table[[f"label_{j}" for j in range(10)]].to_numpy()
    assert table.shape == (50, 3 * 64 + 10)
    assert ((labels.sum(axis=1) >= 1) & (labels.sum(axis=1) <= 3)).all()


def test_real_features_use_training_statistics():
    table = data.load_multi_digits(60, 2, np.random.default_rng(1))
    x_tr, y_tr, x_te, y_te = data.real_features(table, np.arange(40), np.arange(40, 60))
    d = x_tr.shape[1]
    np.testing.assert_allclose(x_tr[:, :-1].mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(x_tr[:, -1], 1 / np.sqrt(d))
    assert set(np.unique(y_te)) <= {-1.0, 1.0} and len(x_te) == 20
