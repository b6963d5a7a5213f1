"""Pipeline selection by K-fold CV inside the selective test: protocol, exact event, reductions, anchor."""

import numpy as np
import pytest

from paper_pipelines.pipelines.si_pipeline.cross_validation import (
    CvSelectiveTest,
    cv_split,
    expand_candidates,
    fold_quadratic,
)
from paper_pipelines.pipelines.si_pipeline.dags import DAGS, namespaced
from paper_pipelines.pipelines.si_pipeline.data import synthetic_data
from paper_pipelines.pipelines.si_pipeline.engine import DagSelectiveTest, feature_line
from paper_pipelines.pipelines.si_pipeline.intervals import intersection, length

from .test_engine import PARAMS

ENGINES = {d: DagSelectiveTest(namespaced(d)) for d in DAGS}
GRID = {"op1": {"lasso": {"alpha": [0.08, 0.12]}}, "op2": {"lasso": {"alpha": [0.08, 0.12]}}}


def _cv(grid=GRID, **kw) -> CvSelectiveTest:
    return CvSelectiveTest(expand_candidates(ENGINES, grid, PARAMS), **kw)


def _data(seed, n=100, p=10, delta=0.4):
    return synthetic_data(np.random.default_rng(seed), n, p, delta, 3, 0.03)[:2]


def test_cv_split_partitions_rows_and_is_seeded():
    chosen, folds = cv_split(23, 5, 7, 4)
    assert chosen == [0, 1, 2, 3]
    assert sorted(np.concatenate(folds).tolist()) == list(range(23))
    assert [len(f) for f in folds] == [5, 5, 5, 4, 4]  # numpy.array_split sizes
    again = cv_split(23, 5, 7, 4)[1]
    assert all(np.array_equal(f, g) for f, g in zip(folds, again, strict=True))
    other = cv_split(23, 5, 8, 4)[1]
    assert not all(np.array_equal(f, g) for f, g in zip(folds, other, strict=True))
    sub, _ = cv_split(23, 5, 7, 10, max_candidates=3)
    assert len(sub) == 3 and sub == sorted(sub) and set(sub) <= set(range(10))
    with pytest.raises(ValueError, match="folds"):
        cv_split(3, 5, 0, 1)


def test_expand_candidates_product_and_defaults():
    grid = {"op1": {"lasso": {"alpha": [0.08, 0.12]}, "stepwise": {"k": [2, 3]}}, "op2": {}}
    cands = expand_candidates(ENGINES, grid, PARAMS)
    assert len(cands) == 5
    assert [c.dag for c in cands] == ["op1"] * 4 + ["op2"]
    assert {(c.params["lasso"]["alpha"], c.params["stepwise"]["k"]) for c in cands[:4]} == {
        (0.08, 2),
        (0.08, 3),
        (0.12, 2),
        (0.12, 3),
    }
    assert all(c.params["soft_ipod"] == {"lam": 0.02} for c in cands[:4])  # unlisted: DAG's value
    assert cands[4].params == PARAMS["op2"] and cands[4].name == "op2"
    assert PARAMS["op1"]["lasso"]["alpha"] == 0.08  # the base block is not mutated
    assert cands[0].imputation == "mean_value_imputation"
    assert cands[4].imputation == "definite_regression_imputation"
    with pytest.raises(KeyError, match="op9"):
        expand_candidates(ENGINES, {"op9": {}}, PARAMS)


def test_fold_quadratic_equals_validation_mse_on_the_line():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 4))
    a, b = rng.normal(size=30), rng.normal(size=30)
    tr, val = np.arange(22), np.arange(22, 30)
    state = {"features": [0, 2], "outliers": [3, 5]}
    quad = fold_quadratic(X[tr], a[tr], b[tr], X[val], a[val], b[val], state)
    for z in (-1.3, 0.0, 2.2):
        y = a + b * z
        keep = np.setdiff1d(tr, [3, 5])
        xs = X[np.ix_(keep, [0, 2])]
        coef = np.linalg.inv(xs.T @ xs) @ xs.T @ y[keep]
        mse = np.mean((y[val] - X[np.ix_(val, [0, 2])] @ coef) ** 2)
        assert quad @ [1.0, z, z * z] == pytest.approx(mse, rel=1e-10)
    empty = fold_quadratic(
        X[tr], a[tr], b[tr], X[val], a[val], b[val], {"features": [], "outliers": []}
    )
    assert empty @ [1.0, 0.7, 0.49] == pytest.approx(np.mean((a[val] + 0.7 * b[val]) ** 2))


