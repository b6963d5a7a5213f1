"""Components: imputation matrices by hand, and acceptance check 8 for every OD/FS event."""

import numpy as np
import pytest

from paper_pipelines.pipelines.si_pipeline import components as c
from paper_pipelines.pipelines.si_pipeline.imputation import (
    euclidean_imputation_matrix,
    mean_imputation_matrix,
    regression_imputation_matrix,
)
from paper_pipelines.pipelines.si_pipeline.lasso_polyhedron import (
    lasso_active_set,
    lasso_constraints,
)


def test_mean_and_nearest_imputation_by_hand():
    X = np.array([[0.0], [1.0], [5.0], [0.9]])
    missing = np.array([False, False, False, True])
    g = mean_imputation_matrix(X, missing)
    np.testing.assert_allclose(g @ [3.0, 6.0, 9.0], [3.0, 6.0, 9.0, 6.0])
    g = euclidean_imputation_matrix(X, missing)  # row 3 (x=0.9) is nearest to row 1 (x=1)
    np.testing.assert_allclose(g @ [3.0, 6.0, 9.0], [3.0, 6.0, 9.0, 6.0])
    y_raw = np.array([3.0, 6.0, 9.0, np.nan])
    np.testing.assert_allclose(c.euclidean_imputation(X, y_raw), [3.0, 6.0, 9.0, 6.0])


def test_regression_imputation_recovers_exact_linear_response():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 2))
    y = X @ np.array([1.5, -2.0])
    missing = np.zeros(8, bool)
    missing[[2, 5]] = True
    np.testing.assert_allclose(regression_imputation_matrix(X, missing) @ y[~missing], y)


def test_all_missing_fails_clearly():
    with pytest.raises(ValueError, match="every response value is missing"):
        c.mean_value_imputation(np.ones((3, 1)), np.full(3, np.nan))


def test_set_operations_and_structural_nodes():
    s1 = c.make_state([0, 2], [5])
    s2 = c.make_state([2, 3], [5])
    assert c.union(s1, s2) == {"features": [0, 2, 3], "outliers": [5]}
    assert c.intersection(s1, s2) == {"features": [2], "outliers": [5]}
    assert c.remove_outliers(s1) == s1 and c.extract_features(s2) == s2
    assert c.initial_state(np.zeros((4, 3))) == {"features": [0, 1, 2], "outliers": []}


def test_too_few_rows_after_outlier_removal():
    X = np.random.default_rng(0).normal(size=(5, 4))
    state = c.make_state(range(4), [0, 1])
    with pytest.raises(ValueError, match="need n > p"):
        c.lasso(X, np.ones(5), state, 0.1)


def test_lasso_active_set_matches_kkt_and_repairs_breakpoints():
    rng = np.random.default_rng(1)
    D, w = rng.normal(size=(30, 8)), rng.normal(size=30)
    active, signs = lasso_active_set(D, w, 0.1)
    intercept, _ = lasso_constraints(D, w, np.zeros(30), 0.1, active, signs)
    assert intercept.max() <= 1e-10 and len(active) > 0
    # exactly at lambda_max (+1e-12): the first variable is entering; the answer must satisfy KKT
    lam = np.max(np.abs(D.T @ w)) / 30 * (1 - 1e-12)
    active, signs = lasso_active_set(D, w, lam)
    intercept, _ = lasso_constraints(D, w, np.zeros(30), lam, active, signs)
    assert intercept.max() <= 1e-6


EVENTS = [
    ("soft_ipod", c.soft_ipod_event, 0.05),
    ("cook_distance", c.cook_distance_event, 2.0),
    ("dffits", c.dffits_event, 2.0),
    ("marginal_screening", c.marginal_screening_event, 3),
    ("stepwise", c.stepwise_event, 3),
    ("lasso", c.lasso_fs_event, 0.08),
]


def _decision(event, X, a, b, z, state, hyper):
    memo: dict = {}
    out = event(X, a, b, z, state, hyper, memo=memo)
    return out, (tuple(out[0]["features"]), tuple(out[0]["outliers"]), tuple(memo.get("order", ())))


@pytest.mark.parametrize("name, event, hyper", EVENTS, ids=[e[0] for e in EVENTS])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_event_interval_is_exact(name, event, hyper, seed):
    """Check 8: the interval contains z, the output is constant at 20 points inside it and
    changes just outside at least one finite end."""
    rng = np.random.default_rng(seed)
    n, p = 40, 6
    X = rng.normal(size=(n, p))
    a = X @ np.r_[1.0, -0.8, np.zeros(p - 2)] + rng.normal(size=n)
    a[:2] += 4.0  # two clear outliers for the OD components
    b = rng.normal(size=n) / np.sqrt(n) * 3
    state = c.make_state(range(p), [7])
    z = 0.3
    (out, lo, hi), dec = _decision(event, X, a, b, z, state, hyper)
    assert lo <= z <= hi
    assert np.isfinite(lo) or np.isfinite(hi), f"{name}: decision never changes along the line?"
    inside = rng.uniform(max(lo, z - 5), min(hi, z + 5), size=20)
    for t in inside:
        assert _decision(event, X, a, b, t, state, hyper)[1] == dec
    changed = []
    for end, sgn in ((lo, -1.0), (hi, 1.0)):
        if np.isfinite(end):
            t = end + sgn * 1e-7 * max(1.0, abs(end))
            changed.append(_decision(event, X, a, b, t, state, hyper)[1] != dec)
    assert any(changed)


def test_run_equals_event_at_observed_point():
    rng = np.random.default_rng(3)
    X, y = rng.normal(size=(30, 5)), rng.normal(size=30)
    state = c.initial_state(X)
    assert c.lasso(X, y, state, 0.05) == c.lasso_fs_event(X, y, np.zeros(30), 0.0, state, 0.05)[0]
    assert c.stepwise_feature_selection(X, y, state, 2)["features"] == sorted(
        c.stepwise_event(X, y, np.zeros(30), 0.0, state, 2)[0]["features"]
    )
