"""Digits-C corruptions with their randomness pinned: a stand-in generator returns constant draws (no
swap, one fixed direction), so the geometry of glass and motion blur can be checked by hand; the noise
corruptions are checked against the same seeded draws written out."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import ndimage

from paper_pipelines.pipelines.tca import digits_c

GLASS = {1: (0.3, 1, 1), 2: (0.4, 1, 1), 3: (0.5, 1, 2), 4: (0.6, 2, 1), 5: (0.7, 2, 2)}


class ConstantDraws:
    """Stands in for np.random.Generator: every draw is ``value``; the ranges asked for are recorded."""

    def __init__(self, value: float) -> None:
        self.value = value
        self.calls: list[tuple[str, float, float, tuple]] = []

    def integers(self, low, high, size):
        self.calls.append(("integers", low, high, tuple(size)))
        return np.full(size, int(self.value), dtype=np.int64)

    def uniform(self, low, high, size):
        self.calls.append(("uniform", low, high, (size,) if np.isscalar(size) else tuple(size)))
        return np.full(size, float(self.value))


def _blur(x: np.ndarray, sigma: float) -> np.ndarray:
    return ndimage.gaussian_filter(x, sigma=sigma, mode="nearest")


def _distinct(h: int = 8, w: int = 8) -> np.ndarray:
    return (np.arange(h * w, dtype=np.float64).reshape(1, h, w) * 7 % 23) / 23.0


@pytest.mark.parametrize("severity", [1, 2, 3, 4, 5])
def test_glass_blur_without_displacement_is_the_severity_blur_twice(severity):
    """dy = dx = 0: every swap exchanges a pixel with itself, so the output is blur(blur(x)) with the
    table's sigma; the scan visits rows and columns h - delta .. delta, (h - 2 delta + 1)^2 pixels per
    iteration, each drawing (dy, dx) for every image from [-delta, delta)."""
    sigma, delta, iterations = GLASS[severity]
    x = np.concatenate([_distinct(), _distinct()[:, ::-1]])
    draws = ConstantDraws(0)
    out = digits_c.glass_blur(x.copy(), severity, draws)
    for img, got in zip(x, out, strict=True):
        np.testing.assert_allclose(got, _blur(_blur(img, sigma), sigma), atol=1e-12)
    assert len(draws.calls) == iterations * (8 - 2 * delta + 1) ** 2
    assert set(draws.calls) == {("integers", -delta, delta, (2, 2))}


def _swap_reference(img: np.ndarray, delta: int, iterations: int, dy: int, dx: int) -> np.ndarray:
    """The ImageNet-C loop for one image, bottom-up, with a constant displacement (dy, dx)."""
    img = img.copy()
    h, w = img.shape
    for _ in range(iterations):
        for i in range(h - delta, delta - 1, -1):
            for j in range(w - delta, delta - 1, -1):
                a, b = (i, j), (i + dy, j + dx)
                img[a], img[b] = img[b], img[a]
    return img


@pytest.mark.parametrize("severity", [1, 2, 3, 4, 5])
def test_glass_blur_swaps_each_pixel_with_its_displaced_neighbour(severity):
    """dy = dx = -1 (up and left): pixel (i, j) swaps with (i - 1, j - 1), scanning from the bottom
    right, so a value travels up the diagonal; the result is blur(swaps(blur(x)))."""
    sigma, delta, iterations = GLASS[severity]
    x = _distinct()
    out = digits_c.glass_blur(x.copy(), severity, ConstantDraws(-1))[0]
    swapped = _swap_reference(_blur(x[0], sigma), delta, iterations, -1, -1)
    np.testing.assert_allclose(out, _blur(swapped, sigma), atol=1e-12)
    # by hand on a 4 x 4 image without blur: one pass of delta = 1 moves the bottom-right value to the
    # top-left corner and shifts the rest of the main diagonal one step down
    diag = np.diag(_swap_reference(np.diag([1.0, 2.0, 3.0, 4.0]), 1, 1, -1, -1))
    assert diag.tolist() == [4.0, 1.0, 2.0, 3.0]


@pytest.mark.parametrize(("severity", "hand"), [(1, (0.375, 0.5, 0.125)), (2, (0.3, 0.4, 0.3))])
def test_motion_blur_of_a_point_along_a_fixed_direction_by_hand(severity, hand):
    """Angle 0: the point is shifted right by each of the 2 ceil(L) + 1 steps linspace(0, L) and the
    copies averaged. L = 2: steps 0, .5, 1, 1.5, 2 give column masses (1.5, 2, 1.5) / 5; L = 1.5: steps
    0, .375, .75, 1.125, 1.5 give (1.875, 2.5, .625) / 5. Angle pi / 2 moves it down instead."""
    x = np.zeros((2, 9, 9))
    x[:, 4, 4] = 1.0
    draws = ConstantDraws(0.0)
    out = digits_c.motion_blur(x, severity, draws)
    assert draws.calls == [("uniform", -np.pi, np.pi, (2,))]
    expected = np.zeros((9, 9))
    expected[4, 4:7] = hand
    for img in out:
        np.testing.assert_allclose(img, expected, atol=1e-12)
    down = digits_c.motion_blur(x[:1], severity, ConstantDraws(np.pi / 2))[0]
    np.testing.assert_allclose(down, expected.T, atol=1e-12)


@pytest.mark.parametrize("severity", [1, 2, 3, 4, 5])
def test_gaussian_noise_adds_the_seeded_draws(severity):
    c = (0.08, 0.12, 0.18, 0.26, 0.38)[severity - 1]
    x = np.linspace(0, 1, 2 * 4 * 4).reshape(2, 4, 4)
    out = digits_c.gaussian_noise(x, severity, np.random.default_rng(3))
    np.testing.assert_allclose(
        out - x, np.random.default_rng(3).normal(0.0, c, size=x.shape), atol=1e-12
    )


@pytest.mark.parametrize("decay", [1.75, 2.0, 3.0])
def test_smooth_noise_is_the_weighted_sum_of_octaves(decay):
    """size 8: a 2 x 2 grid (weight 1) and a 4 x 4 grid (weight 1 / decay), each drawn from U(-1, 1)
    and upsampled bilinearly to 8 x 8, summed, then scaled to [0, 1] per image."""
    rng = np.random.default_rng(5)
    c2, c4 = rng.uniform(-1.0, 1.0, (3, 2, 2)), rng.uniform(-1.0, 1.0, (3, 4, 4))
    total = ndimage.zoom(c2, (1, 4, 4), order=1) + ndimage.zoom(c4, (1, 2, 2), order=1) / decay
    total -= total.min(axis=(1, 2), keepdims=True)
    expected = total / total.max(axis=(1, 2), keepdims=True)
    got = digits_c._smooth_noise(np.random.default_rng(5), 3, 8, decay)
    np.testing.assert_allclose(got, expected, atol=1e-12)
    # a larger decay damps the finer octave: the noise gets smoother
    rough = [np.abs(np.diff(digits_c._smooth_noise(np.random.default_rng(s), 4, 16, d), axis=2))
             .mean() for s, d in ((0, 1.75), (0, 3.0))]  # fmt: skip
    assert rough[1] < rough[0]


@pytest.mark.parametrize(
    ("severity", "alpha", "sigma"),
    [(1, 0.6, 2.0), (2, 0.9, 2.0), (3, 1.2, 1.5), (4, 1.5, 1.5), (5, 1.9, 1.2)],
)
def test_elastic_transform_displaces_by_the_smoothed_seeded_field(severity, alpha, sigma):
    """On the linear image f(y, x) = x + 20 y, bilinear sampling is exact, so the output minus f is
    dx + 20 dy wherever the displaced point stays inside the image; (dy, dx) is U(-1, 1) noise per
    component, Gaussian-filtered with the table's sigma (each component on its own) and scaled to a
    joint standard deviation alpha."""
    h = w = 20
    yy, xx = np.mgrid[:h, :w].astype(np.float64)
    f = (xx + 20 * yy)[None].repeat(3, axis=0)
    out = digits_c.elastic_transform(f, severity, np.random.default_rng(11))
    rng = np.random.default_rng(11)
    for got in out:
        field = ndimage.gaussian_filter(rng.uniform(-1, 1, size=(2, h, w)), sigma=(0, sigma, sigma))
        dy, dx = field * alpha / field.std()
        inside = (yy + dy >= 0) & (yy + dy <= h - 1) & (xx + dx >= 0) & (xx + dx <= w - 1)
        assert inside.mean() > 0.6
        np.testing.assert_allclose((got - f[0])[inside], (dx + 20 * dy)[inside], atol=1e-9)


def test_disk_kernel_of_radius_0_6_by_counting_sub_pixels():
    """Sub-pixel centres sit at +-1/16, 3/16, 5/16, 7/16 of a pixel; r^2 = 0.36 = 92.16 / 256. In the
    centre pixel only the 4 corner centres (7/16, 7/16) fall outside (98 / 256): 60 of 64. In a side
    neighbour the nearest column is at 9/16 (81 / 256), so |y| <= 3/16 fits: 4 of 64. Diagonal
    neighbours: (9/16)^2 * 2 > 0.36, none. Normalised by 60 + 4 x 4 = 76."""
    expected = np.array([[0.0, 4.0, 0.0], [4.0, 60.0, 4.0], [0.0, 4.0, 0.0]]) / 76.0
    np.testing.assert_allclose(digits_c._disk_kernel(0.6), expected, atol=1e-15)


def test_shot_noise_counts_a_negative_pixel_as_no_photons():
    x = np.full((2, 4, 4), -0.3)
    assert np.all(digits_c.shot_noise(x, 3, np.random.default_rng(0)) == 0.0)


def test_domain_key_inverse_splits_at_the_last_at_sign():
    assert digits_c.parse_domain_key("fog@night@2") == ("fog@night", 2)
    assert digits_c.parse_domain_key(digits_c.domain_key("a@b", 4)) == ("a@b", 4)
