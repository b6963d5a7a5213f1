"""SRCA end to end: rotation, axis search, projection, exact recovery and the spec's checks at small scale."""

import itertools

import numpy as np
import pytest
from sklearn.decomposition import PCA

from paper_pipelines.pipelines.srca.data import noisy_circle, noisy_sphere, sklearn_table
from paper_pipelines.pipelines.srca.geometric_loss import fit_sphere_on_axes
from paper_pipelines.pipelines.srca.metrics import angles, phase_recovery, reconstruction_mse
from paper_pipelines.pipelines.srca.rotation import principal_rotation
from paper_pipelines.pipelines.srca.srca import fit_srca, project, reduced_coordinates
from paper_pipelines.pipelines.srca.subset_search import search_axes


def pca_mse(X, k):
    p = PCA(n_components=k).fit(X)
    return reconstruction_mse(X, p.inverse_transform(p.transform(X)))


def test_rotation_is_orthogonal_with_matlab_signs_and_completed_when_n_below_d():
    rng = np.random.default_rng(0)
    for n, D in [(50, 5), (6, 10)]:
        X = rng.standard_normal((n, D))
        mean, R = principal_rotation(X)
        np.testing.assert_allclose(R.T @ R, np.eye(D), atol=1e-10)
        np.testing.assert_allclose(mean, X.mean(axis=0))
        assert np.all(R[np.argmax(np.abs(R), axis=0), np.arange(D)] > 0)
        var = ((X - mean) @ R).var(axis=0)
        assert np.all(np.diff(var) <= 1e-10)  # decreasing variance


def test_exact_recovery_of_noiseless_sphere():
    """Spec check 1: noiseless S^2 (n = 1000): MSE < 1e-8, |r - 1| < 1e-4, centre error < 1e-4."""
    d = noisy_sphere(1000, 1.0, 0.0, 0.0, 3, seed=5)
    X = d["X"] + np.array([1.0, -2.0, 0.5])
    m = fit_srca(X, 2)
    assert reconstruction_mse(X, project(m, X)) < 1e-8
    assert abs(m.radius - 1.0) < 1e-4
    assert np.linalg.norm(m.center - [1.0, -2.0, 0.5]) < 1e-4


def test_projection_lies_on_the_sphere_and_is_idempotent():
    d = noisy_circle(150, 8, 2.0, 0.2, 0.5, seed=1)
    m = fit_srca(d["X"], 1)
    P = project(m, d["X"])
    offsets = P - m.center
    np.testing.assert_allclose(np.linalg.norm(offsets, axis=1), m.radius, rtol=1e-10)
    # in the affine span c + span(R e_I)
    basis = m.rotation[:, list(m.axes)]
    np.testing.assert_allclose(offsets - offsets @ basis @ basis.T, 0.0, atol=1e-9)
    np.testing.assert_allclose(project(m, P), P, atol=1e-9)
    Z = reduced_coordinates(m, d["X"])
    assert Z.shape == (150, 2)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), m.radius, rtol=1e-10)


def test_out_of_sample_projection_uses_the_fitted_sphere():
    d = noisy_circle(200, 10, 3.0, 0.1, 0.5, seed=2)
    train, test = d["X"][:100], d["X"][100:]
    m = fit_srca(train, 1)
    P = project(m, test)
    assert P.shape == test.shape
    assert reconstruction_mse(test, P) < 0.2 * pca_mse(test, 1)
    with pytest.raises(ValueError, match="shape"):
        project(m, test[:, :5])


@pytest.mark.parametrize("k", [1, 2])
def test_pruned_exhaustive_search_equals_brute_force(k):
    rng = np.random.default_rng(k)
    X = rng.standard_normal((60, 6)) * [3, 2.5, 2, 1.5, 1, 0.5]
    X[:, :2] += 3 * np.column_stack([np.cos(np.arange(60)), np.sin(np.arange(60))])
    Y = X - X.mean(axis=0)
    best, used, fits = search_axes(Y, k + 1, search="exhaustive")
    brute = min(fit_sphere_on_axes(Y, a).loss for a in itertools.combinations(range(6), k + 1))
    assert used == "exhaustive"
    assert best.loss == pytest.approx(brute, rel=1e-9)
    assert fits <= len(list(itertools.combinations(range(6), k + 1)))
    unpruned, _, all_fits = search_axes(Y, k + 1, search="exhaustive", prune=False)
    assert all_fits == len(list(itertools.combinations(range(6), k + 1)))
    assert unpruned.loss == pytest.approx(best.loss, rel=1e-12)
    assert unpruned.axes == best.axes


