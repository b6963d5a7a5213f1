"""Digits-C severity tables: each corruption's strength at each severity, measured from its output.

The tables are the module's design (CIFAR-10-C / ImageNet-C values where they carry over to 16x16, e.g.
the contrast factors and the JPEG qualities); each test recovers the parameter from what the
corruption does, so a changed number or a changed formula shows."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from paper_pipelines.pipelines.tca import digits_c

SEVERITIES = [1, 2, 3, 4, 5]


def by_severity(*columns):
    """Parameter rows (severity, value, ...) for severities 1..5."""
    return list(zip(SEVERITIES, *columns, strict=True))


def _rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize(("severity", "c"), by_severity((0.08, 0.12, 0.18, 0.26, 0.38)))
def test_gaussian_noise_standard_deviation(severity, c):
    x = np.full((40, 16, 16), 0.5)
    noise = digits_c.gaussian_noise(x, severity, _rng()) - x
    assert noise.std() == pytest.approx(c, rel=0.03) and abs(noise.mean()) < 0.01


@pytest.mark.parametrize(("severity", "c"), by_severity((60.0, 25.0, 12.0, 5.0, 3.0)))
def test_shot_noise_is_poisson_counts_over_c(severity, c):
    x = np.full((80, 16, 16), 0.5)
    out = digits_c.shot_noise(x, severity, _rng())
    assert out.mean() == pytest.approx(0.5, rel=0.03)
    assert out.var() == pytest.approx(0.5 / c, rel=0.05)  # Var(Poisson(0.5 c) / c) = 0.5 / c
    counts = out * c
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-9)  # integer photon counts
    # the photon rate uses the clipped image: an overexposed pixel counts as 1
    assert digits_c.shot_noise(
        np.full((80, 16, 16), 1.5), severity, _rng()
    ).mean() == pytest.approx(1.0, rel=0.03)


@pytest.mark.parametrize(("severity", "c"), by_severity((0.03, 0.06, 0.09, 0.17, 0.27)))
def test_impulse_noise_hits_a_fraction_c_with_salt_and_pepper(severity, c):
    x = np.full((80, 16, 16), 0.5)
    out = digits_c.impulse_noise(x, severity, _rng())
    hit = out != 0.5
    assert hit.mean() == pytest.approx(c, rel=0.08)
    assert set(np.unique(out[hit]).tolist()) == {0.0, 1.0}
    assert (out[hit] == 1.0).mean() == pytest.approx(0.5, abs=0.05)
    assert np.all(x == 0.5)  # the input is not modified in place


def test_disk_kernel_small_radius_is_a_point_and_sums_to_one():
    k = digits_c._disk_kernel(0.4)
    assert k.shape == (3, 3) and k[1, 1] == 1.0 and k.sum() == 1.0
    big = digits_c._disk_kernel(1.6)
    assert big.shape == (5, 5) and big.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(big, big.T)
    np.testing.assert_allclose(big, big[::-1, ::-1])
    assert big[2, 2] == big.max() and big[0, 0] == 0.0  # corner pixel centre is 2.83 px away


@pytest.mark.parametrize(("severity", "radius"), by_severity((0.6, 0.8, 1.0, 1.3, 1.6)))
def test_defocus_blur_spreads_a_point_into_the_disk(severity, radius):
    x = np.zeros((1, 9, 9))
    x[0, 4, 4] = 1.0
    out = digits_c.defocus_blur(x, severity, _rng())[0]
    k = digits_c._disk_kernel(radius)
    h = k.shape[0] // 2
    np.testing.assert_allclose(out[4 - h : 5 + h, 4 - h : 5 + h], k, atol=1e-12)
    assert out.sum() == pytest.approx(1.0)
    # at the border the edge pixel is repeated ("nearest"): a bright first column keeps, in column 0,
    # the kernel mass at horizontal offsets <= 0
    edge = np.zeros((1, 9, 9))
    edge[0, :, 0] = 1.0
    got = digits_c.defocus_blur(edge, severity, _rng())[0, 4, 0]
    assert got == pytest.approx(k[:, : h + 1].sum(), abs=1e-12)


@pytest.mark.parametrize(("severity", "length"), by_severity((1.5, 2.0, 3.0, 4.0, 5.0)))
def test_motion_blur_moves_the_centroid_by_half_the_length(severity, length):
    x = np.zeros((3, 21, 21))
    x[:, 10, 10] = 1.0
    out = digits_c.motion_blur(x, severity, _rng())
    yy, xx = np.mgrid[:21, :21]
    for img in out:
        assert img.sum() == pytest.approx(1.0, abs=1e-9)  # away from the border nothing is lost
        cy, cx = (img * yy).sum(), (img * xx).sum()
        assert np.hypot(cy - 10, cx - 10) == pytest.approx(length / 2, abs=1e-9)


@pytest.mark.parametrize(("severity", "c"), by_severity((0.2, 0.4, 0.6, 0.8, 1.0)))
def test_fog_haze_and_renormalisation(severity, c):
    """On a constant image of peak p the output is (p + c n) p / (p + c), n in [0, 1] reaching both
    ends: the maximum stays p (per image) and the minimum is p^2 / (p + c)."""
    peaks = np.array([1.0, 0.5, 0.8, 0.25])[:, None, None]
    out = digits_c.fog(np.ones((4, 16, 16)) * peaks, severity, _rng())
    np.testing.assert_allclose(out.max(axis=(1, 2)), peaks[:, 0, 0], atol=1e-12)
    np.testing.assert_allclose(out.min(axis=(1, 2)), (peaks**2 / (peaks + c))[:, 0, 0], atol=1e-12)


def test_smooth_noise_is_scaled_to_the_unit_interval_per_image():
    n = digits_c._smooth_noise(_rng(), 3, 16, 2.0)
    assert n.shape == (3, 16, 16)
    np.testing.assert_allclose(n.min(axis=(1, 2)), 0.0, atol=1e-12)
    np.testing.assert_allclose(n.max(axis=(1, 2)), 1.0, atol=1e-12)
    # low frequency: neighbouring pixels are close (the finest grid is size / 2 = 8 cells)
    assert np.abs(np.diff(n, axis=2)).mean() < 0.15
    coarse = digits_c._smooth_noise(_rng(), 2, 4, 2.0)  # one grid of 2 x 2 cells (size / 2)
    np.testing.assert_allclose(coarse.max(axis=(1, 2)), 1.0, atol=1e-12)


@pytest.mark.parametrize(("severity", "c"), by_severity((0.1, 0.2, 0.3, 0.4, 0.5)))
def test_brightness_adds_c(severity, c):
    x = _rng().uniform(0, 0.5, (2, 4, 4))
    np.testing.assert_allclose(digits_c.brightness(x, severity, _rng()), x + c)


@pytest.mark.parametrize(("severity", "c"), by_severity((0.75, 0.5, 0.4, 0.3, 0.15)))
def test_contrast_scales_deviations_from_each_images_mean(severity, c):
    x = _rng().uniform(0, 1, (3, 4, 4))
    mean = x.mean(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(digits_c.contrast(x, severity, _rng()), (x - mean) * c + mean)


@pytest.mark.parametrize(
    ("severity", "alpha", "sigma"),
    by_severity((0.6, 0.9, 1.2, 1.5, 1.9), (2.0, 2.0, 1.5, 1.5, 1.2)),
)
def test_elastic_transform_of_a_linear_ramp_shows_the_displacement(severity, alpha, sigma):
    """map_coordinates of the ramp f(y, x) = x returns x + dx exactly (linear interpolation) inside the
    image, so the field's standard deviation, alpha, can be read off the output."""
    ramp = np.tile(np.arange(32.0), (32, 1))[None].repeat(6, axis=0)
    out = digits_c.elastic_transform(ramp, severity, _rng())
    inner = (out - ramp)[:, 4:-4, 4:-4]
    # both field components are scaled together to a joint std of alpha; x is one of the two
    assert inner.std() == pytest.approx(alpha, rel=0.35)
    assert abs(inner.mean()) < 0.3 * alpha  # a zero-mean field: no net shift of the image
    assert digits_c.elastic_transform(np.full((2, 8, 8), 0.3), severity, _rng()) == pytest.approx(
        0.3
    )


