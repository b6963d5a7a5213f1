"""Small hand-checkable cases for the parts of SRCA the end-to-end checks do not pin down."""

import math

import numpy as np
import pytest

from paper_pipelines.pipelines.srca.coranking import coranking_matrix, coranking_scores, rank_matrix
from paper_pipelines.pipelines.srca.data import noisy_circle, noisy_sphere, synthetic_cell_cycle
from paper_pipelines.pipelines.srca.ellipsoid import minimum_volume_ellipsoid
from paper_pipelines.pipelines.srca.geometric_loss import (
    SphereFit,
    _algebraic_centre,
    fit_sphere_on_axes,
    fit_sphere_weighted,
    geometric_loss,
    plane_limit,
    squared_distance_to_sphere,
)
from paper_pipelines.pipelines.srca.metrics import phase_recovery, reconstruction_mse
from paper_pipelines.pipelines.srca.rotation import principal_rotation
from paper_pipelines.pipelines.srca.spherelets import fit_spherelet, project_spherelet
from paper_pipelines.pipelines.srca.srca import SRCAModel, fit_srca, project, reduced_coordinates
from paper_pipelines.pipelines.srca.subset_search import (
    exhaustive_search,
    greedy_search,
    l1_relaxed_indicator,
    resolve_search,
    search_axes,
    subsets_by_variance,
)


def _circle(seed=1, n=80, D=5):
    return noisy_circle(n, D, 2.0, 0.1, 0.5, seed=seed)["X"]


# ----------------------------------------------------------------------------- fit_srca and projection


def test_fitted_loss_is_the_sum_of_squared_distances_plus_the_penalty():
    X = _circle()
    m = fit_srca(X, 1)
    Y = (X - m.mean) @ m.rotation
    dist = squared_distance_to_sphere(Y, m.axes, m.center_rotated, m.radius).sum()
    assert m.loss == pytest.approx(dist, rel=1e-9)  # lambda = 0 by default
    penalised = fit_srca(X, 1, lambda_penalty=0.5)
    assert penalised.loss == pytest.approx(m.loss + 0.5 * 2, rel=1e-9)  # lambda |I|, |I| = k + 1


def test_search_settings_reach_the_search():
    X = _circle(D=6)
    assert fit_srca(X, 1, subset_search="exhaustive", prune=False).n_subsets == math.comb(6, 2)
    pruned = fit_srca(X, 1, subset_search="exhaustive")
    assert pruned.n_subsets < math.comb(6, 2)  # a circle: the bound stops the search early
    assert fit_srca(X, 1, subset_search="top").n_subsets == 1
    greedy = fit_srca(X, 1, subset_search="greedy")
    assert greedy.search == "greedy" and greedy.n_subsets > 1
    _, used, fits = search_axes(X - X.mean(axis=0), 2, search="exhaustive")
    assert used == "exhaustive" and fits < math.comb(6, 2)  # pruning is on by default


def test_max_iter_caps_the_sphere_fit():
    # a noisy arc: the starting centres are not the minimum, and one evaluation cannot move them
    rng = np.random.default_rng(0)
    t = rng.uniform(0, 1.5, 60)
    X = np.column_stack([np.cos(t), np.sin(t)]) + 0.3 * rng.standard_normal((60, 2))
    X = np.column_stack([X, 0.05 * rng.standard_normal(60)])
    m = fit_srca(X, 1, subset_search="top", max_iter=1)
    Y = (X - m.mean) @ m.rotation
    capped = fit_sphere_on_axes(Y, m.axes, max_iter=1)
    full = fit_sphere_on_axes(Y, m.axes)
    assert m.loss == pytest.approx(capped.loss, rel=1e-12)
    assert capped.loss > full.loss * (1 + 1e-5)


def test_a_point_at_the_centre_goes_to_a_pole_of_the_sphere_or_ellipsoid():
    """A hand-made model (no rotation, centre (1, 2, 0) on axes 0, 1, r = 2): the centre itself has
    no direction and goes to the pole along the first axis, at radius r in the model's metric."""
    model = SRCAModel(
        mean=np.zeros(3),
        rotation=np.eye(3),
        axes=(0, 1),
        center_rotated=np.array([1.0, 2.0, 0.0]),
        radius=2.0,
        loss=0.0,
        k=1,
        search="top",
        n_subsets=1,
    )
    points = np.array([[1.0, 2.0, 0.0], [1.0, 5.0, 7.0]])
    np.testing.assert_allclose(project(model, points), [[3.0, 2.0, 0.0], [1.0, 4.0, 0.0]])
    # ellipsoid W = diag(4, 9, 1): the pole is (1, 0) r / sqrt(W_00) = (1, 0) from the centre
    model.weight = np.diag([4.0, 9.0, 1.0])
    np.testing.assert_allclose(reduced_coordinates(model, points[:1]), [[1.0, 0.0]])
    # (0, 3) from the centre has W-norm 9: scaled to r = 2 -> (0, 2/3)
    np.testing.assert_allclose(reduced_coordinates(model, points[1:]), [[0.0, 2.0 / 3.0]])


