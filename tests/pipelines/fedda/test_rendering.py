"""The rendering helpers and each domain's recipe, value by value on small images.

The recipes are the module docstrings' ("a bright tinted digit on a dark solid or gradient background",
"Sobel edges as dark strokes on white paper", ...) with their stated ranges; a seeded recipe is checked
against the same draws taken by hand from a generator of the same seed, in the recipe's order.
"""

import numpy as np
import pytest
from scipy import ndimage
from skimage.transform import resize

from paper_pipelines.pipelines.fedda import data


class ScriptedCoins:
    """A seeded np.random.Generator whose ``random()`` draws (the recipes' branch coins) are scripted,
    so a branch threshold can be drawn exactly; every other draw is the real generator's."""

    def __init__(self, seed, coins):
        self.rng = np.random.default_rng(seed)
        self.coins = list(coins)

    def random(self):
        return self.coins.pop(0)

    def __getattr__(self, name):
        return getattr(self.rng, name)


def _bar(value=1.0):
    glyph = np.zeros((8, 8))
    glyph[2:6, 3:5] = value
    return glyph


def _rolled(mask, rng):
    """shift() by hand: one draw of (dy, dx) in {-1, 0, 1}^2, a cyclic roll of rows and columns."""
    dy, dx = rng.integers(-1, 2, size=2)
    return np.roll(np.roll(mask, int(dy), axis=0), int(dx), axis=1)


# ---------------------------------------------------------------- helpers
def test_upscale_is_bilinear_and_clipped_to_the_unit_range():
    glyph = np.zeros((8, 8))
    glyph[:, 4:] = 1.0
    up = data.upscale(glyph, 16)
    # pixel centres: output column j sits at input column j / 2 - 0.25 (between columns 3 and 4:
    # 3.25 -> 0.25, 3.75 -> 0.75)
    assert np.allclose(up[0, 5:11], [0.0, 0.0, 0.25, 0.75, 1.0, 1.0])
    assert np.allclose(up, up[:1])  # constant down the columns
    hot = data.upscale(glyph * 2.0, 16)  # a glyph out of range still gives [0, 1]
    assert hot.max() == 1.0 and hot.min() == 0.0
    assert data.upscale(glyph - 0.5, 16).min() == 0.0  # and below it


def test_blend_defaults_to_an_opaque_digit():
    background = np.full((1, 2, 3), 0.2)
    out = data.blend(background, np.array([[1.0, 0.25]]), np.array([1.0, 0.5, 0.0]))
    assert np.allclose(out[0, 0], [1.0, 0.5, 0.0])  # mask 1: the colour alone
    assert np.allclose(out[0, 1], 0.75 * 0.2 + 0.25 * np.array([1.0, 0.5, 0.0]))


def test_shift_moves_by_at_most_one_pixel_each_way_and_every_offset_occurs():
    image = np.zeros((7, 7))
    image[3, 3] = 1.0
    seen = set()
    for seed in range(60):
        out = data.shift(image, np.random.default_rng(seed))
        assert out.shape == (7, 7) and out.sum() == 1.0
        (r,), (c,) = np.nonzero(out)
        seen.add((int(r) - 3, int(c) - 3))
    assert seen == {(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1)}
    rgb = np.zeros((5, 5, 3))
    rgb[2, 2] = [1.0, 2.0, 3.0]
    out = data.shift(rgb, np.random.default_rng(0))
    (r,), (c,) = np.nonzero(out[..., 0])
    assert out[r, c].tolist() == [1.0, 2.0, 3.0]  # channels move together, never into each other


def test_to_uint8_chw_clips_then_rounds_to_bytes():
    image = np.array([[[-0.5, 0.2, 1.0], [1.5, 0.5, 0.0]]])  # (1, 2, 3)
    out = data.to_uint8_chw([image])
    assert out.shape == (1, 3, 1, 2) and out.dtype == np.uint8
    assert out[0, :, 0, 0].tolist() == [0, 51, 255]
    assert out[0, :, 0, 1].tolist() == [255, 128, 0]
    assert np.allclose(data.as_float(out)[0, :, 0, 0], [0.0, 0.2, 1.0])
    assert data.as_float(out).dtype == np.float32