@pytest.mark.parametrize(("severity", "c"), by_severity((0.85, 0.75, 0.6, 0.5, 0.4)))
def test_pixelate_to_c_times_the_size(severity, c):
    x = np.arange(256, dtype=np.float64).reshape(1, 16, 16) / 255.0  # all pixels distinct
    out = digits_c.pixelate(x, severity, _rng())
    small = int(16 * c)
    assert len(np.unique(out)) == small * small  # one value per box of the small image
    tiny = digits_c.pixelate(x[:, :4, :4] * 4, severity, _rng())
    assert len(np.unique(tiny)) == max(2, int(4 * c)) ** 2  # never below 2 x 2


@pytest.mark.parametrize(("severity", "quality"), by_severity((25, 18, 15, 10, 7)))
def test_jpeg_uses_the_imagenet_c_quality(severity, quality):
    x = _rng().uniform(0, 1, (2, 16, 16))
    out = digits_c.jpeg_compression(x, severity, _rng())
    for img, got in zip(x, out, strict=True):
        buf = io.BytesIO()
        Image.fromarray(digits_c.to_uint8(img), mode="L").save(buf, format="JPEG", quality=quality)
        expected = np.asarray(Image.open(io.BytesIO(buf.getvalue())), dtype=np.float32) / 255.0
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(
    ("severity", "sigma", "delta", "iterations"),
    [(1, 0.3, 1, 1), (2, 0.4, 1, 1), (3, 0.5, 1, 2), (4, 0.6, 2, 1), (5, 0.7, 2, 2)],
)
def test_glass_blur_only_moves_pixels_locally(severity, sigma, delta, iterations):
    from scipy import ndimage

    # A constant image stays constant (blur and swaps both keep it); swaps move mass, never make it.
    flat = digits_c.glass_blur(np.full((2, 12, 12), 0.4), severity, _rng())
    np.testing.assert_allclose(flat, 0.4, atol=1e-12)
    x = np.zeros((2, 20, 20))
    x[0, 10, 10] = 1.0
    both = digits_c.glass_blur(x, severity, _rng(1))
    out = both[0]
    assert out.sum() == pytest.approx(1.0, rel=1e-2)  # up to what "nearest" adds at the border
    assert np.all(both[1] == 0.0)  # each image on its own: nothing leaks across the batch
    # pixels are swapped (the blur alone would leave a symmetric spot)
    twice = ndimage.gaussian_filter(
        ndimage.gaussian_filter(x[0], sigma, mode="nearest"), sigma, mode="nearest"
    )
    assert not np.allclose(out, twice)
    # the first blur's spread is the severity's sigma: with no swaps the result is blur(blur(x))
    once = ndimage.gaussian_filter(x[0], sigma, mode="nearest")
    assert out.max() <= once.max() + 1e-12


def test_to_uint8_rounds_and_clips():
    x = np.array([-0.2, 0.0, 0.5, 0.999, 1.3])
    assert digits_c.to_uint8(x).tolist() == [0, 0, 128, 255, 255]


def test_corrupt_seeds_by_name_and_severity_and_checks_shape():
    x = np.full((3, 8, 8), 0.5)
    out = digits_c.corrupt(x, "gaussian_noise", 2, seed=7)
    i = digits_c.CORRUPTIONS.index("gaussian_noise")
    ref = digits_c.gaussian_noise(x, 2, np.random.default_rng([7, i, 2]))
    np.testing.assert_array_equal(out, digits_c.to_uint8(ref))
    assert out.dtype == np.uint8
    with pytest.raises(ValueError, match=r"images must have shape \(N, H, W\), got \(8, 8\)"):
        digits_c.corrupt(x[0], "fog", 1, seed=0)
    domains = digits_c.make_domains(x, ["brightness", "contrast"], [1, 4], seed=0)
    assert list(domains) == ["brightness@1", "brightness@4", "contrast@1", "contrast@4"]
    np.testing.assert_array_equal(domains["contrast@4"], digits_c.corrupt(x, "contrast", 4, 0))