def test_projection_input_checks_name_the_expected_shape():
    m = fit_srca(_circle(), 1)
    with pytest.raises(ValueError, match=r"points to project must have shape \(n, 5\)"):
        project(m, np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"points to project must have shape \(n, 5\)"):
        project(m, np.zeros(5))


def test_bad_data_messages_name_the_array_and_the_numbers():
    X = np.random.default_rng(0).standard_normal((20, 14))
    X[0, :12] = np.nan
    with pytest.raises(
        ValueError, match=r"^X contains NaN .*columns \[0, 1, 2, 3, 4, 5, 6, 7, 8, 9\]\)"
    ):
        fit_srca(X, 1)
    with pytest.raises(ValueError, match=r"k \+ 2 = 4 points .* got n=3"):
        fit_srca(np.random.default_rng(0).standard_normal((3, 5)), 2)


def test_model_as_dict_holds_the_fitted_arrays():
    m = fit_srca(_circle(), 1)
    d = m.as_dict()
    assert d["axes"] == list(m.axes) and d["loss"] == m.loss and d["weight"] is None
    np.testing.assert_array_equal(d["rotation"], m.rotation)
    np.testing.assert_array_equal(d["center"], m.rotation @ m.center_rotated + m.mean)
    assert d["k"] == 1 and d["n_subsets"] == m.n_subsets and d["radius"] == m.radius


def test_identity_rotation_and_unknown_rotation():
    X = _circle()
    mean, R = principal_rotation(X, "identity")
    np.testing.assert_array_equal(R, np.eye(5))
    np.testing.assert_allclose(mean, X.mean(axis=0))
    with pytest.raises(ValueError, match="rotation must be one of"):
        principal_rotation(X, "svd")


# ----------------------------------------------------------------------------- axis search


def _fake_fit(losses):
    """A sphere fit that returns a loss from a table (and records what it was asked)."""
    asked = []

    def fit(axes):
        asked.append(axes)
        return SphereFit(tuple(axes), np.zeros(4), 1.0, losses[tuple(axes)], 1)

    return fit, asked


def test_subsets_come_in_decreasing_captured_sum():
    col_sq = np.array([1.0, 8.0, 2.0, 4.0])
    # sums: {1,3} 12, {1,2} 10, {0,1} 9, {2,3} 6, {0,3} 5, {0,2} 3
    order = [(1, 3), (1, 2), (0, 1), (2, 3), (0, 3), (0, 2)]
    assert list(subsets_by_variance(col_sq, 2)) == order


def test_exhaustive_search_keeps_the_first_of_equal_losses_and_prunes_by_the_bound():
    col_sq = np.array([8.0, 4.0, 2.0, 1.0])  # total 15
    fit, asked = _fake_fit(dict.fromkeys([(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)], 5.0))
    best, fits = exhaustive_search(fit, col_sq, 2, prune=False)
    assert best.axes == (0, 1) and fits == 6
    # with pruning: after (0, 1) (loss 5) the bound of (0, 2) is 15 - 10 = 5 >= 5: stop
    fit, asked = _fake_fit(dict.fromkeys([(0, 1), (0, 2)], 5.0))
    best, fits = exhaustive_search(fit, col_sq, 2)
    assert asked == [(0, 1)] and fits == 1


def test_greedy_search_by_hand():
    col_sq = np.array([4.0, 3.0, 2.0, 1.0])  # total 10; bound of a pair = 10 - its sum
    losses = {(0,): 9.0, (1,): 7.0, (2,): 8.0, (3,): 9.5}
    losses.update({(0, 1): 6.0, (1, 2): 5.0, (1, 3): 7.0})
    fit, asked = _fake_fit(losses)
    best, fits = greedy_search(fit, col_sq, 2)
    # step 1: (0,) 9; (1,) bound 7 < 9 -> 7; (2,) bound 8 >= 7: stop. Step 2 from {1}:
    # (0, 1) bound 3 -> 6; (1, 2) bound 5 < 6 -> 5; (1, 3) bound 6 >= 5: stop. Top pair (0, 1) seen.
    assert asked == [(0,), (1,), (0, 1), (1, 2), (0, 1)]
    assert best.axes == (1, 2) and fits == 5


