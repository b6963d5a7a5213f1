"""IQA measures against scipy on random data (spec check 7) and on hand cases."""

import numpy as np
import pytest
from scipy import stats

from paper_pipelines.pipelines.cpl_iqa import metrics as m


def test_check_7_measures_match_scipy_on_random_data():
    rng = np.random.default_rng(0)
    mos = rng.uniform(1, 100, 200)
    pred = mos + rng.normal(0, 20, 200)
    out = m.iqa_scores(pred, mos)
    assert out["plcc"] == pytest.approx(stats.pearsonr(pred, mos).statistic)
    assert out["srcc"] == pytest.approx(stats.spearmanr(pred, mos).statistic)
    assert out["krcc"] == pytest.approx(stats.kendalltau(pred, mos).statistic)
    assert out["rmse"] == pytest.approx(np.sqrt(np.mean((pred - mos) ** 2)))


def test_rmse_and_constant_predictions_by_hand():
    assert m.rmse(np.array([1.0, 3.0]), np.array([2.0, 2.0])) == 1.0
    const = np.array([2.0, 2.0, 2.0])
    mos = np.array([1.0, 2.0, 3.0])
    assert m.plcc(const, mos) == 0.0 and m.srcc(const, mos) == 0.0 and m.krcc(const, mos) == 0.0
    assert m.plcc(mos, const) == 0.0 and m.srcc(mos, const) == 0.0 and m.krcc(mos, const) == 0.0


def test_logistic_mapping_linearises_a_monotone_prediction():
    mos = np.linspace(1, 100, 50)
    pred = np.tanh((mos - 50) / 20)  # monotone but nonlinear
    raw = m.iqa_scores(pred, mos)
    fitted = m.iqa_scores(pred, mos, logistic=True)
    assert fitted["srcc"] == raw["srcc"] == pytest.approx(1.0)
    assert fitted["plcc"] > raw["plcc"]
    assert fitted["rmse"] < raw["rmse"]


def test_logistic4_by_hand():
    assert m.logistic4(np.array([0.0]), 10.0, 2.0, 0.0, 1.0)[0] == pytest.approx(6.0)
    assert m.logistic4(np.array([100.0]), 10.0, 2.0, 0.0, 1.0)[0] == pytest.approx(10.0)
    assert m.logistic4(np.array([-100.0]), 10.0, 2.0, 0.0, -1.0)[0] == pytest.approx(2.0)


def test_logistic4_with_a_zero_slope_is_a_step():
    assert m.logistic4(np.array([1.0, -1.0]), 10.0, 2.0, 0.0, 0.0).tolist() == [10.0, 2.0]


def test_the_logistic_fit_recovers_a_logistic_mapping_of_scores_on_a_1_100_scale():
    pred = np.linspace(40.0, 60.0, 30)
    mos = m.logistic4(pred, 90.0, 10.0, 50.0, 3.0)
    assert np.allclose(m.fit_logistic(pred, mos), mos, atol=1e-6)


def test_correlations_of_a_pass_fail_prediction_or_label():
    passed = np.array([True, False, True, False])
    mos = np.array([3.0, 1.0, 2.0, 0.5])
    as_float = passed.astype(float)
    for measure, scipy_measure in ((m.plcc, stats.pearsonr), (m.srcc, stats.spearmanr),
                                   (m.krcc, stats.kendalltau)):  # fmt: skip
        expected = scipy_measure(as_float, mos).statistic
        assert measure(passed, mos) == pytest.approx(expected)
        assert measure(mos, passed) == pytest.approx(expected)
