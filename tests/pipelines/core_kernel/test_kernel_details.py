"""Kernel specs, the in-place preprocessing against the plain formulas, and the input checks."""

import numpy as np
import pytest

from paper_pipelines.pipelines.core_kernel.kernels import (
    KernelSpec,
    _kcenter_inplace,
    _knorm_inplace,
    _symmetrize_inplace,
    build_base_kernels,
    kcenter,
    kernel_block,
    kernel_specs,
    knorm,
    median_sq_distance,
    nystrom_features,
    validate_kernels,
)


def test_spec_names_and_defaults():
    assert KernelSpec("rbf", 0.5).name == "rbf_t0.5"
    assert KernelSpec("polynomial", degree=3).name == "poly_d3"
    assert KernelSpec("linear").name == "linear"
    specs = kernel_specs([{"kind": "rbf", "bandwidth_factor": 2.0}, {"kind": "polynomial"}])
    assert specs == [KernelSpec("rbf", 2.0), KernelSpec("polynomial", 1.0, 2, 1.0)]


def test_kcenter_is_H_K_H_plus_a_tiny_ridge():
    kernel = np.array([[2.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.5, 1.0, 2.0]])  # not symmetric
    h = np.eye(3) - np.ones((3, 3)) / 3
    centred = h @ kernel @ h
    expected = 0.5 * (centred + centred.T) + 1e-12 * np.eye(3)
    np.testing.assert_allclose(kcenter(kernel), expected, atol=1e-15)


