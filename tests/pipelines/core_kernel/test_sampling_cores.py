"""The sampling cores, the dispatch and the feature-map helpers, on small hand-checkable stacks."""

import numpy as np
import pytest

from paper_pipelines.pipelines.core_kernel.core import (
    build_core,
    concatenated_left_singular_vectors,
    kernel_matvec,
    kernel_traces,
    leverage_core,
    leverage_probabilities,
    projection_core,
    submatrices,
    uniform_core,
)


def _stack(n=6, m=2, r=3, seed=0):
    """Feature maps F_p (m, n, r) and their exact kernels K_p = F_p F_p^T."""
    feats = np.random.default_rng(seed).standard_normal((m, n, r))
    return feats, feats @ np.swapaxes(feats, 1, 2)


def test_feature_map_helpers_agree_with_the_exact_kernels():
    feats, kernels = _stack()
    x = np.random.default_rng(1).standard_normal((6, 2))
    np.testing.assert_allclose(kernel_matvec(feats, x, True), kernels @ x)
    np.testing.assert_allclose(kernel_matvec(kernels, x, False), kernels @ x)
    np.testing.assert_allclose(kernel_traces(feats, True), np.trace(kernels, axis1=1, axis2=2))
    np.testing.assert_allclose(kernel_traces(kernels, False), np.trace(kernels, axis1=1, axis2=2))
    rows, cols = np.array([0, 4]), np.array([1, 2, 5])
    np.testing.assert_allclose(submatrices(feats, rows, cols, True), kernels[:, rows][:, :, cols])
    np.testing.assert_allclose(
        submatrices(kernels, rows, cols, False), kernels[:, rows][:, :, cols]
    )


def test_uniform_core_is_the_sampled_submatrix():
    _, kernels = _stack(n=8)
    core = uniform_core(kernels, 3, np.random.default_rng(4))
    idx = np.sort(np.random.default_rng(4).choice(8, 3, replace=False))
    assert core.method == "uniform" and core.indices.tolist() == idx.tolist()
    assert len(set(idx)) == 3  # without replacement
    np.testing.assert_array_equal(core.kernels, kernels[:, idx][:, :, idx])
    assert core.traces is None and core.basis is None and core.scales.tolist() == [1.0] * 3
    feats, _ = _stack(n=8)
    from_features = uniform_core(feats, 3, np.random.default_rng(4), features=True)
    np.testing.assert_allclose(from_features.kernels, core.kernels)


def test_leverage_probabilities_by_hand():
    # rows of U_2: e1, e2, 0, 0 -> leverage 1/2, 1/2, 0, 0 mixed half-half with uniform 1/4
    basis = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    np.testing.assert_allclose(leverage_probabilities(basis, 0.5), [0.375, 0.375, 0.125, 0.125])
    np.testing.assert_allclose(leverage_probabilities(basis, 1.0), [0.5, 0.5, 0.0, 0.0])
    np.testing.assert_allclose(leverage_probabilities(basis, 0.0), [0.25] * 4)


def test_leverage_core_is_rescaled_sampled_submatrix():
    # K~ = D K[S, S] D with D = diag(1 / sqrt(s p_i)), S drawn with replacement from p
    _, kernels = _stack(n=4)
    basis = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    core = leverage_core(kernels, 3, 2, 0.5, np.random.default_rng(2), basis=basis)
    probs = np.array([0.375, 0.375, 0.125, 0.125])
    idx = np.sort(np.random.default_rng(2).choice(4, 3, replace=True, p=probs))
    assert core.method == "leverage" and core.indices.tolist() == idx.tolist()
    scales = 1.0 / np.sqrt(3 * probs[idx])
    np.testing.assert_allclose(core.scales, scales)
    np.testing.assert_allclose(
        core.kernels, kernels[:, idx][:, :, idx] * np.outer(scales, scales)[None]
    )
    assert core.traces is None


def test_leverage_core_uses_only_the_first_rank_columns_and_its_own_basis():
    _, kernels = _stack(n=5)
    wide = np.linalg.qr(np.random.default_rng(0).standard_normal((5, 4)))[0]
    narrow = leverage_core(kernels, 2, 1, 1.0, np.random.default_rng(1), basis=wide)
    probs = wide[:, 0] ** 2  # rank 1, beta 1: the squared first column
    idx = np.sort(np.random.default_rng(1).choice(5, 2, replace=True, p=probs / probs.sum()))
    assert narrow.indices.tolist() == idx.tolist()
    # without a basis: the top-`rank` left singular vectors of the concatenation
    own = leverage_core(kernels, 2, 2, 0.5, np.random.default_rng(3))
    given = leverage_core(
        kernels,
        2,
        2,
        0.5,
        np.random.default_rng(3),
        basis=concatenated_left_singular_vectors(kernels, 2),
    )
    np.testing.assert_allclose(own.kernels, given.kernels)


