"""Spherelets baseline against a direct transcription of the official loop-based `Spherelets.m`."""

import numpy as np
import pytest

from paper_pipelines.pipelines.srca.metrics import reconstruction_mse
from paper_pipelines.pipelines.srca.spherelets import fit_spherelet, project_spherelet


def reference_spherelet(X, d):
    """Independent reference: eigen-decomposition PCA and the explicit sums of the official code."""
    n, m = X.shape
    mu = X.mean(axis=0)
    S = (X - mu).T @ (X - mu)
    vals, vecs = np.linalg.eigh(S)
    V = vecs[:, np.argsort(vals)[::-1][: d + 1]]
    Y = mu + (X - mu) @ V @ V.T
    sq_norms = np.array([Y[i] @ Y[i] for i in range(n)])
    H = np.zeros((m, m))
    f = np.zeros(m)
    for i in range(n):
        H += np.outer(mu - Y[i], mu - Y[i])
        f += (sq_norms[i] - sq_norms.mean()) * (mu - Y[i])
    c = mu + V @ V.T @ (-0.5 * np.linalg.pinv(H) @ f - mu)
    r = np.mean([np.linalg.norm(c - Y[i]) for i in range(n)])
    proj = np.array(
        [c + r * (X[i] - c) @ V @ V.T / np.linalg.norm((X[i] - c) @ V @ V.T) for i in range(n)]
    )
    return c, r, proj


def test_spherelet_matches_reference_and_direct_mse():
    """Spec check 2: spherelets MSE equals a direct formula evaluation to 1e-10."""
    rng = np.random.default_rng(0)
    t = rng.uniform(0, 2 * np.pi, 120)
    X = np.column_stack([2 * np.cos(t), 2 * np.sin(t), 0.2 * rng.standard_normal((120, 3))]) + 1.0
    model = fit_spherelet(X, 1)
    c, r, proj = reference_spherelet(X, 1)
    np.testing.assert_allclose(model.center, c, atol=1e-10)
    assert model.radius == pytest.approx(r, abs=1e-10)
    direct = np.mean([np.sum((X[i] - proj[i]) ** 2) for i in range(len(X))])
    assert reconstruction_mse(X, project_spherelet(model, X)) == pytest.approx(direct, abs=1e-10)


def test_spherelet_recovers_a_noiseless_circle():
    t = np.linspace(0, 2 * np.pi, 30, endpoint=False)
    X = np.column_stack([3 * np.cos(t) + 1, 3 * np.sin(t) - 1, np.full(30, 2.0)])
    model = fit_spherelet(X, 1)
    np.testing.assert_allclose(model.center, [1, -1, 2], atol=1e-8)
    assert model.radius == pytest.approx(3.0, abs=1e-8)


def test_spherelet_needs_enough_points():
    with pytest.raises(ValueError, match="more than k"):
        fit_spherelet(np.random.default_rng(0).standard_normal((3, 4)), 2)
