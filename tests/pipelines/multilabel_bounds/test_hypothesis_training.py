"""The classes F (projections, gradients) and the projected-Adam ERM."""

import numpy as np
import pytest

from paper_pipelines.pipelines.multilabel_bounds import hypothesis, training


def test_column_projection_keeps_direction_and_inner_points():
    m = np.array([[3.0, 0.1], [4.0, 0.0]])  # column norms 5 and 0.1
    p = hypothesis.project_columns(m, 1.0)
    np.testing.assert_allclose(p[:, 0], [0.6, 0.8])
    np.testing.assert_allclose(p[:, 1], [0.1, 0.0])
    p2 = hypothesis.project_columns(m, np.array([10.0, 0.05]))
    np.testing.assert_allclose(p2, [[3.0, 0.05], [4.0, 0.0]])


def test_frobenius_projection():
    m = np.full((2, 2), 1.0)  # ||m||_F = 2
    np.testing.assert_allclose(hypothesis.project_frobenius(m, 1.0), m / 2)
    assert hypothesis.project_frobenius(m, 3.0) is m


def test_lowrank_projection_bounds_a_and_each_b():
    rng = np.random.default_rng(0)
    params = {"A": 10 * rng.standard_normal((6, 3)), "B": 10 * rng.standard_normal((3, 4))}
    p = hypothesis.project(params, 2.0)
    assert np.linalg.norm(p["A"]) == pytest.approx(np.sqrt(3))
    np.testing.assert_allclose(np.linalg.norm(p["B"], axis=0), 2.0)


def test_mlp_projection_bounds_each_hidden_unit_and_each_b():
    v = np.array([[3.0, 0.3], [4.0, 0.4]])  # hidden-unit norms 5 and 0.5
    b = np.array([[6.0, 0.0], [8.0, 1.0]])  # label norms 10 and 1
    p = hypothesis.project({"V": v, "B": b}, 2.0)
    np.testing.assert_allclose(p["V"], [[0.6, 0.3], [0.8, 0.4]])
    np.testing.assert_allclose(p["B"], [[1.2, 0.0], [1.6, 1.0]])


def test_mlp_scores_by_hand():
    # f(x) = B^T tanh(V^T x): x = (1, 2), hidden units v_1 = (0.5, 0), v_2 = (0, -0.25)
    params = {"V": np.array([[0.5, 0.0], [0.0, -0.25]]), "B": np.array([[2.0, 0.0], [1.0, 3.0]])}
    h1, h2 = np.tanh(0.5), np.tanh(-0.5)
    np.testing.assert_allclose(
        hypothesis.scores(params, np.array([[1.0, 2.0]])), [[2 * h1 + h2, 3 * h2]]
    )
    # and its gradient for dL/df = (1, 0): dB = tanh(V^T x) e_1^T, dV = x (b_1 * (1 - tanh^2))^T
    g = hypothesis.score_gradients(params, np.array([[1.0, 2.0]]), np.array([[1.0, 0.0]]))
    np.testing.assert_allclose(g["B"], [[h1, 0.0], [h2, 0.0]])
    back = np.array([2.0 * (1 - h1**2), 1.0 * (1 - h2**2)])
    np.testing.assert_allclose(g["V"], np.outer([1.0, 2.0], back))


@pytest.mark.parametrize("kind", ["linear", "lowrank", "mlp"])
def test_score_gradients_match_finite_differences(kind):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((5, 4))
    params = hypothesis.init_params(kind, 4, 3, 2, rng, lam=1.0)
    g = rng.standard_normal((5, 3))  # objective sum(g * f)
    grads = hypothesis.score_gradients(params, x, g)
    for key, value in params.items():
        bump = np.zeros_like(value)
        bump.flat[1] = 1e-6
        up = {**params, key: value + bump}
        down = {**params, key: value - bump}
        numeric = (g * (hypothesis.scores(up, x) - hypothesis.scores(down, x))).sum() / 2e-6
        assert grads[key].flat[1] == pytest.approx(numeric, rel=1e-5)


@pytest.mark.parametrize("loss", ["squared", "logistic", "squared_hinge"])
@pytest.mark.parametrize("per_label", [False, True])
def test_mlp_risk_gradient_matches_finite_differences_of_the_risk(loss, per_label):
    """The whole chain, loss and tanh layer: every entry of V and B against central differences."""
    from paper_pipelines.pipelines.multilabel_bounds.losses import surrogate_risk

    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 3))
    y = np.where(rng.standard_normal((6, 2)) > 0, 1.0, -1.0)
    params = hypothesis.init_params("mlp", 3, 2, 4, rng, lam=1.5)
    grads = training.risk_gradient(params, x, y, loss, per_label)
    scale = (
        2.0 if per_label else 1.0
    )  # per label: sum_j (1/n) sum_i, i.e. c times the mean over n c terms
    for key, value in params.items():
        for i in range(value.size):
            bump = np.zeros_like(value)
            bump.flat[i] = 1e-6
            up = surrogate_risk(hypothesis.scores({**params, key: value + bump}, x), y, loss)
            down = surrogate_risk(hypothesis.scores({**params, key: value - bump}, x), y, loss)
            numeric = scale * (up - down) / 2e-6
            assert grads[key].flat[i] == pytest.approx(numeric, rel=1e-4, abs=1e-8)