def test_greedy_l1_and_top_find_the_circle_axes():
    d = noisy_circle(300, 12, 3.0, 0.1, 0.5, seed=3)
    for search in ("exhaustive", "greedy", "l1", "top"):
        m = fit_srca(d["X"], 1, subset_search=search)
        assert m.axes == (0, 1), search
    assert fit_srca(d["X"], 1, subset_search="auto", max_subsets=10).search == "greedy"


def test_greedy_is_never_worse_than_the_top_axes():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((100, 15)) * np.linspace(2, 0.5, 15)
    g = fit_srca(X, 2, subset_search="greedy")
    t = fit_srca(X, 2, subset_search="top")
    assert g.loss <= t.loss + 1e-9


def test_ellipsoid_variant_fits_an_ellipse_better_than_a_circle():
    rng = np.random.default_rng(0)
    t = rng.uniform(0, 2 * np.pi, 400)
    X = np.column_stack([3 * np.cos(t), np.sin(t), np.zeros_like(t)])
    X += 0.05 * rng.standard_normal(X.shape)
    sphere = fit_srca(X, 1)
    ellipse = fit_srca(X, 1, weight="mve")
    assert ellipse.weight is not None
    assert reconstruction_mse(X, project(ellipse, X)) < 0.1 * reconstruction_mse(
        X, project(sphere, X)
    )
    with pytest.raises(ValueError, match="more points than dimensions"):
        fit_srca(X[:3], 1, weight="mve")


def test_curved_data_check_circle_in_high_dimension():
    """Spec check 3 (small): noisy circle in R^20: MSE ratio <= 0.2 and phase recovery >= 0.95."""
    d = noisy_circle(200, 20, 3.0, 0.1, 0.5, seed=0)
    m = fit_srca(d["X"], 1)
    assert reconstruction_mse(d["X"], project(m, d["X"])) <= 0.2 * pca_mse(d["X"], 1)
    assert phase_recovery(angles(reduced_coordinates(m, d["X"])), d["phase"]) >= 0.95


@pytest.mark.parametrize("name", ["iris", "wine", "breast_cancer"])
def test_never_worse_than_pca_on_flat_tables(name):
    """Spec check 4: exhaustive SRCA MSE <= 1.01 x PCA MSE for k <= min(D - 1, 3), standardised data."""
    X = sklearn_table(name)["X"]
    X = (X - X.mean(axis=0)) / X.std(axis=0)
    for k in range(1, min(X.shape[1] - 1, 3) + 1):
        m = fit_srca(X, k, subset_search="exhaustive")
        assert reconstruction_mse(X, project(m, X)) <= 1.01 * pca_mse(X, k), (name, k)


@pytest.mark.parametrize(
    "X, k, match",
    [
        (np.random.default_rng(0).standard_normal((10, 3)), 3, "1 <= k < D"),
        (np.random.default_rng(0).standard_normal((3, 5)), 2, "at least k \\+ 2"),
        (np.array([[0.0, 1.0], [np.nan, 2.0], [1.0, 0.0], [2.0, 3.0]]), 1, "NaN"),
        (np.column_stack([np.arange(6.0), np.ones(6), np.arange(6.0) ** 2]), 1, "constant"),
    ],
)
def test_bad_inputs_fail_clearly(X, k, match):
    with pytest.raises(ValueError, match=match):
        fit_srca(X, k)


def test_bad_search_and_too_large_exhaustive_fail_clearly():
    X = np.random.default_rng(0).standard_normal((30, 12))
    with pytest.raises(ValueError, match="subset_search must be one of"):
        fit_srca(X, 1, subset_search="bogus")
    with pytest.raises(ValueError, match="max_subsets"):
        fit_srca(X, 2, subset_search="exhaustive", max_subsets=10)
