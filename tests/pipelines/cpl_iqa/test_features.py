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


def test_mscn_follows_its_formula():
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng(0)
    y = rng.random((12, 12))
    mu = gaussian_filter(y, 7 / 6)
    sd = np.sqrt(np.clip(gaussian_filter(y * y, 7 / 6) - mu * mu, 0, None))
    assert np.allclose(f.mscn(y), (y - mu) / (sd + 1 / 255))
    mu2 = gaussian_filter(y, 2.0)
    sd2 = np.sqrt(np.clip(gaussian_filter(y * y, 2.0) - mu2 * mu2, 0, None))
    assert np.allclose(f.mscn(y, 2.0, 0.5), (y - mu2) / (sd2 + 0.5))


def test_scale_features_layout():
    rng = np.random.default_rng(1)
    y = rng.random((16, 16))
    out = f.scale_features(y)
    m = f.mscn(y)
    _, var, skewness, excess = f.standard_moments(m)
    assert out[:4] == pytest.approx([var, np.mean(np.abs(m)), skewness, excess])
    h = f.paired_products(m)["h"]
    mean_h, var_h, skew_h, _ = f.standard_moments(h)
    assert out[4:8] == pytest.approx([mean_h, var_h, np.mean(np.abs(h)), skew_h])
    d2 = f.paired_products(m)["d2"]
    assert out[16] == pytest.approx(d2.mean()) and len(out) == 20


def test_global_cues_are_where_the_layout_says():
    from scipy.ndimage import gaussian_filter, laplace

    from paper_pipelines.pipelines.cpl_iqa.distortions import luminance

    rng = np.random.default_rng(2)
    img = (rng.random((16, 16, 3)) * 255).astype(np.uint8)
    v = f.nss_features(img)
    x = img / 255.0
    y = luminance(x)
    half = gaussian_filter(y, 0.5)[::2, ::2]
    assert v[20:40] == pytest.approx(f.scale_features(half))
    gy, gx = np.gradient(y)
    local = np.sqrt(np.clip(gaussian_filter(y * y, 2.0) - gaussian_filter(y, 2.0) ** 2, 0, None))
    expected = [
        np.var(laplace(y)), np.mean(np.hypot(gx, gy)), local.mean(), local.std(), y.mean(),
        y.std(), f.colourfulness(x), (x.max(axis=2) - x.min(axis=2)).mean(), f.blockiness(y),
        np.mean(np.abs(y - gaussian_filter(y, 1.0))),
    ]  # fmt: skip
    assert v[40:] == pytest.approx(expected)


def test_blockiness_formula_by_hand():
    y = np.zeros((2, 16))
    y[:, 8:] = 1.0  # one step of 1 across the border between columns 7 and 8, nothing inside
    # 15 column steps: only column 7 is a border (mean 1), the 14 inside steps are 0
    assert f.blockiness(y) == pytest.approx(1.0 / 1e-6)
    y2 = np.tile(np.arange(16.0), (2, 1))  # steps of 1 everywhere
    assert f.blockiness(y2) == pytest.approx(1.0 / (1.0 + 1e-6))
    assert f.blockiness(y2, block=4) == pytest.approx(1.0 / (1.0 + 1e-6))


def test_horizontal_product_pairs_each_coefficient_with_its_right_neighbour():
    m = np.arange(12.0).reshape(3, 4)
    assert np.array_equal(f.paired_products(m)["h"][0], [0.0, 2.0, 6.0])


def test_colourfulness_of_pure_green():
    green = np.zeros((2, 2, 3))
    green[..., 1] = 1.0
    assert f.colourfulness(green) == pytest.approx(0.3 * np.hypot(1.0, 0.5))
    blue = np.zeros((2, 2, 3))
    blue[..., 2] = 1.0
    assert f.colourfulness(blue) == pytest.approx(0.3 * 1.0)


def test_standardise_divides_by_the_reference_sd():
    x = np.array([[0.0], [4.0]])
    assert np.allclose(f.standardise(x, x), [[-1.0], [1.0]])


def test_the_second_scale_of_small_images():
    from scipy.ndimage import gaussian_filter

    from paper_pipelines.pipelines.cpl_iqa.distortions import luminance

    rng = np.random.default_rng(5)
    for shape, gaussian in (((3, 5, 3), False), ((4, 6, 3), True)):
        img = (rng.random(shape) * 255).astype(np.uint8)
        y = luminance(img / 255.0)
        half = gaussian_filter(y, 0.5)[::2, ::2] if gaussian else y[::2, ::2]
        with np.errstate(all="ignore"):
            v = f.nss_features(img)
        assert v[20:40] == pytest.approx(f.scale_features(half))


def test_the_anti_diagonal_product_pairs_each_coefficient_with_its_lower_left_neighbour():
    m = np.arange(12.0).reshape(3, 4)
    # m[i, j + 1] * m[i + 1, j]: 1*4, 2*5, 3*6 on the first row; 5*8, 6*9, 7*10 on the second
    assert np.array_equal(f.paired_products(m)["d2"], [[4.0, 10.0, 18.0], [40.0, 54.0, 70.0]])


def test_a_constant_reference_column_is_only_centred_and_a_small_sd_still_divides():
    reference = np.array([[0.0, 5.0], [1.0, 5.0]])  # sds 0.5 and 0
    assert np.allclose(f.standardise(np.array([[1.0, 8.0]]), reference), [[1.0, 3.0]])


def test_the_vertical_product_pairs_each_coefficient_with_the_one_below():
    m = np.arange(12.0).reshape(3, 4)
    assert np.array_equal(
        f.paired_products(m)["v"], [[0.0, 5.0, 12.0, 21.0], [32.0, 45.0, 60.0, 77.0]]
    )


def test_features_of_flat_grey_images_are_finite():
    # on a flat image the local variance E[y^2] - E[y]^2 rounds to tiny negatives for some greys
    for grey in (5, 10, 17, 128):
        assert np.all(np.isfinite(f.nss_features(np.full((12, 12, 3), grey, np.uint8))))