def test_random_crop_is_a_square_of_two_to_six_sizes_inside_the_image(monkeypatch):
    image = (np.arange(30)[:, None] * 100 + np.arange(30)[None, :]).astype(np.float32)  # 100 r + c
    crops = []

    def keep(crop, *args, **kwargs):
        crops.append(crop[..., 0])
        return resize(crop, *args, **kwargs)

    monkeypatch.setattr(data, "resize", keep)
    for seed in range(200):
        assert data.random_crop(image, 4, np.random.default_rng(seed)).shape == (4, 4, 1)
    sides = set()
    for crop in crops:
        top, left = divmod(int(crop[0, 0]), 100)
        side = crop.shape[0]
        assert crop.shape == (side, side)  # square, so wholly inside the 30 x 30 image
        assert np.array_equal(crop, image[top : top + side, left : left + side])
        sides.add(side)
    assert sides == set(range(8, 25))  # 2 to 6 output sizes wide, each one drawn
    crops.clear()
    for seed in range(
        50
    ):  # a photograph wider than high, or higher than wide: the short side rules
        data.random_crop(image[:, :10], 4, np.random.default_rng(seed))
        data.random_crop(image[:10], 4, np.random.default_rng(seed))
    assert max(c.shape[0] for c in crops) <= 10 and all(c.shape[0] == c.shape[1] for c in crops)


# ---------------------------------------------------------------- the source domain
def _source_by_hand(glyph, size, seed, gradient, transposed, blurred):
    rng = np.random.default_rng(seed)
    mask = _rolled(data.upscale(glyph, size), rng)
    base = rng.uniform(0.0, 0.3, 3)
    if gradient:
        rows = np.arange(size)[:, None] / (size - 1) * np.ones((1, size))  # 0 at the top, 1 below
        ramp = rows.T if transposed else rows
        background = base + ramp[..., None] * rng.uniform(-0.15, 0.15, 3)
    else:
        background = np.broadcast_to(base, (size, size, 3))
    colour = rng.uniform(0.7, 1.0, 3)
    a = mask[..., None]
    img = np.clip(background, 0, 1) * (1 - a) + colour * a
    return ndimage.gaussian_filter(img, sigma=(0.6, 0.6, 0)) if blurred else img


@pytest.mark.parametrize(
    ("coins", "gradient", "transposed", "blurred"),
    [
        ((0.5, 0.3), False, False, False),  # coins of exactly 0.5 and 0.3: solid, sharp
        ((0.4, 0.2, 0.9), True, False, False),  # vertical gradient
        ((0.1, 0.5, 0.1), True, True, True),  # horizontal gradient, blurred
    ],
)
def test_source_is_a_tinted_digit_on_a_solid_or_gradient_background(
    coins, gradient, transposed, blurred
):
    for seed in (0, 1):
        got = data.render_source(_bar(), 12, ScriptedCoins(seed, coins))
        want = _source_by_hand(_bar(), 12, seed, gradient, transposed, blurred)
        assert got.shape == (12, 12, 3)
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_source_background_and_digit_stay_in_their_ranges():
    for seed in range(20):
        blank = data.render_source(np.zeros((8, 8)), 10, np.random.default_rng(seed))
        assert blank.min() >= 0.0 and blank.max() <= 0.45  # base <= 0.3, ramp tilt <= 0.15
        full = data.render_source(np.ones((8, 8)), 10, np.random.default_rng(seed))
        assert full.min() >= 0.7 and full.max() <= 1.0  # the digit's colour covers every pixel