def test_greedy_search_ties_and_the_top_axes_candidate():
    col_sq = np.array([4.0, 3.0, 2.0, 1.0])
    # step 1: (0,) 8, then (1,) (bound 7) also 8: equal losses keep the first, and (2,) has bound
    # 8 >= 8: stop. Step 2 from {0}: (0, 1) 4.5, (0, 2) (bound 4) 4.2, (0, 3) bound 5: stop.
    losses = {(0,): 8.0, (1,): 8.0, (0, 1): 4.5, (0, 2): 4.2}
    fit, asked = _fake_fit(losses)
    best, fits = greedy_search(fit, col_sq, 2, penalty=0.0)
    assert asked == [(0,), (1,), (0, 1), (0, 2), (0, 1)]  # then the top pair (0, 1) once more
    assert best.axes == (0, 2) and fits == 5
    # the greedy path {2} -> (1, 2) never meets the top pair (0, 1), which is better and wins
    losses = {(0,): 9.0, (1,): 9.5, (2,): 7.5, (0, 2): 7.0, (1, 2): 6.8, (0, 1): 4.0}
    fit, asked = _fake_fit(losses)
    best, fits = greedy_search(fit, col_sq, 2)
    assert asked == [(0,), (1,), (2,), (0, 2), (1, 2), (0, 1)]
    assert best.axes == (0, 1) and best.loss == 4.0 and fits == 6


def test_greedy_top_axes_break_ties_by_index():
    # 40 axes with tied sums of squares: the top-2 candidate is the first two of the largest value
    col_sq = np.random.default_rng(0).integers(0, 3, 40).astype(float)
    top = tuple(sorted(np.flatnonzero(col_sq == col_sq.max())[:2].tolist()))
    low = int(np.flatnonzero(col_sq == col_sq.min())[0])

    def fit(axes):
        axes = tuple(axes)
        loss = 0.0 if axes == top else 1.0 if axes == (low,) else 100.0
        return SphereFit(axes, np.zeros(40), 1.0, loss, 1)

    # the greedy path starts from `low`, so only the top-axes candidate reaches `top`
    best, _ = greedy_search(fit, col_sq, 2, prune=False)
    assert best.axes == top


def test_auto_search_is_exhaustive_when_small():
    assert resolve_search("auto", 6, 2, 30000) == "exhaustive"
    assert resolve_search("auto", 6, 2, 14) == "greedy"  # C(6, 2) = 15 > 14


def test_l1_relaxation_puts_the_weight_on_the_circle_axes():
    """On a circle in axes 0, 1 (small noise elsewhere) the relaxed indicator is ~(1, 1, 0, ...)."""
    rng = np.random.default_rng(3)
    t = rng.uniform(0, 2 * np.pi, 120)
    for radius in (0.5, 3.0):
        Y = np.column_stack(
            [radius * np.cos(t), radius * np.sin(t), 0.02 * rng.standard_normal((120, 3))]
        )
        Y -= Y.mean(axis=0)
        v = l1_relaxed_indicator(Y, 2)
        assert v[:2] == pytest.approx([1.0, 1.0], abs=1e-3), radius
        assert np.all(np.abs(v[2:]) < 1e-3), radius
        assert v.sum() <= 2 + 1e-6


# ----------------------------------------------------------------------------- sphere fits


def test_algebraic_centre_is_exact_on_a_circle():
    t = np.linspace(0, 2 * np.pi, 7, endpoint=False)
    Z = np.column_stack([1.5 + 2 * np.cos(t), -0.5 + 2 * np.sin(t)])
    np.testing.assert_allclose(_algebraic_centre(Z), [1.5, -0.5], atol=1e-12)


def test_sphere_fit_counts_its_evaluations():
    Y = _circle() - _circle().mean(axis=0)
    fit = fit_sphere_on_axes(Y, (0, 1))
    assert fit.n_evals >= 2  # one least-squares run per start, each at least one evaluation


