"""Rademacher quantities on cases with closed forms (spec check 6's identities)."""

import numpy as np
import pytest

from paper_pipelines.pipelines.multilabel_bounds import rademacher


def test_orthonormal_inputs_give_the_exact_ball_complexity():
    # x_i orthonormal: ||sum eps_i x_i|| = sqrt(n) for every sign draw, so R = Lambda sqrt(n) / n
    x = np.eye(16)
    rng = np.random.default_rng(0)
    assert rademacher.linear_ball_complexity(x, 3.0, 10, rng) == pytest.approx(3.0 / 4.0)
    assert rademacher.linear_ball_bound(x, 3.0) == pytest.approx(3.0 / 4.0)


def _sphere(n, d, seed):
    g = np.random.default_rng(seed).standard_normal((n, d))
    return g / np.linalg.norm(g, axis=1, keepdims=True)


def test_monte_carlo_is_below_the_jensen_bound_and_scales_like_one_over_sqrt_n():
    values = []
    for n in (100, 400, 1600):
        x = _sphere(n, 21, n)
        value = rademacher.linear_ball_complexity(x, 10.0, 200, np.random.default_rng(1))
        assert value <= rademacher.linear_ball_bound(x, 10.0) == pytest.approx(10 / np.sqrt(n))
        values.append(value * np.sqrt(n))
    assert max(values) / min(values) - 1 < 0.1  # sqrt(n) R_hat(F_j) varies < 10 % across n


def test_flattened_times_c_is_the_sum_of_per_label_complexities():
    x = _sphere(200, 21, 3)
    rng = np.random.default_rng(2)
    c = 10
    flat = rademacher.flattened_decoupled(x, c, 10.0, 200, rng)
    per_label = rademacher.linear_ball_complexity(x, 10.0, 2000, rng)
    assert c * flat == pytest.approx(c * per_label, rel=0.02)


@pytest.mark.parametrize("per_point", [True, False])
def test_ascent_on_the_identity_loss_reaches_the_closed_form(per_point):
    """sup over ||w_j|| <= Lambda of (1/(n c)) sum_ij s_ij <w_j, x_i> = (Lambda/(n c)) sum_j ||sum_i s_ij x_i||."""
    x = _sphere(100, 21, 4)
    rng = np.random.default_rng(5)
    signs = rademacher.rademacher_signs((100, 3 if per_point else 1), rng)
    exact = 10.0 * np.linalg.norm(x.T @ signs, axis=0).sum() / (100 * signs.shape[1])
    ones = np.ones((100, 3))
    found = rademacher.ascent_sup(x, ones, signs, "identity", "linear", 10.0, 5, 150, 0.1, 2, rng)
    assert found == pytest.approx(exact, rel=0.02)
    assert found <= exact * (1 + 1e-5)  # a lower estimate of the sup


def test_ascent_keeps_the_best_restart():
    x = _sphere(50, 5, 6)
    signs = rademacher.rademacher_signs((50, 1), np.random.default_rng(7))
    y = np.where(np.random.default_rng(8).random((50, 2)) < 0.5, 1.0, -1.0)
    one = rademacher.ascent_sup(x, y, signs, "logistic", "linear", 5.0, 2, 5, 0.1, 1,
                                np.random.default_rng(9))  # fmt: skip
    many = rademacher.ascent_sup(x, y, signs, "logistic", "linear", 5.0, 2, 5, 0.1, 4,
                                 np.random.default_rng(9))  # fmt: skip
    assert many >= one


def test_spectral_fixed_point_hand_case():
    # k equal eigenvalues lam_k = 1/k: psi(r)^2 = (2/n) k min(r, L^2 / k); below the kink r* = 2k / n
    eig = np.full(4, 0.25)
    r = rademacher.fixed_point(eig, 10.0, 100)
    assert r == pytest.approx(2 * 4 / 100, rel=1e-6)
    assert rademacher.psi_hat(r, eig, 10.0, 100) == pytest.approx(r, rel=1e-6)
    # above the kink (L^2 lam_k = 1/16 < r*): psi is flat at sqrt((2/n) L^2 sum lam) = sqrt(0.005)
    assert rademacher.fixed_point(eig, 0.5, 100) == pytest.approx(np.sqrt(0.005), rel=1e-6)


def test_gram_eigenvalues_are_those_of_the_normalised_gram_matrix():
    x = _sphere(30, 8, 10)
    eig = rademacher.gram_eigenvalues(x)
    assert len(eig) == 8 and eig.sum() == pytest.approx(1.0)  # trace = mean ||x||^2 = 1
    wide = rademacher.gram_eigenvalues(_sphere(5, 40, 11))
    assert len(wide) == 5 and wide.sum() == pytest.approx(1.0)


def test_zero_spectrum_has_a_zero_fixed_point_and_eigenvalues_are_clipped():
    assert rademacher.fixed_point(np.zeros(3), 1.0, 10) == 0.0
    x = np.ones((5, 3))  # rank one: four eigenvalues of (1/n) X X^T are zero up to rounding
    eig = rademacher.gram_eigenvalues(x)
    assert (eig >= 0).all() and eig.max() == pytest.approx(3.0)


def test_ascent_step_uses_each_arrays_radius():
    """Normalised step: A and V (unit hidden units) move by step * sqrt(width), W and B by step * Lambda *
    sqrt(c), along g / ||g||; points well inside F are not projected."""
    g = np.zeros((2, 4))
    g[0, 0] = 2.0
    small = np.full((2, 4), 0.01)
    for key, radius in (("V", 2.0), ("B", 5.0 * 2.0)):
        other = "B" if key == "V" else "V"
        params = {key: small, other: small}
        out = rademacher._ascent_step(params, {key: g, other: np.zeros_like(g)}, 0.001, 5.0)
        expected = small.copy()
        expected[0, 0] += 0.001 * radius
        np.testing.assert_allclose(out[key], expected)
