"""The three MKC algorithms pinned on small cases and against straightforward references."""

import numpy as np
import pytest
from scipy.optimize import minimize

from paper_pipelines.pipelines.core_kernel.kernels import KernelSpec, build_base_kernels
from paper_pipelines.pipelines.core_kernel.mkc import (
    base_partitions,
    combine_kernels,
    late_fusion,
    mkkm,
    mkkm_weight_update,
    reduced_descent_direction,
    run_mkc,
    simple_mkkm,
)


@pytest.fixture(scope="module")
def toy_kernels():
    """3 preprocessed kernels on 3 Gaussian blobs (n = 60)."""
    rng = np.random.default_rng(1)
    centres = np.array([[0, 0], [4, 0], [0, 4]], dtype=float)
    x = np.vstack([c + rng.standard_normal((20, 2)) for c in centres])
    specs = [KernelSpec("rbf", 0.5), KernelSpec("rbf", 4.0), KernelSpec("linear")]
    return build_base_kernels(x, specs, rng)


def test_mkkm_weight_update_is_inverse_residual_normalised():
    # Hand check: H = e1, K_1 = diag(2, 1), K_2 = diag(4, 3) -> a = [1, 3] -> gamma = [3/4, 1/4].
    h = np.array([[1.0], [0.0]])
    kernels = np.stack([np.diag([2.0, 1.0]), np.diag([4.0, 3.0])])
    np.testing.assert_allclose(mkkm_weight_update(h, kernels, traces=[3.0, 7.0]), [0.75, 0.25])
    # The traces are the full kernels' (a core's are smaller): tr = (6, 7) -> a = [4, 3] -> [3/7, 4/7].
    np.testing.assert_allclose(mkkm_weight_update(h, kernels, [6.0, 7.0]), [3 / 7, 4 / 7])


def test_mkkm_matches_plain_reference(toy_kernels):
    def reference(kernels, k):
        m = len(kernels)
        gamma = np.ones(m) / m
        objs = []
        for _ in range(51):
            kg = sum(g**2 * kp for g, kp in zip(gamma, kernels, strict=True))
            h = np.linalg.eigh(kg)[1][:, -k:]
            a = np.array([np.trace(kp) - np.trace(h.T @ kp @ h) for kp in kernels])
            gamma = (1 / a) / np.sum(1 / a)
            kg = sum(g**2 * kp for g, kp in zip(gamma, kernels, strict=True))
            objs.append(np.trace(kg) - np.trace(h.T @ kg @ h))
            if len(objs) > 2 and abs((objs[-2] - objs[-1]) / objs[-2]) < 1e-4:
                break
        return gamma

    result = mkkm(toy_kernels, 3)
    np.testing.assert_allclose(result.weights, reference(toy_kernels, 3), atol=1e-6)
    assert result.weights.sum() == pytest.approx(1.0)


def test_reduced_descent_direction_sums_to_zero_and_descends():
    gamma = np.array([0.5, 0.3, 0.2])
    grad = np.array([3.0, 1.0, 2.0])
    desc, mu = reduced_descent_direction(gamma, grad)
    assert mu == 0
    assert desc.sum() == pytest.approx(0.0)
    assert desc @ grad < 0  # a feasible descent direction on the simplex


def test_simplemkkm_objective_non_increasing_and_on_simplex(toy_kernels):
    result = simple_mkkm(toy_kernels, 3, tol=1e-6)
    assert np.all(np.diff(result.objective) <= 1e-10)
    assert result.weights.sum() == pytest.approx(1.0)
    assert np.all(result.weights >= 0)


def test_simplemkkm_matches_generic_constrained_solver(toy_kernels):
    """Reference: SLSQP on J(gamma) = sum of top-k eigenvalues of sum gamma_p^2 K_p over the simplex."""
    k = 3

    def cost(g):
        vals, vecs = np.linalg.eigh(combine_kernels(toy_kernels, g))
        h = vecs[:, -k:]
        grad = 2 * g * np.array([np.trace(h.T @ kp @ h) for kp in toy_kernels])
        return vals[-k:].sum(), grad

    m = len(toy_kernels)
    ref = minimize(
        cost,
        np.ones(m) / m,
        jac=True,
        method="SLSQP",
        bounds=[(0, 1)] * m,
        constraints=[{"type": "eq", "fun": lambda g: g.sum() - 1}],
        options={"ftol": 1e-14},
    )
    ours = simple_mkkm(toy_kernels, k, tol=1e-8, golden_tol=1e-6)
    np.testing.assert_allclose(ours.weights, ref.x, atol=1e-4)
    assert ours.objective[-1] <= ref.fun + 1e-8


def test_simplemkkm_identical_kernels_keep_uniform_weights(toy_kernels):
    same = np.stack([toy_kernels[0]] * 3)
    np.testing.assert_allclose(simple_mkkm(same, 3).weights, np.ones(3) / 3, atol=1e-12)


@pytest.mark.parametrize("variant", ["continuous", "discrete"])
def test_late_fusion_beta_has_unit_norm(toy_kernels, variant):
    result = late_fusion(toy_kernels, 3, variant=variant)
    assert np.linalg.norm(result.weights) == pytest.approx(1.0)
    assert np.all(result.weights >= 0)
    assert np.all(np.diff(result.objective) >= -1e-8)  # alternating maximisation never decreases


def test_late_fusion_identical_kernels_get_equal_beta(toy_kernels):
    same = np.stack([toy_kernels[1]] * 3)
    np.testing.assert_allclose(late_fusion(same, 3).weights, np.ones(3) / np.sqrt(3), atol=1e-10)


@pytest.mark.parametrize("variant", ["continuous", "discrete"])
def test_late_fusion_weights_follow_the_optimal_rotations(toy_kernels, variant):
    """At convergence W_p = argmax_W tr(H*^T H_p W) (updateWPOPLFMVC.m), so beta_p ~ ||H_p^T H*||_*.

    max over orthogonal W of tr(H*^T H_p W) is the nuclear norm of H_p^T H* (von Neumann), checkable
    by hand; weights computed with stale rotations (the W_p update skipped) are not proportional to it.
    """
    result = late_fusion(toy_kernels, 3, variant=variant, tol=1e-10, max_iter=200)
    partitions = base_partitions(toy_kernels, 3)
    nuclear = np.array([np.linalg.norm(hp.T @ result.embedding, ord="nuc") for hp in partitions])
    np.testing.assert_allclose(result.weights, nuclear / np.linalg.norm(nuclear), atol=1e-6)


def test_discrete_late_fusion_consensus_is_one_hot_times_orthogonal(toy_kernels):
    """The official consensus Y C: each row is a row of an orthogonal k x k matrix C."""
    result = run_mkc("latefusion_discrete", toy_kernels, 3, {})
    h = result.embedding
    np.testing.assert_allclose(np.linalg.norm(h, axis=1), 1.0, atol=1e-12)
    assert len(np.unique(np.round(h, 10), axis=0)) <= 3  # at most k distinct rows (the rows of C)
    gram = np.unique(np.round(h, 10), axis=0)
    np.testing.assert_allclose(gram @ gram.T, np.eye(len(gram)), atol=1e-10)
    # Same as asking late_fusion for the discrete variant.
    np.testing.assert_allclose(
        result.weights, late_fusion(toy_kernels, 3, variant="discrete").weights, atol=0
    )