def _brute_force_cv(cands, X, y_raw, folds):
    """CV errors written out directly: impute, refit per fold with the explicit OLS inverse."""
    errors = []
    for cand in cands:
        y = cand.engine.imputation_matrix(X, y_raw) @ y_raw[~np.isnan(y_raw)]
        per_fold = []
        for val in folds:
            tr = np.setdiff1d(np.arange(len(y)), val)
            state = cand.engine.run(X[tr], y[tr], cand.params)
            keep = np.setdiff1d(np.arange(len(tr)), state["outliers"])
            cols = state["features"]
            xs = X[tr][np.ix_(keep, cols)]
            pred = X[np.ix_(val, cols)] @ np.linalg.inv(xs.T @ xs) @ xs.T @ y[tr][keep]
            per_fold.append(np.mean((y[val] - pred) ** 2))
        errors.append(float(np.mean(per_fold)))
    return errors


def test_tune_matches_a_direct_cv_computation():
    cv = _cv()
    X, y = _data(3)
    choice = cv.tune(X, y)
    _, folds = cv_split(len(y), 5, 0, len(cv.candidates))
    direct = _brute_force_cv(cv.candidates, X, y, folds)
    assert [choice.errors[k] for k in range(4)] == pytest.approx(direct, rel=1e-9)
    assert choice.winner == int(np.argmin(direct))
    winner = cv.candidates[choice.winner]
    assert cv.run(X, y) == winner.engine.run(X, y, winner.params)


def _y_at(y_raw, a, b, z):
    y = y_raw.copy()
    y[~np.isnan(y_raw)] = a + b * z
    return y


def test_cv_choice_constant_on_event_intervals_and_changes_just_outside():
    """Walk the line: at points inside each reported interval a fresh CV run on y(z) gives the same
    winner, the same errors (the quadratics) and the same (M, O); where the argmin constraint is what
    ends an interval, the fresh CV winner just outside that end is a different candidate."""
    cv = _cv()
    rng = np.random.default_rng(11)
    switches, checked = 0, 0
    X, y = _data(0)
    choice = cv.tune(X, y)
    winner = cv.candidates[choice.winner]
    g = winner.engine.imputation_matrix(X, y)
    state = {k: choice.model[k] for k in ("features", "outliers")}
    line = feature_line(X, g, y[~np.isnan(y)], state, 0, 1.0)
    along = cv.event_on_line(X, y, line.a, line.b)
    z, winners = -3.0, set()
    while z < 3.0:
        c = along(z)
        assert c.lo <= z <= c.hi
        winners.add(c.winner)
        t = rng.uniform(max(c.lo, z - 1.0), min(c.hi, z + 1.0))
        fresh = cv.tune(X, _y_at(y, line.a, line.b, t))
        assert fresh.winner == c.winner and fresh.model == c.model
        cached = along(t)  # answered from the cached fold quadratics of this interval
        assert cached.winner == c.winner and (cached.lo, cached.hi) == (c.lo, c.hi)
        assert [cached.errors[k] for k in range(4)] == pytest.approx(
            [fresh.errors[k] for k in range(4)], rel=1e-9
        )
        checked += 1
        if c.hi == c.argmin_hi and np.isfinite(c.hi):
            outside = cv.tune(X, _y_at(y, line.a, line.b, c.hi + 1e-6))
            assert outside.winner != c.winner
            switches += 1
        z = c.hi + 1e-6
    assert checked > 30 and switches >= 1 and len(winners) >= 2


