"""Data generators of Sec. 6.1 / 6.4 and the measures of Sec. 6, checked by hand."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.si_pipeline import data, metrics


def test_synthetic_data_is_x_beta_plus_noise_with_three_true_features():
    """Sec. 6.1: X ~ N(0, I), y = X beta + eps, beta_{1:3} = delta; the same generator state replays
    the draws, so y can be rebuilt from X and eps exactly."""
    n, p, delta = 50, 6, 0.7
    X, y, truth = data.synthetic_data(np.random.default_rng(3), n, p, delta, 3, 0.0)
    rng = np.random.default_rng(3)
    x_again = rng.normal(size=(n, p))
    eps = rng.normal(size=n)
    np.testing.assert_array_equal(X, x_again)
    np.testing.assert_allclose(y, X[:, :3].sum(axis=1) * delta + eps, rtol=1e-14)
    assert truth == {"support": [0, 1, 2], "outliers": []}
    assert not np.isnan(y).any()
    # delta = 0 is the null: no support; n_true beyond p is cut at p
    assert data.synthetic_data(np.random.default_rng(0), 10, 4, 0.0)[2]["support"] == []
    assert data.synthetic_data(np.random.default_rng(0), 10, 2, 1.0, 3, 0.0)[2]["support"] == [0, 1]


def test_synthetic_outliers_are_shifted_and_missing_responses_drawn():
    n, p = 40, 3
    X, y, truth = data.synthetic_data(np.random.default_rng(1), n, p, 0.0, 3, 0.0, 4, 6.0)
    _, y0, _ = data.synthetic_data(np.random.default_rng(1), n, p, 0.0, 3, 0.0, 4, 0.0)
    assert len(truth["outliers"]) == 4 and truth["outliers"] == sorted(truth["outliers"])
    shifted = np.flatnonzero(y != y0)
    assert shifted.tolist() == truth["outliers"]
    np.testing.assert_allclose(y[shifted] - y0[shifted], 6.0)
    # missing: a Binomial(n, rate) count of distinct rows set to NaN
    _, ym, _ = data.synthetic_data(np.random.default_rng(2), 400, p, 0.0, 3, 0.1)
    assert 20 <= np.isnan(ym).sum() <= 60
    draw = data.synthetic_draw(30, 4, 0.0, delta=0.5)
    X2, y2, truth2 = draw(np.random.default_rng(9))
    assert X2.shape == (30, 4) and not np.isnan(y2).any()
    assert truth2 == {"support": [0, 1, 2], "outliers": []}  # the null runs have no outliers
    # the defaults are the null of Sec. 6.1: delta 0, 3 % missing, no outliers
    _, y3, truth3 = data.synthetic_data(np.random.default_rng(4), 400, 5)
    assert truth3 == {"support": [], "outliers": []} and 3 <= np.isnan(y3).sum() <= 25
    _, _, truth4 = data.synthetic_data(np.random.default_rng(4), 40, 5, 1.0)
    assert truth4["support"] == [0, 1, 2]
    # rows are drawn without replacement: 30 distinct outliers of 40, and a Binomial(400, 1/2)
    # count of distinct missing rows (with replacement only about 157 would be distinct)
    _, _, many = data.synthetic_data(np.random.default_rng(5), 40, 3, 0.0, 3, 0.0, 30, 1.0)
    assert len(set(many["outliers"])) == 30
    _, half, _ = data.synthetic_data(np.random.default_rng(6), 400, 3, 0.0, 3, 0.5)
    assert 170 <= np.isnan(half).sum() <= 230


def test_mask_missing_responses_copies_and_counts():
    y = np.arange(200, dtype=float)
    masked, count = data.mask_missing_responses(y, 0.2, np.random.default_rng(0))
    assert count == int(np.isnan(masked).sum()) and 20 <= count <= 60
    assert not np.isnan(y).any()  # the input is left alone
    kept = ~np.isnan(masked)
    np.testing.assert_array_equal(masked[kept], y[kept])
    same, none = data.mask_missing_responses(y, 0.0, np.random.default_rng(0))
    assert none == 0 and np.array_equal(same, y)


def test_demo_and_diabetes_draws():
    X, y, truth = data.demo_data(np.random.default_rng(0), "synthetic", 30, 4, 1.0, 2, 5.0, 0)
    assert X.shape == (30, 4) and not np.isnan(y).any()  # fully observed
    assert truth["support"] == [0, 1, 2] and len(truth["outliers"]) == 2
    X_all, y_all = data.diabetes_standardised(0)
    Xd, yd, truth = data.demo_data(np.random.default_rng(0), "diabetes", 300, 0, 0.0, 0, 0.0, 0)
    assert truth == {"support": [], "outliers": []}
    rows = [int(np.flatnonzero((X_all == r).all(axis=1))[0]) for r in Xd]
    assert len(set(rows)) == 300  # distinct rows of the table, with their own responses
    np.testing.assert_array_equal(yd, y_all[rows])
    draw = data.diabetes_subsamples(300, 0.25, 0)
    Xs, ys, truth = draw(np.random.default_rng(1))
    assert Xs.shape == (300, 10) and 45 <= np.isnan(ys).sum() <= 105 and truth["support"] == []
    # rows of the table preprocessed with the given jitter seed, each with its own response
    rows = [int(np.flatnonzero((X_all == r).all(axis=1))[0]) for r in Xs]
    assert len(set(rows)) == 300
    kept = ~np.isnan(ys)
    np.testing.assert_array_equal(ys[kept], y_all[rows][kept])


def test_rejection_summary_by_hand():
    table = pd.DataFrame(
        {
            "p_parametric": [0.01, 0.04, 0.2, 0.5],
            "p_oc": [0.05, 0.3, 0.6, 0.9],
            "p_naive": [0.001, 0.01, 0.05, 0.2],
            "cpu_seconds": [1.0, 2.0, 3.0, 6.0],
            "cpu_seconds_oc": [0.5, 0.5, 1.0, 2.0],
            "search_count": [10, 20, 30, 40],
        }
    )
    out = metrics.rejection_summary(table, 0.05)
    assert out["n_tests"] == 4
    assert out["parametric"] == 0.5 and out["oc"] == 0.25 and out["naive"] == 0.75  # p <= alpha
    assert out["mean_cpu_seconds_parametric"] == 3.0 and out["mean_cpu_seconds_oc"] == 1.0
    assert out["mean_search_count"] == 25.0
    from scipy import stats

    for col, key in (("p_parametric", "ks_parametric"), ("p_oc", "ks_oc"), ("p_naive", "ks_naive")):
        assert out[key] == pytest.approx(stats.kstest(table[col], "uniform").pvalue)
    assert out["ks_naive"] < out["ks_oc"]  # the naive p-values pile up near 0
    assert metrics.rejection_summary(table.iloc[:0], 0.05) == {"n_tests": 0}
    assert metrics.rejection_rate(table["p_oc"], 0.3) == 0.5