def test_plane_limit_is_a_real_sphere_far_away():
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((100, 3)) * [20.0, 10.0, 1.0]
    Z -= Z.mean(axis=0)
    c, r, loss = plane_limit(Z)
    rms = np.sqrt((Z**2).sum(axis=1).mean())
    assert np.linalg.norm(c) == pytest.approx(1e4 * rms, rel=1e-12)
    s = np.linalg.norm(Z - c, axis=1)
    # the returned radius and loss are those of the sphere (c, r) itself
    assert r == pytest.approx(s.mean(), rel=1e-12)
    assert loss == pytest.approx(((s - s.mean()) ** 2).sum(), rel=1e-3)


def test_weighted_fit_with_a_scaled_identity_scales_the_euclidean_fit():
    """W = 4 I: L_W(c, 2 r) = 4 L_I(c, r), so the centre is the same, the radius and loss scale."""
    rng = np.random.default_rng(4)
    t = rng.uniform(0, 2 * np.pi, 100)
    Y = np.column_stack([2 * np.cos(t), 2 * np.sin(t), 0.1 * rng.standard_normal(100)])
    Y += 0.1 * rng.standard_normal(Y.shape)
    Y -= Y.mean(axis=0)
    a = fit_sphere_on_axes(Y, (0, 1))
    b = fit_sphere_weighted(Y, (0, 1), 4.0 * np.eye(3))
    assert b.radius == pytest.approx(2 * a.radius, rel=1e-5)
    assert b.loss == pytest.approx(4 * a.loss, rel=1e-6)
    np.testing.assert_allclose(b.center, a.center, atol=1e-4)
    assert isinstance(b.n_evals, int) and b.n_evals > a.n_evals
    v = np.array([1.0, 1.0, 0.0])
    assert b.loss == pytest.approx(geometric_loss(Y, v, b.center, b.radius, W=4 * np.eye(3)))
    pen = fit_sphere_weighted(Y, (0, 1), np.eye(3), lambda_penalty=0.5)
    assert pen.loss == pytest.approx(a.loss + 0.5 * 2, rel=1e-6)


def test_weighted_loss_with_a_diagonal_weight_by_hand():
    # two points, c = 0, r = 1, W = diag(4, 1), I = {0}: (y^T W y) + r^2 - 2 r sqrt(y^T W D_I y)
    Y = np.array([[1.0, 1.0], [0.0, 2.0]])
    W = np.diag([4.0, 1.0])
    expected = (5 + 1 - 2 * 2) + (4 + 1 - 0)
    assert geometric_loss(Y, [1, 0], [0, 0], 1.0, W=W) == pytest.approx(expected, abs=1e-12)


# ----------------------------------------------------------------------------- ellipsoid


def test_khachiyan_one_step_by_hand():
    """1-D points -1, 0, 0, 1 from uniform weights: M = x^2 / 0.5 + 1 = (3, 1, 1, 3), the first
    maximum j = 0, step (3 - 2) / (2 * 2) = 1/4, so u = (7/16, 3/16, 3/16, 3/16), c = -1/4 and
    A = 1 / (sum u x^2 - c^2) = 1 / (10/16 - 1/16) = 16/9."""
    X = np.array([[-1.0], [0.0], [0.0], [1.0]])
    A, c = minimum_volume_ellipsoid(X, tol=1e-12, max_iter=1)
    assert c[0] == pytest.approx(-0.25, abs=1e-12)
    assert A[0, 0] == pytest.approx(16 / 9, rel=1e-12)
    # no step at all: the covariance ellipsoid of the uniform weights, A = 1 / (D var) = 2
    A0, c0 = minimum_volume_ellipsoid(X, tol=1e-12, max_iter=0)
    assert (c0[0], A0[0, 0]) == pytest.approx((0.0, 2.0))


def test_minimum_volume_ellipsoid_converges_to_the_enclosing_interval():
    X = np.array([[-1.0], [0.0], [0.3], [1.0]])
    A, c = minimum_volume_ellipsoid(X, tol=1e-9)
    assert c[0] == pytest.approx(0.0, abs=1e-4)
    assert A[0, 0] == pytest.approx(1.0, abs=1e-4)  # {x : x^2 <= 1}


# ----------------------------------------------------------------------------- spherelets, co-ranking


