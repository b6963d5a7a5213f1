"""Kernel preprocessing (kcenter / knorm) and the input checks every MKC run relies on."""

import numpy as np
import pytest
from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel

from paper_pipelines.pipelines.core_kernel.kernels import (
    KernelSpec,
    build_base_kernels,
    kcenter,
    kernel_block,
    knorm,
    median_sq_distance,
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


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_in_place_kernels_are_scikit_learns_kernel_functions(dtype):
    """The lean in-place stack (kept for its memory, see build_base_kernels) equals sklearn's kernels."""
    x = _points(50, 4)
    specs = [
        KernelSpec("rbf", 0.5),
        KernelSpec("polynomial", degree=3, offset=0.5),
        KernelSpec("linear"),
    ]
    raw = build_base_kernels(
        x, specs, np.random.default_rng(0), center=False, normalize=False, dtype=dtype
    )
    med = median_sq_distance(x, np.random.default_rng(0))
    expected = [
        rbf_kernel(x, gamma=1.0 / (0.5 * med)),
        polynomial_kernel(x, degree=3, gamma=1.0 / 4, coef0=0.5),
        linear_kernel(x),
    ]
    tol = 1e-12 if dtype == np.float64 else 1e-4
    for p, (got, want) in enumerate(zip(raw, expected, strict=True)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=specs[p].name)
        np.testing.assert_allclose(kernel_block(x, x, specs[p], med), want, rtol=1e-12)


def test_median_sq_distance_by_hand():
    # points 0, 1, 3 on a line: squared distances 1, 9, 4 -> median 4
    x = np.array([[0.0], [1.0], [3.0]])
    assert median_sq_distance(x, np.random.default_rng(0)) == pytest.approx(4.0)


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


def test_out_stack_is_filled_in_place_with_the_same_kernels():
    x = _points(30)
    specs = [KernelSpec("rbf", 1.0), KernelSpec("linear")]
    fresh = build_base_kernels(x, specs, np.random.default_rng(0))
    stack = np.zeros((3, 30, 30))
    returned = build_base_kernels(x, specs, np.random.default_rng(0), out=stack[1:])
    assert np.shares_memory(returned, stack)
    np.testing.assert_array_equal(stack[1:], fresh)
    assert not stack[0].any()
    with pytest.raises(ValueError, match=r"out must be a \(2, 30, 30\) float64 array"):
        build_base_kernels(x, specs, np.random.default_rng(0), out=np.zeros((2, 30, 29)))
