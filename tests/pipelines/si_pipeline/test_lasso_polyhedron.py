"""The lasso's selection event (Lee et al. 2016) on an orthogonal design, where the lasso is
soft-thresholding and every constraint can be written down by hand."""

import numpy as np
import pytest

from paper_pipelines.pipelines.si_pipeline import lasso_polyhedron as lp

# D^T D = N I with N = 4 rows, so u_j = soft(D_j^T w / N, lam) = soft(w_j / 2, lam)
D = np.array([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0], [0.0, 0.0]])
W = np.array([3.0, 0.5, 1.0, -1.0])  # D^T w / N = (1.5, 0.25)
LAM = 0.5  # u = (1.0, 0): only the first variable is active, with sign +


def test_constraints_by_hand():
    """Along w(z) = W + (0, 2, 0, 0) z: u_1 = 1 (slope 0); the inactive correlation is 0.25 + z,
    so |0.25 + z| <= 0.5 gives rows -0.25 + z <= 0 and -0.75 - z <= 0."""
    wb = np.array([0.0, 2.0, 0.0, 0.0])
    intercept, slope = lp.lasso_constraints(D, W, wb, LAM, np.array([0]), np.array([1.0]))
    np.testing.assert_allclose(intercept, [-1.0, -0.25, -0.75])
    np.testing.assert_allclose(slope, [0.0, 1.0, -1.0])
    active, signs, lo, hi = lp.lasso_event(D, W, wb, 0.0, LAM)
    assert active.tolist() == [0] and signs.tolist() == [1.0]
    assert (lo, hi) == pytest.approx((-0.75, 0.25))
    # moving the active variable instead: u_1 = 1 + z > 0 for z > -1; nothing bounds it above
    _, _, lo, hi = lp.lasso_event(D, W, np.array([2.0, 0.0, 0.0, 0.0]), 0.0, LAM)
    assert lo == pytest.approx(-1.0) and hi == np.inf


def test_constraints_with_no_active_variable():
    # lam = 2 above both correlations (1.5, 0.25): rows c - lam and -c - lam only
    intercept, slope = lp.lasso_constraints(D, W, np.zeros(4), 2.0, np.array([], int), np.array([]))
    np.testing.assert_allclose(intercept, [-0.5, -1.75, -3.5, -2.25])
    np.testing.assert_allclose(slope, 0.0)
    active, signs = lp.lasso_active_set(D, W, 2.0)
    assert active.tolist() == [] and signs.tolist() == []


def test_a_negative_coefficient_has_a_negative_sign_row():
    w = np.array([-3.0, 0.5, 1.0, -1.0])  # u = (-1, 0)
    active, signs = lp.lasso_active_set(D, w, LAM)
    assert active.tolist() == [0] and signs.tolist() == [-1.0]
    intercept, _ = lp.lasso_constraints(D, w, np.zeros(4), LAM, active, signs)
    assert intercept[0] == pytest.approx(-1.0)  # -s u = -(-1)(-1)
    gram_rows = lp.lasso_constraints_gram(D.T @ D, D.T @ w, np.zeros(2), 4, LAM, active, signs)
    np.testing.assert_allclose(gram_rows[0], intercept)


def test_repair_adds_the_entering_and_drops_the_sign_flipped_variable():
    gram, dtw = D.T @ D, D.T @ W
    # from the empty set: variable 0 (correlation 1.5 > 0.5) enters with sign +
    active, signs = lp._repair(gram, dtw, 4, LAM, np.array([], int), np.array([]))
    assert active.tolist() == [0] and signs.tolist() == [1.0]
    # from {0, 1} with signs (+, +): u_2 = 0.25 - 0.5 < 0 violates its sign, so it leaves
    active, signs = lp._repair(gram, dtw, 4, LAM, np.array([0, 1]), np.array([1.0, 1.0]))
    assert active.tolist() == [0] and signs.tolist() == [1.0]
    worst, rows = lp._violation(gram, dtw, 4, LAM, np.array([0]), np.array([1.0]))
    assert worst == pytest.approx(-0.25) and rows.tolist() == pytest.approx([-1.0, -0.25, -0.75])
    # a correct set is left alone
    same = lp._repair(gram, dtw, 4, LAM, np.array([0]), np.array([1.0]))
    assert same[0].tolist() == [0]


def test_repair_keeps_the_active_set_sorted_and_signed():
    # correlations (1.5, -0.9): at lam = 0.5 both are active, the second with sign -
    w = np.array([3.0, -1.8, 0.0, 0.0])
    active, signs = lp._repair(D.T @ D, D.T @ w, 4, LAM, np.array([1]), np.array([-1.0]))
    assert active.tolist() == [0, 1] and signs.tolist() == [1.0, -1.0]


def test_hint_and_memo():
    hint = (np.array([0]), np.array([1.0]))
    assert lp.lasso_active_set(D, W, LAM, hint=hint) is hint  # a valid hint is the answer
    # a hint one variable off is moved to the right set
    moved = lp.lasso_active_set(D, W, LAM, hint=(np.array([], int), np.array([])))
    assert moved[0].tolist() == [0] and moved[1].tolist() == [1.0]
    # the event keeps its answer as a warm start; with or without it the answer is the same
    memo: dict = {}
    kept = lp.lasso_event(D, W, np.zeros(4), 0.0, LAM, memo)
    plain = lp.lasso_event(D, W, np.zeros(4), 0.0, LAM)
    assert memo and kept[0].tolist() == plain[0].tolist() == [0]


def test_active_set_matches_coordinate_descent_on_a_generic_design():
    from sklearn.linear_model import Lasso

    rng = np.random.default_rng(5)
    X, y = rng.normal(size=(25, 6)), rng.normal(size=25)
    for lam in (0.05, 0.15, 0.3):
        coef = Lasso(alpha=lam, fit_intercept=False, tol=1e-12, max_iter=100_000).fit(X, y).coef_
        active, signs = lp.lasso_active_set(X, y, lam)
        assert active.tolist() == np.flatnonzero(np.abs(coef) > 1e-10).tolist()
        np.testing.assert_array_equal(signs, np.sign(coef[active]))


def test_a_wrong_hint_is_not_accepted():
    """The hint {0, 1} (+, +) violates the sign row of variable 1 by 0.25: it is moved to {0}."""
    active, signs = lp.lasso_active_set(D, W, LAM, hint=(np.array([0, 1]), np.array([1.0, 1.0])))
    assert active.tolist() == [0] and signs.tolist() == [1.0]


# four orthogonal columns, D^T D = 4 I: correlations D^T w / N = w / 2
D4 = 2.0 * np.eye(4)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_one_repair_step_adds_the_most_violating_variable(sign):
    """Correlations (1.5, 0.1, 0.9 s, 0.2) at lam = 0.5, from {0}: one homotopy move adds variable 2
    (its correlation exceeds lam by 0.4) with the sign s of its correlation."""
    w = 2.0 * np.array([1.5, 0.1, 0.9 * sign, 0.2])
    gram, dtw = D4.T @ D4, D4.T @ w
    active, signs = lp._repair(gram, dtw, 4, LAM, np.array([0]), np.array([1.0]), steps=1)
    assert active.tolist() == [0, 2] and signs.tolist() == [1.0, sign]
    assert lp.lasso_active_set(D4, w, LAM)[0].tolist() == [0, 2]