def test_in_place_steps_equal_the_plain_formulas():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((5, 5))
    sym = a.copy()
    _symmetrize_inplace(sym, block=2)  # blocks of 2 on a 5 x 5 matrix: edge blocks too
    np.testing.assert_allclose(sym, 0.5 * (a + a.T), atol=1e-15)
    kernel = a @ a.T
    centred = kernel.copy()
    _kcenter_inplace(centred)
    np.testing.assert_allclose(centred, kcenter(kernel), atol=1e-12)
    normed = kernel.copy()
    _knorm_inplace(normed)
    np.testing.assert_allclose(normed, knorm(kernel), atol=1e-12)
    with pytest.raises(ValueError, match="non-positive diagonal entry"):
        _knorm_inplace(np.array([[1.0, 0.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="non-positive diagonal entry"):
        knorm(np.array([[1.0, 0.0], [0.0, -1.0]]))


def test_preprocessing_switches():
    x = np.random.default_rng(1).standard_normal((12, 3))
    spec = [KernelSpec("polynomial", degree=2, offset=1.0)]
    raw = build_base_kernels(x, spec, np.random.default_rng(0), center=False, normalize=False)
    np.testing.assert_allclose(raw[0], (x @ x.T / 3 + 1.0) ** 2)
    only_centre = build_base_kernels(x, spec, np.random.default_rng(0), normalize=False)
    np.testing.assert_allclose(only_centre[0], kcenter(raw[0]), atol=1e-10)
    only_norm = build_base_kernels(x, spec, np.random.default_rng(0), center=False)
    np.testing.assert_allclose(only_norm[0], knorm(raw[0]), atol=1e-12)
    both = build_base_kernels(x, spec, np.random.default_rng(0))
    np.testing.assert_allclose(both[0], knorm(kcenter(raw[0])), atol=1e-10)


def test_rbf_kernel_uses_the_median_bandwidth():
    # points 0, 1, 3: squared distances 1, 9, 4 -> median 4; t = 2: K_01 = exp(-1 / 8)
    x = np.array([[0.0], [1.0], [3.0]])
    raw = build_base_kernels(
        x, [KernelSpec("rbf", 2.0)], np.random.default_rng(0), center=False, normalize=False
    )
    np.testing.assert_allclose(
        raw[0], np.exp(-np.array([[0, 1, 9], [1, 0, 4], [9, 4, 0]]) / 8.0), atol=1e-15
    )


def test_unknown_kernel_kind_fails():
    x = np.random.default_rng(0).standard_normal((5, 2))
    with pytest.raises(
        ValueError, match="unknown kernel kind 'sigmoid'; allowed: rbf, polynomial, linear"
    ):
        build_base_kernels(x, [KernelSpec("sigmoid")], np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown kernel kind 'sigmoid'"):
        kernel_block(x, x, KernelSpec("sigmoid"), 1.0)


def test_median_sq_distance_subsamples_and_rejects_coincident_points():
    x = np.arange(10.0)[:, None]
    sub = median_sq_distance(x, np.random.default_rng(3), max_points=4)
    pts = x[np.random.default_rng(3).choice(10, 4, replace=False)][:, 0]
    d2 = [(a - b) ** 2 for i, a in enumerate(pts) for b in pts[i + 1 :]]
    assert sub == pytest.approx(np.median(d2))
    assert median_sq_distance(x, np.random.default_rng(3), max_points=10) == pytest.approx(
        np.median([(i - j) ** 2 for i in range(10) for j in range(i + 1, 10)])
    )
    with pytest.raises(ValueError, match="all points coincide"):
        median_sq_distance(np.ones((4, 2)), np.random.default_rng(0))


def test_validate_kernels_returns_the_stack_and_names_each_problem():
    out = validate_kernels([np.eye(3), 2 * np.eye(3)], k=3)
    assert out.shape == (2, 3, 3) and out.dtype == float
    with pytest.raises(
        ValueError, match=r"\(m, n, n\) stack of square matrices, got shape \(2, 3\)"
    ):
        validate_kernels(np.eye(3)[:2], k=1)
    with pytest.raises(ValueError, match=r"got shape \(1, 2, 3\)"):
        validate_kernels(np.zeros((1, 2, 3)), k=1)
    with pytest.raises(ValueError, match="at least one base kernel is needed"):
        validate_kernels(np.zeros((0, 3, 3)), k=1)
    with pytest.raises(ValueError, match=r"kernel 1 is not symmetric"):
        validate_kernels(np.stack([np.eye(2), np.array([[1.0, 0.5], [0.0, 1.0]])]), k=1)
    with pytest.raises(ValueError, match=r"k must be in \[1, n\] = \[1, 3\], got k=0"):
        validate_kernels(np.stack([np.eye(3)]), k=0)
    # PSD up to the tolerance: an eigenvalue of -1e-10 on a trace of 2 passes, -1e-3 does not
    nearly = np.diag([1.0, -1e-10])
    validate_kernels(np.stack([nearly]), k=1)
    with pytest.raises(ValueError, match=r"smallest eigenvalue -0.001"):
        validate_kernels(np.stack([np.diag([1.0, -1e-3])]), k=1)


def test_nystrom_features_in_blocks_equal_one_block_and_drop_null_directions():
    x = np.random.default_rng(4).standard_normal((25, 2))
    specs = [KernelSpec("rbf", 1.0), KernelSpec("linear")]
    one = nystrom_features(x, specs, np.arange(0, 25, 3), np.random.default_rng(0))
    blocks = nystrom_features(x, specs, np.arange(0, 25, 3), np.random.default_rng(0), block=4)
    np.testing.assert_allclose(blocks, one, atol=1e-12)
    # F F^T is knorm(kcenter(.)) of the plain Nystrom kernel C W^+ C^T (W^+ over the kept spectrum)
    med = median_sq_distance(x, np.random.default_rng(0))
    pilot = np.arange(0, 25, 3)
    c = kernel_block(x, x[pilot], specs[0], med)
    nys = c @ np.linalg.pinv(c[pilot], rcond=1e-10, hermitian=True) @ c.T
    np.testing.assert_allclose(one[0] @ one[0].T, knorm(kcenter(nys)), atol=1e-8)
    # linear kernel on 2-D points: rank 2, the 7 other pilot directions are dropped, not blown up
    lin = one[1] @ one[1].T
    assert np.linalg.matrix_rank(lin, tol=1e-8) <= 2
    assert np.all(np.isfinite(one))


def test_rbf_distances_are_clipped_at_zero_before_the_exponential():
    # Far from the origin, ||x||^2 + ||y||^2 - 2 x.y loses digits and can come out below 0;
    # clipped, exp(-d / (t med)) never exceeds 1.
    x = 1e4 + np.random.default_rng(0).standard_normal((30, 3))
    sq = np.sum(x * x, axis=1)
    assert (sq[:, None] + sq[None, :] - 2 * x @ x.T).min() < 0  # the case the clip is for
    raw = build_base_kernels(
        x, [KernelSpec("rbf", 1.0)], np.random.default_rng(0), center=False, normalize=False
    )
    assert raw.max() <= 1.0


def test_float32_stack_keeps_its_dtype_and_centres_with_float64_means():
    x = np.random.default_rng(2).standard_normal((10, 3))
    raw = build_base_kernels(x, [KernelSpec("linear")], np.random.default_rng(0), dtype=np.float32)
    assert raw.dtype == np.float32
    # Row [a, 1, -a, 1] with a = 1e8: float32 sums lose the 1s (mean 0.25), float64 gives 0.5,
    # so the centred entry (0, 1) is 1 - 0.5 - 0.5 + 0.5 = 0.5 exactly.
    a = 1e8
    kernel = np.array(
        [[a, 1, -a, 1], [1, a, 1, -a], [-a, 1, a, 1], [1, -a, 1, a]], dtype=np.float32
    )
    _kcenter_inplace(kernel)
    assert kernel[0, 1] == 0.5


def test_nystrom_drops_numerically_null_pilot_directions_of_large_kernels():
    # Linear kernel of 2-D points of norm ~1e3: the pilot kernel's top eigenvalue is ~1e7 and the
    # null ones are rounding noise (~1e-9); only eigenvalues above 1e-10 * top are inverted.
    x = 1e3 * np.random.default_rng(4).standard_normal((25, 2))
    feats = nystrom_features(
        x, [KernelSpec("linear")], np.arange(0, 25, 3), np.random.default_rng(0)
    )
    assert np.linalg.matrix_rank(feats[0], tol=1e-6) == 2


def test_validate_kernels_limits():
    validate_kernels(np.stack([np.eye(3)]), k=3)  # k = n is allowed
    # large n: the smallest eigenvalue is not computed, the message says nan
    big = np.eye(2001)
    big[0, 0] = -1.0
    with pytest.raises(
        ValueError, match=r"kernel 0 is not positive semi-definite \(smallest eigenvalue nan"
    ):
        validate_kernels(big[None], k=1)


def test_knorm_messages_start_with_the_problem():
    with pytest.raises(
        ValueError, match="^a kernel has a non-positive diagonal entry after centring"
    ):
        knorm(np.zeros((2, 2)))
    with pytest.raises(
        ValueError, match="^a kernel has a non-positive diagonal entry after centring"
    ):
        _knorm_inplace(np.zeros((2, 2)))


def test_median_of_a_small_spread_and_the_default_subsample_size():
    # points 0, 0.5, 1.5: squared distances 0.25, 2.25, 1 -> median 1 (a valid bandwidth)
    assert median_sq_distance(np.array([[0.0], [0.5], [1.5]]), np.random.default_rng(0)) == 1.0
    # above 2000 points the median comes from 2000 of them, drawn without replacement
    x = np.random.default_rng(1).standard_normal((2001, 1))
    pts = x[np.random.default_rng(2).choice(2001, 2000, replace=False), 0]
    d2 = (pts[:, None] - pts[None, :]) ** 2
    expected = np.median(d2[np.triu_indices(2000, k=1)])
    assert median_sq_distance(x, np.random.default_rng(2)) == pytest.approx(expected, rel=1e-12)