def test_spherelet_with_the_fewest_points_and_its_centre():
    t = np.array([0.0, 2.0, 4.0])
    X = np.column_stack([np.cos(t), np.sin(t), np.zeros(3)])  # n = k + 2 = 3 points of a circle
    model = fit_spherelet(X, 1)
    assert model.k == 1
    np.testing.assert_allclose(model.center, 0.0, atol=1e-10)
    assert model.radius == pytest.approx(1.0, abs=1e-10)
    # the centre itself has no direction: it stays where it is
    np.testing.assert_allclose(project_spherelet(model, model.center[None, :])[0], model.center)


def test_rank_ties_are_broken_by_index():
    X = np.random.default_rng(0).integers(0, 3, (40, 1)).astype(float)
    R = rank_matrix(X)
    for i in range(40):
        dist = np.abs(X[:, 0] - X[i, 0])
        dist[i] = -1.0
        order = np.lexsort((np.arange(40), dist))  # by distance, then by index
        np.testing.assert_array_equal(R[i, order], np.arange(40))


def test_coranking_scores_of_a_perfect_embedding_by_hand():
    X = np.random.default_rng(1).standard_normal((12, 3))
    s = coranking_scores(X, X)
    assert s["k_max_lcmc"] == 1  # LCMC(K) = 1 - K / (n - 1) peaks at K = 1
    np.testing.assert_allclose(s["rnx"], 1.0)
    assert len(s["rnx"]) == 10  # K = 1..n-2
    with pytest.raises(ValueError, match="same points in both spaces, got 12 and 11"):
        coranking_matrix(X, X[:11])


def test_phase_recovery_by_hand():
    # a - t = (0, pi/4): |1 + e^{i pi/4}| / 2 = cos(pi/8); a + t = (0, 3 pi/4): cos(3 pi/8)
    a, t = np.array([0.0, np.pi / 2]), np.array([0.0, np.pi / 4])
    assert phase_recovery(a, t) == pytest.approx(np.cos(np.pi / 8), abs=1e-12)
    assert phase_recovery(-a, t) == pytest.approx(np.cos(np.pi / 8), abs=1e-12)  # reflection


def test_reconstruction_mse_checks_shapes():
    assert reconstruction_mse([[0.0, 0.0], [1.0, 1.0]], [[3.0, 4.0], [1.0, 1.0]]) == 12.5
    with pytest.raises(ValueError, match=r"must match the data's shape \(2, 2\), got \(2, 3\)"):
        reconstruction_mse(np.zeros((2, 2)), np.zeros((2, 3)))


# ----------------------------------------------------------------------------- second round


def test_lcmc_of_a_perfect_embedding_is_one_minus_k_over_n_minus_one():
    from paper_pipelines.pipelines.srca.coranking import lcmc

    X = np.random.default_rng(2).standard_normal((9, 2))
    K = np.arange(1, 9)
    np.testing.assert_allclose(lcmc(coranking_matrix(X, X)), 1.0 - K / 8)


def test_check_data_returns_floats_and_says_how_to_fix_constant_columns():
    from paper_pipelines.pipelines.srca.srca import check_data

    assert check_data([[1, 2], [3, 5], [0, 1]], 1).dtype == np.float64
    with pytest.raises(ValueError, match="constant columns \\[1\\] .* drop them before SRCA"):
        check_data([[1.0, 2.0], [3.0, 2.0], [0.0, 2.0]], 1)


def test_tolerance_reaches_the_sphere_fit():
    rng = np.random.default_rng(0)
    t = rng.uniform(0, 1.5, 60)
    X = np.column_stack([np.cos(t), np.sin(t)]) + 0.3 * rng.standard_normal((60, 2))
    X = np.column_stack([X, 0.05 * rng.standard_normal(60)])
    m = fit_srca(X, 1, subset_search="top", tol=1e-2)
    Y = (X - m.mean) @ m.rotation
    loose = fit_sphere_on_axes(Y, m.axes, tol=1e-2)
    assert m.loss == pytest.approx(loose.loss, rel=1e-12)
    assert loose.n_evals < fit_sphere_on_axes(Y, m.axes).n_evals