# ---------------------------------------------------------------- the client domains
def test_sketch_is_sobel_strokes_on_paper():
    glyph = _bar()
    for seed in (0, 3):
        rng = np.random.default_rng(seed)
        big = data.upscale(glyph, 24)
        edges = np.hypot(ndimage.sobel(big, 0), ndimage.sobel(big, 1))
        edges = resize(edges / edges.max(), (12, 12), order=1, anti_aliasing=True)
        strokes = _rolled(np.clip(1.5 * edges, 0, 1), rng)[..., None]
        paper, ink = rng.uniform(0.9, 1.0, 3), rng.uniform(0.0, 0.2, 3)
        want = paper * (1 - strokes) + ink * strokes
        got = data.render_sketch(glyph, 12, np.random.default_rng(seed), {})
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_sketch_strokes_do_not_depend_on_the_glyph_contrast_and_see_both_directions():
    for seed in range(3):
        full = data.render_sketch(_bar(), 12, np.random.default_rng(seed), {})
        faint = data.render_sketch(_bar(0.1), 12, np.random.default_rng(seed), {})
        np.testing.assert_allclose(faint, full, rtol=0, atol=1e-12)  # edges / their maximum
        assert full.min() >= 0.0 and full.max() <= 1.0
    stripe = np.zeros((8, 8))
    stripe[3:5, :] = 1.0  # a full-width horizontal stripe: its edges are all horizontal
    drawn = data.render_sketch(stripe, 12, np.random.default_rng(0), {})
    assert drawn.min() < 0.5
    blank = data.render_sketch(np.zeros((8, 8)), 12, np.random.default_rng(0), {})
    assert np.allclose(blank, blank[0, 0]) and blank.min() >= 0.9  # plain paper
    assert len(set(np.round(blank[0, 0], 12))) == 3  # tinted: one draw per channel


def test_negative_is_an_inverted_tinted_digit_with_noise_then_blur():
    glyph = _bar()
    for seed in (0, 5):
        rng = np.random.default_rng(seed)
        mask = _rolled(data.upscale(glyph, 12), rng)[..., None]
        img = 1.0 - mask * rng.uniform(0.5, 1.0, 3)
        img = img + rng.normal(0.0, 0.12, img.shape)
        want = ndimage.gaussian_filter(img, sigma=(0.7, 0.7, 0))
        got = data.render_negative(glyph, 12, np.random.default_rng(seed), {})
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def _flat(value, size=40):
    return {
        "photos": {n: np.full((size, size, 3), value, np.float32) for n in data.PHOTOS},
        "textures": {n: np.full((size, size), value, np.float32) for n in data.TEXTURES},
    }


def test_photo_digit_is_85_percent_opaque():
    full = np.ones((8, 8))
    for seed in range(3):
        white = data.render_photo(full, 8, np.random.default_rng(seed), _flat(1.0))
        black = data.render_photo(full, 8, np.random.default_rng(seed), _flat(0.0))
        assert np.allclose(white - black, 0.15, atol=1e-6)  # (1 - 0.85) of the photograph shows
        assert black.min() >= 0.0 and black.max() <= 0.85  # 0.85 x a colour in [0, 1]
        assert black[0, 0].min() < 0.85  # the colour is drawn, not white


def test_texture_tint_and_digit_colour_ranges():
    tints, colours = [], []
    for seed in range(10):
        blank = data.render_texture(np.zeros((8, 8)), 8, np.random.default_rng(seed), _flat(1.0))
        assert np.allclose(blank, blank[:1, :1], atol=1e-6)  # a white texture times one tint
        tints.append(blank[0, 0])
        full = data.render_texture(np.ones((8, 8)), 8, np.random.default_rng(seed), _flat(0.5))
        assert np.allclose(full, full[:1, :1], atol=1e-6)  # an opaque digit hides the texture
        colours.append(full[0, 0])
    tints, colours = np.array(tints), np.array(colours)
    assert tints.min() >= 0.4 - 1e-6 and tints.max() <= 1.0 + 1e-6
    assert np.ptp(tints, axis=1).min() > 0  # each channel its own tint
    assert colours.min() >= 0.0 and colours.max() <= 1.0 and colours.min() < 0.5
