"""Each OD/FS component's decision against its textbook formula, written out directly (Sec. 3.2-3.3):
Cook's distance and DFFITS from the hat matrix, soft-IPOD and lasso via scikit-learn, marginal
screening and forward stepwise by brute force; on the rows outside O and the columns in M."""

import itertools

import numpy as np
import pytest
from pydantic import PositiveFloat, PositiveInt
from sklearn.linear_model import Lasso

from paper_pipelines.pipelines.si_pipeline import components as c


def _data(seed, n=30, p=5):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X @ np.r_[1.0, -0.5, np.zeros(p - 2)] + rng.normal(size=n)
    y[[3, 11]] += [5.0, -4.0]  # two outliers
    return X, y


STATE = c.make_state([0, 1, 3, 4], [7])  # column 2 dropped, row 7 already an outlier


def _kept(X, y, state):
    rows = np.setdiff1d(np.arange(len(y)), state["outliers"])
    return rows, X[np.ix_(rows, state["features"])], y[rows]


def _hat_and_residuals(xs, ys):
    h = np.diag(xs @ np.linalg.inv(xs.T @ xs) @ xs.T)
    r = ys - xs @ np.linalg.lstsq(xs, ys, rcond=None)[0]
    return h, r


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("lam", [0.5, 1.0, 4.0])
def test_cook_distance_flags_d_at_least_lam_over_n(seed, lam):
    """Cook (1977): D_i = r_i^2 h_i / (p s^2 (1 - h_i)^2), s^2 = RSS / (n - p); flag D_i >= lam / n."""
    X, y = _data(seed)
    rows, xs, ys = _kept(X, y, STATE)
    n, p = xs.shape
    h, r = _hat_and_residuals(xs, ys)
    d = r**2 * h / (p * (r @ r) / (n - p) * (1 - h) ** 2)
    flagged = set(rows[d >= lam / n].tolist())
    assert flagged  # the cases flag something, so the comparison is not vacuous
    out = c.cook_distance(X, y, STATE, lam)
    assert out == c.make_state(STATE["features"], flagged | {7})


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("lam", [1.0, 2.0, 4.0])
def test_dffits_flags_dffits_squared_at_least_lam_p_over_n_minus_p(seed, lam):
    """Belsley et al. (1980): DFFITS_i = r_i sqrt(h_i) / (s_(i) (1 - h_i)) with the leave-one-out
    s_(i)^2 = (RSS - r_i^2 / (1 - h_i)) / (n - p - 1); flag DFFITS_i^2 >= lam p / (n - p)."""
    X, y = _data(seed)
    rows, xs, ys = _kept(X, y, STATE)
    n, p = xs.shape
    h, r = _hat_and_residuals(xs, ys)
    s2_loo = (r @ r - r**2 / (1 - h)) / (n - p - 1)
    dffits2 = r**2 * h / (s2_loo * (1 - h) ** 2)
    flagged = set(rows[dffits2 >= lam * p / (n - p)].tolist())
    assert flagged
    assert c.dffits(X, y, STATE, lam) == c.make_state(STATE["features"], flagged | {7})