def test_one_candidate_reduces_to_the_fixed_pipeline_test():
    X, y = _data(1, n=80, p=8, delta=0.0)
    plain = ENGINES["op1"]
    state = plain.run(X, y, PARAMS["op1"])
    assert state["features"]
    search = {"termination": "exhaustive"}
    ref = plain.test(X, y, PARAMS["op1"], sigma=1.0, features=[0], **search)[0]
    for grid in ({"op1": {}}, {"op1": {"lasso": {"alpha": [0.08, 0.08]}}}):  # one, or duplicated
        cv = _cv(grid)
        assert cv.run(X, y) == state
        got = cv.test(X, y, sigma=1.0, features=[0], **search)[0]
        assert got.feature == ref.feature and got.beta_hat == pytest.approx(ref.beta_hat)
        assert got.result.p_value == pytest.approx(ref.result.p_value, abs=1e-9)
        assert length(got.result.truncation) == pytest.approx(length(ref.result.truncation))


def test_candidate_conditioning_is_finer_than_selection_conditioning():
    X, y = _data(0)
    search = {"termination": "exhaustive"}
    coarse = _cv().test(X, y, sigma=1.0, features=[0], **search)[0].result
    fine = _cv(condition_on="candidate").test(X, y, sigma=1.0, features=[0], **search)[0].result
    assert len(intersection(fine.truncation, coarse.truncation)) > 0
    assert length(intersection(fine.truncation, coarse.truncation)) == pytest.approx(
        length(fine.truncation)
    )
    assert 0.0 <= fine.p_value <= 1.0
    with pytest.raises(ValueError, match="condition_on"):
        _cv(condition_on="winner")


# si4pipeline 1.0.1 (sicore 3.0.0), run offline on these very datasets with
# (op1 | op2) over lasso alpha {0.08, 0.12}, tune(num_folds=5, random_state=0), sigma = 1,
# test_index = 0: (representing index, M, p-value, search count, OC p-value).
OFFICIAL = {
    0: (0, [0, 1, 2, 3, 9], 0.3117, 171, 0.6152),
    1: (0, [0, 1, 2, 3, 9], 0.0002837, 40, 0.3575),
}


@pytest.mark.parametrize("seed", sorted(OFFICIAL))
def test_agrees_with_the_official_package(seed):
    winner, feats, p, count, p_oc = OFFICIAL[seed]
    cv = _cv()
    X, y = _data(seed)
    assert cv.tune(X, y).winner == winner
    res = cv.test(X, y, sigma=1.0, features=[0])[0].result
    assert cv.run(X, y)["features"] == feats
    assert res.p_value == pytest.approx(p, rel=5e-4)
    assert res.search_count == count
    oc = cv.test(X, y, sigma=1.0, features=[0], mode="over_conditioning")[0].result
    assert oc.p_value == pytest.approx(p_oc, rel=5e-4)


@pytest.mark.slow
def test_null_calibration_of_the_cv_test():
    """Type-I error of the CV test at a small scale (R = 60, n = 60, p = 5): parametric and OC
    uniform, naive anti-conservative.

    R = 60 (was 100; each replicate costs ~0.8 CPU-s): the rejection bound is re-derived for it,
    P(Binomial(60, 0.05) > 8) = 0.003 (R = 100 with <= 12: 0.0015); the KS checks keep their 1 %
    false-alarm rate. On these replicates p**1.5 (rejection rate 0.14) and 0.6 * p still fail
    the KS check (p = 0.002 and < 1e-4), as does the naive p-value.

    These bounds hold at seeds 0-5 (benchmarks/si_pipeline_cv_null_seeds.py; parametric rejections
    1-5 of 60). "Naive rejects more often than parametric" does not at R = 60 (seed 1: 0.050 against
    0.083), so it is reported there with its spread, not asserted here."""
    from scipy import stats

    from paper_pipelines.pipelines.si_pipeline.experiments import replicate_tests

    replications = 60
    cv = _cv({"op1": {"lasso": {"alpha": [0.08, 0.12]}}, "op2": {}}, folds=3)
    table, failures = replicate_tests(
        cv,
        {},
        lambda rng: synthetic_data(rng, 60, 5, 0.0, 3, 0.03),
        replications,
        5,
        1.0,
        {},
        "cv null test",
    )
    assert failures == 0 and len(table) == replications
    assert (table["p_parametric"] <= 0.05).sum() <= 8
    assert stats.kstest(table["p_parametric"], "uniform").pvalue > 0.01
    assert stats.kstest(table["p_oc"], "uniform").pvalue > 0.01