def test_init_points_lie_in_the_class():
    rng = np.random.default_rng(2)
    w = hypothesis.init_params("linear", 5, 3, 2, rng, lam=4.0)["W"]
    np.testing.assert_allclose(np.linalg.norm(w, axis=0), 4.0)
    low = hypothesis.init_params("lowrank", 5, 3, 2, rng)
    assert np.linalg.norm(low["A"]) == pytest.approx(np.sqrt(2)) and not low["B"].any()
    mlp = hypothesis.init_params(
        "mlp", 2, 3, 4, rng
    )  # 4 hidden units > d = 2: unit, not orthonormal
    np.testing.assert_allclose(np.linalg.norm(mlp["V"], axis=0), 1.0)
    assert mlp["V"].shape == (2, 4) and mlp["B"].shape == (4, 3) and not mlp["B"].any()
    start = hypothesis.init_params("mlp", 2, 3, 4, rng, lam=4.0)
    np.testing.assert_allclose(np.linalg.norm(start["B"], axis=0), 4.0)
    np.testing.assert_allclose(np.linalg.norm(start["V"], axis=0), 1.0)
    with pytest.raises(ValueError, match="unknown model class 'tree'"):
        hypothesis.init_params("tree", 5, 3, 2, rng)


def test_learning_rate_decays_like_one_over_sqrt():
    assert training.lr_schedule(0.1, 0) == 0.1
    assert training.lr_schedule(0.1, 300) == pytest.approx(0.05)


def _toy(seed=0, n=80, d=6, c=4):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, d)) / np.sqrt(d)
    y = np.where(x @ rng.standard_normal((d, c)) > 0, 1.0, -1.0)
    return x, y, rng


def test_decoupled_fit_on_a_prefix_equals_the_prefix_of_the_full_fit():
    x, y, _ = _toy()
    full = training.fit(x, y, "logistic", "linear", 3.0, 2, 100, 0.1, np.random.default_rng(0))
    part = training.fit(
        x, y[:, :2], "logistic", "linear", 3.0, 2, 100, 0.1, np.random.default_rng(0)
    )
    np.testing.assert_array_equal(full["W"][:, :2], part["W"])


def test_constrained_fit_is_near_the_ridge_optimum_at_the_matched_radius():
    """Squared loss, ||w_j|| <= ||w_ridge_j||: the constrained minimiser is the penalised one (Lagrange), so
    no point of the class has a lower risk, and projected Adam must come within 3 % of it."""
    from paper_pipelines.pipelines.multilabel_bounds.losses import surrogate_per_label

    x, y, _ = _toy(n=200)
    alpha = 5.0
    w_ridge = np.linalg.solve(x.T @ x + alpha * np.eye(x.shape[1]), x.T @ y)
    lam = np.linalg.norm(w_ridge, axis=0)
    ours = training.fit(x, y, "squared", "linear", lam, 2, 600, 0.1, np.random.default_rng(0))
    assert np.all(np.linalg.norm(ours["W"], axis=0) <= lam * (1 + 1e-5))
    best = surrogate_per_label(x @ w_ridge, y, "squared")
    found = surrogate_per_label(x @ ours["W"].astype(float), y, "squared")
    assert np.all(found >= best - 1e-6)
    np.testing.assert_allclose(found, best, rtol=0.03)  # measured: about 2 % (boundary bias, docs)
    # and the same classifier on the training points
    assert (np.sign(x @ ours["W"]) == np.sign(x @ w_ridge)).mean() > 0.97


@pytest.mark.parametrize("kind", ["linear", "lowrank", "mlp"])
@pytest.mark.parametrize("loss", ["squared", "hinge"])
def test_training_lowers_the_risk_and_stays_in_the_class(kind, loss):
    from paper_pipelines.pipelines.multilabel_bounds.losses import surrogate_risk

    x, y, rng = _toy()
    params = training.fit(x, y, loss, kind, 2.0, 2, 200, 0.1, rng)
    start = hypothesis.init_params(kind, x.shape[1], y.shape[1], 2, np.random.default_rng(0))
    before = surrogate_risk(hypothesis.scores(start, x), y, loss)
    after = surrogate_risk(hypothesis.scores(params, x).astype(float), y, loss)
    assert after < 0.8 * before
    if kind == "linear":
        assert np.linalg.norm(params["W"], axis=0).max() <= 2.0 * (1 + 1e-5)
    elif kind == "mlp":
        assert np.linalg.norm(params["V"], axis=0).max() <= 1.0 + 1e-5
        assert np.linalg.norm(params["B"], axis=0).max() <= 2.0 * (1 + 1e-5)
    else:
        assert np.linalg.norm(params["A"]) <= np.sqrt(2) * (1 + 1e-5)
        assert np.linalg.norm(params["B"], axis=0).max() <= 2.0 * (1 + 1e-5)