def test_model_block_settings_reach_fit_srca():
    from paper_pipelines.pipelines.srca.parameters import ModelParams
    from paper_pipelines.pipelines.srca.srca import fit_srca_models

    rng = np.random.default_rng(0)
    t = rng.uniform(0, 1.5, 60)
    X = np.column_stack([np.cos(t), np.sin(t)]) + 0.3 * rng.standard_normal((60, 2))
    X = np.column_stack([X, 0.05 * rng.standard_normal((60, 2))])
    prepared = {"circle": {"X": X}}
    few = ModelParams(k={"circle": [1]}, max_subsets=5, out_of_sample=False)  # C(4, 2) = 6 > 5
    assert fit_srca_models(prepared, few)["circle/k1/full"].search == "greedy"
    capped = ModelParams(k={"circle": [1]}, max_iter=10, subset_search="top", out_of_sample=False)
    m = fit_srca_models(prepared, capped)["circle/k1/full"]
    assert m.loss == pytest.approx(fit_srca(X, 1, subset_search="top", max_iter=10).loss, rel=1e-12)
    assert m.loss > fit_srca(X, 1, subset_search="top").loss * (1 + 1e-9)


def test_the_penalty_does_not_change_which_sets_the_bound_prunes():
    """L = off-I + in-I + lambda |I| and the bound is off-I + lambda |I|: lambda shifts both alike."""
    X = _circle(D=6)
    Y = X - X.mean(axis=0)
    plain, _, fits = search_axes(Y, 2, search="exhaustive")
    pen, _, pen_fits = search_axes(Y, 2, search="exhaustive", lambda_penalty=5.0)
    assert pen_fits == fits and pen.axes == plain.axes
    assert pen.loss == pytest.approx(plain.loss + 5.0 * 2, rel=1e-9)
    col_sq = np.array([8.0, 4.0, 2.0, 1.0])  # fake losses that include the penalty 1
    fit, asked = _fake_fit({(0, 1): 3.0 + 1.0 + 0.5, (0, 2): 100.0})
    exhaustive_search(fit, col_sq, 2, penalty=1.0)
    assert asked == [(0, 1)]  # bound of (0, 2) = 5 + 1 >= 4.5


def test_greedy_prune_setting_and_a_tie_with_the_top_axes():
    X = _circle(D=5)
    unpruned = fit_srca(X, 1, subset_search="greedy", prune=False)
    assert unpruned.n_subsets >= 5 + 4  # every single axis, then every pair with the first
    assert fit_srca(X, 1, subset_search="greedy").n_subsets < unpruned.n_subsets
    col_sq = np.array([4.0, 3.0, 2.0, 1.0])
    losses = {(0,): 9.0, (1,): 9.5, (2,): 7.5, (0, 2): 7.0, (1, 2): 6.8, (0, 1): 6.8}
    fit, _ = _fake_fit(losses)
    best, _ = greedy_search(fit, col_sq, 2)
    assert best.axes == (1, 2)  # the top pair must be strictly better to replace the greedy one


def test_cell_cycle_noise_grows_with_the_signal():
    clean = synthetic_cell_cycle(400, 8, 3, 0.0, 0.0, seed=3)["X"]
    noisy = synthetic_cell_cycle(400, 8, 3, 0.1, 0.0, seed=3)["X"]  # same stream up to the noise
    z = (noisy - clean) / (0.1 * (0.5 + np.abs(clean)))
    assert z.std() == pytest.approx(1.0, rel=0.05)


def test_sphere_generator_returns_its_radius():
    d = noisy_sphere(10, 2.5, 0.0, 0.0, 3, seed=0)
    assert float(d["radius"]) == 2.5


def test_weighted_fit_is_a_stationary_point_of_the_weighted_loss():
    """With a non-scalar W the start (the Euclidean fit) is not the minimum; at the returned (c, r)
    every central difference of the official loss L_W(I, c, r) vanishes."""
    rng = np.random.default_rng(5)
    t = rng.uniform(0, 2 * np.pi, 80)
    Y = np.column_stack([2 * np.cos(t), np.sin(t), 0.1 * rng.standard_normal(80)])
    Y -= Y.mean(axis=0)
    W = np.array([[1.0, 0.3, 0.0], [0.3, 2.0, 0.1], [0.0, 0.1, 1.5]])
    fit = fit_sphere_weighted(Y, (0, 1), W)
    v = np.array([1.0, 1.0, 0.0])
    x = np.append(fit.center, fit.radius)

    def loss(x):
        return geometric_loss(Y, v, x[:-1], x[-1], W=W)

    assert fit.loss == pytest.approx(loss(x), rel=1e-10)
    h = 1e-5
    grad = [(loss(x + h * e) - loss(x - h * e)) / (2 * h) for e in np.eye(4)]
    assert np.abs(grad).max() < 1e-3 * fit.loss
    start = fit_sphere_on_axes(Y, (0, 1))
    assert fit.loss < loss(np.append(start.center, start.radius)) - 1e-3  # it did move
