"""The multi-view generator's noise levels, the table subsample, and the Nystrom extension's details."""

import numpy as np
import pytest

from paper_pipelines.common.tables import load_sklearn_table
from paper_pipelines.pipelines.core_kernel.data import load_sklearn, make_multiview_blobs
from paper_pipelines.pipelines.core_kernel.extension import nystrom_embedding
from paper_pipelines.pipelines.core_kernel.mkc import top_eigen


def _residual_sd(x, labels, k):
    """Per-column sd of x around its own cluster means."""
    centred = x - np.stack([x[labels == c].mean(axis=0) for c in range(k)])[labels]
    return centred.std(axis=0)


def test_views_have_the_default_rising_noise_and_pure_noise_columns():
    x, labels, slices = make_multiview_blobs(
        20_000, 4, 3, 2, 3.0, None, 1, np.random.default_rng(0)
    )
    assert x.shape == (20_000, 9) and [s.stop - s.start for s in slices] == [3, 3, 3]
    assert set(np.unique(labels)) == {0, 1, 2, 3}
    for v, sd in enumerate([1.0, 1.5, 2.0]):  # default noise 1 + 0.5 v
        view = x[:, slices[v]]
        np.testing.assert_allclose(_residual_sd(view[:, :2], labels, 4), sd, rtol=0.03)
        # the last column of each view carries no cluster signal: unit sd around the overall mean
        assert view[:, 2].std() == pytest.approx(1.0, rel=0.03)
        means = np.stack([view[labels == c, 2].mean() for c in range(4)])
        assert np.abs(means).max() < 0.06


def test_given_noise_levels_repeat_over_the_views_and_separation_scales_the_means():
    x, labels, slices = make_multiview_blobs(
        20_000, 60, 3, 3, 5.0, [0.5, 2.0], 0, np.random.default_rng(1)
    )
    for v, sd in enumerate([0.5, 2.0, 0.5]):  # view v uses noise[v % 2]
        np.testing.assert_allclose(_residual_sd(x[:, slices[v]], labels, 60), sd, rtol=0.05)
    # 60 cluster means per view drawn as separation * N(0, 1): their sd is about 5
    means = np.stack([x[labels == c, :3].mean(axis=0) for c in range(60)])
    assert means.std() == pytest.approx(5.0, rel=0.15)


def test_subsample_is_sorted_uniform_and_standardised():
    x_all, y_all = load_sklearn_table("iris")
    x, y = load_sklearn("iris", 40, np.random.default_rng(2))
    idx = np.sort(np.random.default_rng(2).choice(150, 40, replace=False))
    np.testing.assert_array_equal(y, y_all[idx].astype(int))
    sub = x_all[idx]
    np.testing.assert_allclose(x, (sub - sub.mean(axis=0)) / sub.std(axis=0))
    # n at least the table size: every point, in order
    _, y_full = load_sklearn("iris", 150, np.random.default_rng(0))
    np.testing.assert_array_equal(y_full, y_all)


def test_nystrom_embedding_by_hand_and_with_repeated_landmarks():
    # H = P U Lambda^{-1}: with S = all points, the exact top eigenvectors come back unscaled
    rng = np.random.default_rng(0)
    feats = rng.standard_normal((2, 10, 3))
    kernels = feats @ np.swapaxes(feats, 1, 2)
    weights = np.array([0.8, 0.6])
    landmarks = np.array([0, 2, 4, 6, 8])
    small = np.tensordot(weights**2, kernels[:, landmarks][:, :, landmarks], axes=1)
    vals, vecs = top_eigen(small, 2)
    p = np.tensordot(weights**2, kernels[:, :, landmarks], axes=1)
    expected = p @ vecs / vals
    emb = nystrom_embedding(kernels, landmarks, weights, 2)
    np.testing.assert_allclose(np.abs(emb), np.abs(expected), atol=1e-10)
    # a landmark drawn twice (sampling with replacement) counts once
    twice = nystrom_embedding(kernels, np.array([8, 0, 2, 2, 4, 6, 0]), weights, 2)
    np.testing.assert_allclose(np.abs(twice), np.abs(expected), atol=1e-10)
    from_features = nystrom_embedding(feats, landmarks, weights, 2, features=True)
    np.testing.assert_allclose(np.abs(from_features), np.abs(expected), atol=1e-10)


def test_nystrom_embedding_needs_positive_top_eigenvalues():
    kernels = np.stack([np.diag([1.0, 0.0, 0.0, 1.0])])
    with pytest.raises(ValueError, match="non-positive top-2 eigenvalues"):
        nystrom_embedding(kernels, np.array([0, 1, 2]), np.array([1.0]), 2)
