"""Each synthetic distortion does what its name says, more strongly at a higher level."""

import numpy as np
import pytest

from paper_pipelines.pipelines.cpl_iqa import distortions as d


def scene():
    rng = np.random.default_rng(0)
    x = np.zeros((32, 32, 3))
    x[:, 16:] = [0.8, 0.3, 0.2]
    x[:, :16] = [0.2, 0.5, 0.7]
    return np.clip(x + 0.05 * rng.standard_normal(x.shape), 0, 1)


def grad(x):
    y = d.luminance(x)
    return np.abs(np.diff(y, axis=1)).mean()


@pytest.mark.parametrize("name", sorted(d.DISTORTIONS))
def test_every_distortion_keeps_shape_and_range(name):
    out = d.DISTORTIONS[name](scene(), 0.7, np.random.default_rng(0))
    assert out.shape == (32, 32, 3)
    assert out.min() >= 0.0 and out.max() <= 1.0
    assert not np.allclose(out, scene())


def test_levels_strengthen_each_distortion():
    x, rng = scene(), np.random.default_rng(0)
    assert grad(d.blur(x, 1.0, rng)) < grad(d.blur(x, 0.0, rng)) < grad(x)
    assert d.contrast(x, 1.0, rng).std() < d.contrast(x, 0.0, rng).std() < x.std()
    assert np.std(d.noise(x, 1.0, rng) - x) > np.std(d.noise(x, 0.0, rng) - x) > 0.005
    chroma = lambda im: np.abs(im - d.luminance(im)[..., None]).mean()  # noqa: E731
    assert chroma(d.saturation(x, 1.0, rng)) == pytest.approx(0.0, abs=1e-12)
    assert chroma(d.saturation(x, 0.0, rng)) == pytest.approx(0.8 * chroma(x), rel=0.02)
    err = lambda im: np.abs(im - x).mean()  # noqa: E731
    assert err(d.jpeg(x, 1.0, rng)) > err(d.jpeg(x, 0.0, rng)) > 0


def test_brightness_shifts_up_or_down_by_the_level():
    x = np.full((4, 4, 3), 0.5)
    shifts = {round(float(d.brightness(x, 1.0, np.random.default_rng(s)).mean() - 0.5), 6)
              for s in range(20)}  # fmt: skip
    assert shifts == {0.35, -0.35}
    assert abs(d.brightness(x, 0.0, np.random.default_rng(0)).mean() - 0.5) == pytest.approx(0.05)


def test_contrast_keeps_the_mean_and_luma_weights():
    x = scene()
    assert d.contrast(x, 0.5, np.random.default_rng(0)).mean() == pytest.approx(x.mean(), abs=1e-3)
    assert np.allclose(d.luminance(np.array([[1.0, 0.0, 0.0]])), 0.299)


def test_apply_mixture_composes_in_order_and_rejects_unknown_names():
    x, rng = scene(), np.random.default_rng(0)
    both = d.apply_mixture(x, ["saturation", "contrast"], [1.0, 0.5], rng)
    manual = d.contrast(d.saturation(x, 1.0, rng), 0.5, rng)
    assert np.allclose(both, manual)
    with pytest.raises(ValueError, match="unknown distortion 'fog'"):
        d.apply_mixture(x, ["fog"], [0.5], rng)
    assert d.to_uint8(np.array([0.0, 0.5, 1.2])).tolist() == [0, 128, 255]


def test_each_distortion_follows_its_stated_formula():
    from scipy.ndimage import gaussian_filter

    x = scene()
    level = 0.5
    assert np.allclose(
        d.blur(x, level, None), np.clip(gaussian_filter(x, sigma=(1.4, 1.4, 0)), 0, 1)
    )
    rng_a, rng_b = np.random.default_rng(3), np.random.default_rng(3)
    expected = np.clip(x + 0.085 * rng_b.standard_normal(x.shape), 0, 1)
    assert np.allclose(d.noise(x, level, rng_a), expected)
    mean = x.mean()
    assert np.allclose(d.contrast(x, level, None), np.clip(mean + 0.575 * (x - mean), 0, 1))
    grey = d.luminance(x)[..., None]
    assert np.allclose(d.saturation(x, level, None), np.clip(grey + 0.4 * (x - grey), 0, 1))
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.fromarray(d.to_uint8(x)).save(buffer, format="JPEG", quality=32)
    buffer.seek(0)
    direct = np.asarray(Image.open(buffer).convert("RGB"), float) / 255.0
    assert np.array_equal(d.jpeg(x, 0.51, None), direct)  # round(60 - 55 * 0.51) = 32


def test_brightness_sign_follows_the_generator():
    x = np.full((2, 2, 3), 0.5)
    up = d.brightness(x, 0.0, np.random.default_rng(0))  # first draw 0.637 >= 0.5: down
    first = np.random.default_rng(0).random()
    assert (up.mean() > 0.5) == (first < 0.5)


def test_brightness_is_clipped_at_white():
    x = np.full((2, 2, 3), 0.9)
    shifted = [d.brightness(x, 1.0, np.random.default_rng(s)) for s in range(6)]
    assert max(float(s.max()) for s in shifted) == 1.0


def test_to_uint8_scales_by_255_and_clips_below_zero():
    assert d.to_uint8(np.array([0.6, -0.2, 1.0])).tolist() == [153, 0, 255]


def test_each_distortion_needs_its_own_level():
    with pytest.raises(ValueError):
        d.apply_mixture(scene(), ["blur", "noise"], [0.5], np.random.default_rng(0))
    with pytest.raises(ValueError):
        d.apply_mixture(scene(), ["blur"], [0.5, 0.2], np.random.default_rng(0))