@pytest.mark.parametrize("lam", [0.02, 0.05, 0.1])
def test_soft_ipod_is_the_lasso_on_the_annihilated_design(lam):
    """She & Owen (2011): with P = I - H, the mean-shifts are the lasso of P y on P."""
    X, y = _data(2)
    rows, xs, ys = _kept(X, y, STATE)
    proj = np.eye(len(rows)) - xs @ np.linalg.inv(xs.T @ xs) @ xs.T
    gamma = Lasso(alpha=lam, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(proj, proj @ ys)
    flagged = set(rows[np.abs(gamma.coef_) > 1e-9].tolist())
    assert flagged
    assert c.soft_ipod(X, y, STATE, lam) == c.make_state(STATE["features"], flagged | {7})


@pytest.mark.parametrize("alpha", [0.05, 0.2, 0.5])
def test_lasso_selection_is_scikit_learns(alpha):
    X, y = _data(3)
    _, xs, ys = _kept(X, y, STATE)
    coef = Lasso(alpha=alpha, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(xs, ys).coef_
    chosen = np.asarray(STATE["features"])[np.abs(coef) > 1e-9].tolist()
    assert chosen
    assert c.lasso(X, y, STATE, alpha) == {"features": chosen, "outliers": [7]}


@pytest.mark.parametrize("k", [1, 2, 3])
def test_marginal_screening_keeps_the_k_largest_correlations(k):
    X, y = _data(4)
    _, xs, ys = _kept(X, y, STATE)
    top = np.argsort(-np.abs(xs.T @ ys))[:k]
    expected = sorted(np.asarray(STATE["features"])[top].tolist())
    assert c.marginal_screening(X, y, STATE, k) == {"features": expected, "outliers": [7]}
    # k at least the number of kept features keeps them all, on the whole line
    out, lo, hi = c.marginal_screening_event(X, y, np.ones_like(y), 0.3, STATE, 4)
    assert out == STATE and (lo, hi) == (-np.inf, np.inf)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_stepwise_adds_the_feature_that_lowers_the_rss_most(k):
    X, y = _data(5)
    _, xs, ys = _kept(X, y, STATE)

    def rss(cols):
        sub = xs[:, cols]
        return float(np.sum((ys - sub @ np.linalg.lstsq(sub, ys, rcond=None)[0]) ** 2))

    order: list[int] = []
    for _ in range(k):
        rest = [j for j in range(xs.shape[1]) if j not in order]
        order.append(min(rest, key=lambda j: rss([*order, j])))
    feats = np.asarray(STATE["features"])
    memo: dict = {}
    out, lo, hi = c.stepwise_event(X, y, np.zeros_like(y), 0.0, STATE, k, memo=memo)
    assert memo["order"] == feats[order].tolist()
    assert out == {"features": sorted(feats[order].tolist()), "outliers": [7]}
    assert c.stepwise_feature_selection(X, y, STATE, k) == out
    # rescaling the columns changes no residual sum of squares, so neither the order (columns of
    # norm below 1 included)
    small: dict = {}
    c.stepwise_event(X * 0.01, y, np.zeros_like(y), 0.0, STATE, k, memo=small)
    assert small["order"] == memo["order"]
    # the last step is the best single addition to the earlier ones
    assert rss(order) <= min(rss([*order[:-1], j]) for j in range(4) if j not in order[:-1])
    out, lo, hi = c.stepwise_event(X, y, np.ones_like(y), 0.0, STATE, 4)
    assert out == STATE and (lo, hi) == (-np.inf, np.inf)


def test_union_and_intersection_of_three_states():
    s = [c.make_state([0, 1], [4]), c.make_state([1, 2], [4, 5]), c.make_state([1, 3], [4, 6])]
    assert c.union(*s) == {"features": [0, 1, 2, 3], "outliers": [4, 5, 6]}
    assert c.intersection(*s) == {"features": [1], "outliers": [4]}
    assert c.make_state(np.array([3, 1]), (np.int64(2),)) == {"features": [1, 3], "outliers": [2]}
    assert all(type(i) is int for i in c.make_state(np.array([3, 1]), [])["features"])


def test_registry_reads_hyperparameters_from_signatures():
    assert c.REGISTRY["cook_distance"].hyper == (("lam", PositiveFloat),)
    assert c.REGISTRY["marginal_screening"].hyper == (("k", PositiveInt),)
    assert c.REGISTRY["lasso"].hyper == (("alpha", PositiveFloat),)
    assert c.REGISTRY["union"].hyper == () and c.REGISTRY["union"].kind == "set_operation"
    assert c.REGISTRY["mean_value_imputation"].kind == "imputation"
    assert c.REGISTRY["soft_ipod"].event is c.soft_ipod_event
    assert c.component_spec(c.lasso) is c.REGISTRY["lasso"]
    assert c.component_spec(len) is None
    with pytest.raises(ValueError, match="component kind must be one of .* got 'filter'"):
        c.si_component("filter")

    @c.si_component("feature_selection", event=c.lasso_fs_event)
    def my_selector(X, y, state, alpha: PositiveFloat, depth):
        return state

    try:
        spec = c.component_spec(my_selector)
        assert spec.name == "my_selector" and spec.kind == "feature_selection"
        assert [name for name, _ in spec.hyper] == ["alpha", "depth"]
        assert spec.hyper[1][1] is not PositiveFloat  # unannotated: anything
    finally:
        del c.REGISTRY["my_selector"]


def test_degenerate_states_are_named():
    X, y = _data(0)
    with pytest.raises(
        c.DegenerateStateError, match="component lasso: the input state has no features"
    ):
        c.lasso(X, y, c.make_state([], []), 0.1)
    # 6 rows left (30 - 24) for 5 features is fine; 5 rows is not
    c.cook_distance(X, y, c.make_state(range(5), range(24)), 1.0)
    with pytest.raises(
        c.DegenerateStateError, match="component dffits: 5 rows remain .* 5 features"
    ):
        c.dffits(X, y, c.make_state(range(5), range(25)), 1.0)


def test_imputers_by_hand_on_a_two_column_table():
    """Row 3 (the origin) is missing; which observed row is nearest depends on the metric."""
    X = np.array([[1.5, 1.5], [0.0, 2.2], [2.0, 0.1], [0.0, 0.0]])
    y_raw = np.array([10.0, 20.0, 30.0, np.nan])
    # L2: 2.12, 2.2, 2.0 -> row 2; L1: 3.0, 2.2, 2.1 -> row 2; Linf: 1.5, 2.2, 2.0 -> row 0
    assert c.euclidean_imputation(X, y_raw)[3] == 30.0
    assert c.manhattan_imputation(X, y_raw)[3] == 30.0
    assert c.chebyshev_imputation(X, y_raw)[3] == 10.0
    assert c.mean_value_imputation(X, y_raw).tolist() == [10.0, 20.0, 30.0, 20.0]
    X2 = np.array([[3.0, 0.0], [0.0, 2.9], [2.0, 2.0], [0.0, 0.0]])
    # L2: 3.0, 2.9, 2.83 -> row 2; L1: 3.0, 2.9, 4.0 -> row 1; Linf: 3.0, 2.9, 2.0 -> row 2
    assert c.manhattan_imputation(X2, y_raw)[3] == 20.0
    assert c.euclidean_imputation(X2, y_raw)[3] == 30.0
    # OLS from the observed rows: y = 10 + 10 x fits them exactly, so x = 5 gives 60
    Xr = np.array([[1.0, 0.0], [1.0, 1.0], [1.0, 2.0], [1.0, 5.0]])
    assert c.definite_regression_imputation(Xr, y_raw)[3] == pytest.approx(60.0)
    assert list(itertools.islice(c.definite_regression_imputation(Xr, y_raw), 3)) == [10, 20, 30]


def test_the_rank_check_is_relative_to_the_scale_of_the_design():
    """A well-conditioned design measured in tiny units is not rank-deficient: the flags are those of
    the design in ordinary units (Cook's distance is scale-free in X)."""
    X, y = _data(0)
    assert c.cook_distance(X * 1e-12, y, STATE, 1.0) == c.cook_distance(X, y, STATE, 1.0)
