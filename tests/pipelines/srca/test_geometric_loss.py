"""The geometric loss L(I, c, r) and the per-axis-set sphere fit (Sec. 2, `lossFunction_I.m`)."""

import numpy as np
import pytest

from paper_pipelines.pipelines.srca.geometric_loss import (
    fit_sphere_on_axes,
    fit_sphere_weighted,
    geometric_loss,
    plane_limit,
    squared_distance_to_sphere,
)


def test_loss_on_hand_checkable_square():
    # Four points on the unit circle of the (x, y) plane, lifted to z = 0.5.
    Y = np.array([[1, 0, 0.5], [-1, 0, 0.5], [0, 1, 0.5], [0, -1, 0.5]], dtype=float)
    v = np.array([1, 1, 0])
    c = np.zeros(3)
    # radius 1: in-plane distance 0, off-plane 0.5^2 per point -> 4 * 0.25 = 1
    assert geometric_loss(Y, v, c, 1.0) == pytest.approx(1.0, abs=1e-12)
    # radius 2: each point is 1 away in-plane -> 4 * (1 + 0.25) = 5
    assert geometric_loss(Y, v, c, 2.0) == pytest.approx(5.0, abs=1e-12)
    # the L1 penalty adds lambda * |I|
    assert geometric_loss(Y, v, c, 1.0, lambda_penalty=0.3) == pytest.approx(1.6, abs=1e-12)


def test_loss_equals_explicit_distance_to_sphere_sum():
    """Spec check 2: L(I, c, r) (W = I, lambda = 0) is the sum of squared distances to the sphere."""
    rng = np.random.default_rng(1)
    Y = rng.standard_normal((50, 6))
    for axes in [(0, 1), (1, 3, 5), (0, 2, 3, 4)]:
        v = np.zeros(6)
        v[list(axes)] = 1
        c = rng.standard_normal(6)
        r = 1.7
        explicit = squared_distance_to_sphere(Y, axes, c, r).sum()
        assert geometric_loss(Y, v, c, r) == pytest.approx(explicit, rel=1e-10, abs=1e-10)
        assert geometric_loss(Y, v, c, r, W=np.eye(6)) == pytest.approx(explicit, rel=1e-10)


def test_fit_recovers_exact_circle_in_plane():
    t = np.linspace(0, 2 * np.pi, 40, endpoint=False)
    Z = np.column_stack([1.0 + 3 * np.cos(t), -2.0 + 3 * np.sin(t)])
    fit = fit_sphere_on_axes(Z, (0, 1))
    assert fit.radius == pytest.approx(3.0, abs=1e-8)
    np.testing.assert_allclose(fit.center, [1.0, -2.0], atol=1e-8)
    assert fit.loss == pytest.approx(0.0, abs=1e-12)


def test_fit_loss_is_minimal_against_perturbations():
    rng = np.random.default_rng(2)
    Y = rng.standard_normal((80, 4)) * [3, 2, 1, 0.5]
    Y -= Y.mean(axis=0)
    axes = (0, 1)
    fit = fit_sphere_on_axes(Y, axes)
    v = np.array([1, 1, 0, 0])
    assert geometric_loss(Y, v, fit.center, fit.radius) == pytest.approx(fit.loss, rel=1e-10)
    for _ in range(20):
        dc = np.zeros(4)
        dc[:2] = 1e-3 * rng.standard_normal(2)
        assert geometric_loss(Y, v, fit.center + dc, fit.radius) >= fit.loss - 1e-9


def test_plane_limit_approaches_the_best_hyperplane():
    rng = np.random.default_rng(3)
    Z = rng.standard_normal((200, 3)) * [2.0, 1.0, 0.1]
    Z -= Z.mean(axis=0)
    _, r, loss = plane_limit(Z)
    # sum of squared distances to the best plane through the centroid = smallest eigenvalue of Z^T Z
    plane_loss = np.linalg.eigvalsh(Z.T @ Z)[0]
    assert r > 1e3
    assert loss == pytest.approx(plane_loss, rel=1e-3)


def test_weighted_fit_with_identity_matches_unweighted():
    rng = np.random.default_rng(4)
    t = rng.uniform(0, 2 * np.pi, 100)
    Y = np.column_stack([2 * np.cos(t), 2 * np.sin(t), 0.1 * rng.standard_normal(100)])
    Y -= Y.mean(axis=0)
    a = fit_sphere_on_axes(Y, (0, 1))
    b = fit_sphere_weighted(Y, (0, 1), np.eye(3))
    assert b.loss == pytest.approx(a.loss, rel=1e-6)
    assert b.radius == pytest.approx(a.radius, rel=1e-6)


def test_the_plane_limit_wins_on_exactly_flat_data():
    """Collinear points in span(I): the best circle is the flat limit. Both Levenberg-Marquardt
    starts stall at a small circle (loss about 4.3 here), so only the plane-limit candidate gives
    the off-I loss alone."""
    rng = np.random.default_rng(0)
    Y = np.column_stack([rng.uniform(-1, 1, 50), np.zeros(50), 0.01 * rng.standard_normal(50)])
    Y -= Y.mean(axis=0)
    fit = fit_sphere_on_axes(Y, (0, 1))
    _, r_far, val_far = plane_limit(Y[:, [0, 1]])
    off_axes = float((Y[:, 2] ** 2).sum())
    assert fit.radius == r_far and fit.loss == pytest.approx(off_axes + val_far, rel=1e-12)
    assert fit.loss == pytest.approx(off_axes, rel=1e-4) and fit.loss < 0.1