def test_build_core_dispatches_with_its_arguments():
    _, kernels = _stack(n=7)
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((7, 3)))[0]
    lev = build_core(
        "leverage", kernels, 3, np.random.default_rng(5), rank=2, mix_beta=0.2, basis=basis
    )
    ref = leverage_core(kernels, 3, 2, 0.2, np.random.default_rng(5), basis=basis)
    np.testing.assert_allclose(lev.kernels, ref.kernels)
    uni = build_core("uniform", kernels, 3, np.random.default_rng(5))
    np.testing.assert_allclose(
        uni.kernels, uniform_core(kernels, 3, np.random.default_rng(5)).kernels
    )
    proj = build_core("projection", kernels, 2, None, solver="exact")
    np.testing.assert_allclose(proj.kernels, projection_core(kernels, 2, solver="exact").kernels)
    one_step = build_core("projection", kernels, 2, None, power_iters=0)
    ref = projection_core(kernels, 2, power_iters=0)
    np.testing.assert_allclose(one_step.kernels, ref.kernels)
    with pytest.raises(ValueError, match="unknown core method 'random'; allowed: projection"):
        build_core("random", kernels, 2, None)


def test_solver_name_is_checked():
    _, kernels = _stack()
    with pytest.raises(ValueError, match="core.solver must be 'exact' or 'randomized', got 'svd'"):
        concatenated_left_singular_vectors(kernels, 2, solver="svd")
    with pytest.raises(ValueError, match="core size s=7 is larger than the number of points n=6"):
        concatenated_left_singular_vectors(kernels, 7)


def test_randomized_basis_is_seeded_and_orthonormal():
    _, kernels = _stack(n=30, r=10)
    a = concatenated_left_singular_vectors(kernels, 4, seed=1, power_iters=0, oversample=0)
    b = concatenated_left_singular_vectors(kernels, 4, seed=1, power_iters=0, oversample=0)
    c = concatenated_left_singular_vectors(kernels, 4, seed=2, power_iters=0, oversample=0)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(np.abs(a), np.abs(c))
    np.testing.assert_allclose(a.T @ a, np.eye(4), atol=1e-12)


def test_build_core_passes_the_solver_and_the_default_seed_is_zero():
    # power_iters = 0 leaves the randomized basis visibly inexact, so "exact" must reach the solver
    _, kernels = _stack(n=30, r=10, m=3)
    exact = build_core("projection", kernels, 2, None, solver="exact", power_iters=0)
    np.testing.assert_allclose(exact.kernels, projection_core(kernels, 2, solver="exact").kernels)
    np.testing.assert_array_equal(
        concatenated_left_singular_vectors(kernels, 3),
        concatenated_left_singular_vectors(kernels, 3, seed=0),
    )
    with pytest.raises(ValueError, match="allowed: projection, uniform, leverage$"):
        build_core("random", kernels, 2, None)


def test_leverage_core_from_feature_maps_and_an_unnormalised_basis():
    feats, kernels = _stack(n=6)
    from_features = leverage_core(feats, 3, 2, 0.5, np.random.default_rng(1), features=True)
    basis = concatenated_left_singular_vectors(feats, 2, features=True)
    ref = leverage_core(kernels, 3, 2, 0.5, np.random.default_rng(1), basis=basis)
    np.testing.assert_allclose(from_features.kernels, ref.kernels, atol=1e-10)
    # a basis with columns of norm 2: the scores are renormalised into a distribution
    e = np.eye(6)[:, :2]
    doubled = leverage_core(kernels, 3, 2, 1.0, np.random.default_rng(2), basis=2 * e)
    plain = leverage_core(kernels, 3, 2, 1.0, np.random.default_rng(2), basis=e)
    assert doubled.indices.tolist() == plain.indices.tolist()
    np.testing.assert_allclose(doubled.scales, plain.scales)


def test_randomized_basis_defaults_and_small_feature_maps():
    _, kernels = _stack(n=30, r=10, m=3)
    np.testing.assert_array_equal(
        concatenated_left_singular_vectors(kernels, 3),
        concatenated_left_singular_vectors(
            kernels, 3, features=False, solver="randomized", oversample=10, power_iters=3, seed=0
        ),
    )
    # feature maps with all singular values below 1: the basis is still orthonormal and spans
    # the top eigenvectors of sum_p (F_p F_p^T)^2
    feats, small = _stack(n=12, r=3, m=2)
    feats, small = 0.1 * feats, 0.01 * small
    basis = concatenated_left_singular_vectors(feats, 2, features=True)
    np.testing.assert_allclose(basis.T @ basis, np.eye(2), atol=1e-10)
    exact = concatenated_left_singular_vectors(small, 2, solver="exact")
    np.testing.assert_allclose(np.linalg.svd(exact.T @ basis, compute_uv=False), 1.0, atol=1e-8)
