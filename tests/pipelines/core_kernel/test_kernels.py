"""Kernel preprocessing (kcenter / knorm) and the input checks every MKC run relies on."""

import numpy as np
import pytest

from paper_pipelines.pipelines.core_kernel.kernels import (
    KernelSpec,
    build_base_kernels,
    kcenter,
    knorm,
    nystrom_features,
    validate_kernels,
)


def _points(n=40, d=3, seed=0):
    return np.random.default_rng(seed).standard_normal((n, d))


def test_kcenter_removes_row_and_column_means():
    kernel = np.array([[2.0, 1.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 2.0]])
    centred = kcenter(kernel)
    # Hand check: the all-ones vector is (numerically) in the null space after centring.
    np.testing.assert_allclose(centred @ np.ones(3), 3e-12 * np.ones(3) / 3 * 1, atol=1e-11)
    np.testing.assert_allclose(centred, centred.T)


def test_knorm_gives_unit_diagonal_and_cosine_entries():
    kernel = np.array([[4.0, 2.0], [2.0, 9.0]])
    np.testing.assert_allclose(knorm(kernel), [[1.0, 2.0 / 6.0], [2.0 / 6.0, 1.0]])


def test_base_kernels_are_preprocessed_and_valid():
    x = _points()
    specs = [KernelSpec("rbf", 1.0), KernelSpec("polynomial"), KernelSpec("linear")]
    kernels = build_base_kernels(x, specs, np.random.default_rng(0))
    assert kernels.shape == (3, 40, 40)
    np.testing.assert_allclose(np.einsum("pii->p", kernels), 40.0)  # knorm: tr(K_p) = n
    validate_kernels(kernels, k=3)


def test_nystrom_features_match_preprocessed_exact_kernel_when_pilot_is_everything():
    x = _points(30)
    spec = [KernelSpec("rbf", 2.0)]
    feats = nystrom_features(x, spec, np.arange(30), np.random.default_rng(0))
    exact = build_base_kernels(x, spec, np.random.default_rng(0))
    np.testing.assert_allclose(feats[0] @ feats[0].T, exact[0], atol=1e-6)


def test_kernels_of_different_sizes_fail():
    with pytest.raises(ValueError, match="same n x n size"):
        validate_kernels([np.eye(3), np.eye(4)], k=2)


def test_nan_kernel_fails():
    bad = np.stack([np.eye(4), np.eye(4)])
    bad[1, 0, 0] = np.nan
    with pytest.raises(ValueError, match=r"kernel\(s\) \[1\] contain NaN"):
        validate_kernels(bad, k=2)


def test_non_psd_kernel_fails():
    not_psd = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1
    with pytest.raises(ValueError, match="not positive semi-definite"):
        validate_kernels(np.stack([np.eye(2), not_psd]), k=1)


def test_k_larger_than_n_fails():
    with pytest.raises(ValueError, match=r"k must be in \[1, n\]"):
        validate_kernels(np.stack([np.eye(3)]), k=5)
