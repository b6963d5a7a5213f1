"""NSS features: moments, MSCN, paired products, blockiness and colourfulness by hand."""

import numpy as np
import pytest

from paper_pipelines.pipelines.cpl_iqa import features as f


def test_standard_moments_by_hand():
    mean, var, skewness, excess = f.standard_moments(np.array([0.0, 0.0, 0.0, 4.0]))
    assert mean == 1.0 and var == 3.0
    assert skewness == pytest.approx(np.mean(np.array([-1, -1, -1, 3.0]) ** 3) / 3**1.5)
    assert excess == pytest.approx(np.mean(np.array([-1, -1, -1, 3.0]) ** 4) / 9 - 3)
    assert f.standard_moments(np.full(5, 2.0)) == (2.0, 0.0, 0.0, 0.0)


def test_mscn_of_a_flat_image_is_zero_and_paired_products_have_their_shapes():
    assert np.allclose(f.mscn(np.full((8, 8), 0.4)), 0.0)
    m = np.arange(12.0).reshape(3, 4)
    pp = f.paired_products(m)
    assert pp["h"].shape == (3, 3) and pp["h"][0, 0] == 0.0 * 1.0
    assert pp["v"][0, 1] == 1.0 * 5.0
    assert pp["d1"][0, 0] == 0.0 * 5.0 and pp["d2"][0, 0] == 1.0 * 4.0


def test_blockiness_detects_steps_at_8_pixel_borders():
    y = np.repeat(np.repeat(np.arange(4.0), 8)[None, :], 8, axis=0)  # steps at columns 7|8, 15|16
    assert f.blockiness(y) > 100
    smooth = np.repeat(np.linspace(0, 3, 32)[None, :], 8, axis=0)
    assert f.blockiness(smooth) == pytest.approx(1.0, rel=1e-3)


def test_colourfulness_of_grey_is_zero_and_grows_with_chroma():
    grey = np.full((4, 4, 3), 0.5)
    assert f.colourfulness(grey) == 0.0
    red = np.zeros((4, 4, 3))
    red[..., 0] = 1.0
    assert f.colourfulness(red) == pytest.approx(0.3 * np.hypot(1.0, 0.5))


def test_feature_vector_is_finite_and_distinguishes_blur():
    rng = np.random.default_rng(0)
    sharp = (rng.random((32, 32, 3)) * 255).astype(np.uint8)
    flat = np.full((32, 32, 3), 128, np.uint8)
    a, b = f.nss_features(sharp), f.nss_features(flat)
    assert a.shape == b.shape == (50,)
    assert np.all(np.isfinite(a)) and np.all(np.isfinite(b))
    assert f.feature_matrix(np.stack([sharp, flat])).shape == (2, 50)
    assert a[40] > b[40]  # Laplacian variance: sharp noise >> flat


def test_standardise_uses_the_reference_rows():
    x = np.array([[1.0, 5.0], [3.0, 5.0]])
    out = f.standardise(x, x)
    assert np.allclose(out, [[-1.0, 0.0], [1.0, 0.0]])
    assert np.allclose(f.standardise(np.array([[5.0, 5.0]]), x), [[3.0, 0.0]])
