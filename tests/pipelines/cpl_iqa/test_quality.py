"""The hidden quality target: FR scores, latent quality, the simulated study, and MOS checks."""

import numpy as np
import pytest

from paper_pipelines.pipelines.cpl_iqa import distortions, quality


def image(seed=0, size=32):
    rng = np.random.default_rng(seed)
    base = np.linspace(0, 1, size)[None, :, None] * np.ones((size, size, 3))
    return np.clip(base + 0.2 * rng.random((size, size, 3)), 0, 1)


def test_identical_images_have_gmsd_zero_and_ssim_one():
    x = image()
    assert quality.gmsd(x, x) == pytest.approx(0.0, abs=1e-12)
    assert quality.ssim(x, x) == pytest.approx(1.0)


def test_fr_scores_worsen_with_the_noise_level():
    x = image()
    rng = np.random.default_rng(1)
    mild, strong = distortions.noise(x, 0.1, rng), distortions.noise(x, 1.0, rng)
    assert 0 < quality.gmsd(x, mild) < quality.gmsd(x, strong)
    assert quality.ssim(x, strong) < quality.ssim(x, mild) < 1.0


def _prewitt_magnitude(y: np.ndarray) -> np.ndarray:
    """|grad y| with the Prewitt pair /3 and zeros outside the image (MATLAB conv2 'same', as the
    official GMSD code and piq), written out without scipy."""
    p = np.pad(y, 1)
    h, w = y.shape
    gx = sum(p[r : r + h, 2 : w + 2] - p[r : r + h, 0:w] for r in range(3)) / 3
    gy = sum(p[2 : h + 2, c : c + w] - p[0:h, c : c + w] for c in range(3)) / 3
    return np.hypot(gx, gy)


def test_gmsd_matches_its_definition_on_a_hand_built_case():
    # a flat reference, a step in the distorted image
    ref = np.full((8, 8, 3), 0.5)
    dis = ref.copy()
    dis[:, 4:] = 1.0
    y = distortions.luminance(dis) * 255
    y = y.reshape(4, 2, 4, 2).mean(axis=(1, 3))
    y_ref = np.full((4, 4), 0.5 * 255)  # flat inside, but the zero border gives it edges
    m_r, m_d = _prewitt_magnitude(y_ref), _prewitt_magnitude(y)
    gms = (2 * m_r * m_d + quality.GMSD_C) / (m_r**2 + m_d**2 + quality.GMSD_C)
    assert quality.gmsd(ref, dis) == pytest.approx(float(np.std(gms)), rel=1e-12)


def test_latent_quality_signs_each_score_so_higher_is_better():
    scores = {"gmsd": np.array([0.0, 0.1, 0.2]), "ssim": np.array([1.0, 0.8, 0.6])}
    latent = quality.latent_quality(scores)
    z = np.array([-1.0, 0.0, 1.0]) * np.sqrt(1.5)
    assert np.allclose(latent, -z)
    only = quality.latent_quality({"ssim": np.array([0.5, 0.5])})
    assert np.array_equal(only, [0.0, 0.0])


def test_to_quality_scale_maps_min_and_max_to_the_ends():
    assert np.allclose(quality.to_quality_scale(np.array([-2.0, 0.0, 2.0])), [1.0, 50.5, 100.0])
    assert np.allclose(quality.to_quality_scale(np.array([3.0, 3.0])), [50.5, 50.5])
    assert np.allclose(quality.to_quality_scale(np.array([0.0, 1.0]), 0.0, 10.0), [0.0, 10.0])


def test_simulated_study_averages_noisy_ratings_clipped_to_the_scale():
    q = np.array([1.0, 50.0, 100.0])
    mos, sd = quality.simulate_study(q, 5, 0.0, np.random.default_rng(0))
    assert np.array_equal(mos, q) and np.array_equal(sd, np.zeros(3))
    mos, sd = quality.simulate_study(np.full(2000, 50.0), 15, 8.0, np.random.default_rng(0))
    assert abs(mos.mean() - 50.0) < 0.2
    assert mos.std() == pytest.approx(8.0 / np.sqrt(15), rel=0.1)
    assert sd.mean() == pytest.approx(8.0, rel=0.1)
    low, _ = quality.simulate_study(np.array([1.0]), 200, 8.0, np.random.default_rng(0))
    assert 1.0 <= low[0] < 5.0  # ratings below 1 are clipped, so the MOS sits above the latent


def test_check_mos_rejects_nan_and_constant_mos():
    quality.check_mos(np.array([1.0, 2.0]), "x")
    with pytest.raises(ValueError, match="x: MOS has 1 NaN/inf"):
        quality.check_mos(np.array([1.0, np.nan]), "x")
    with pytest.raises(ValueError, match="MOS is constant"):
        quality.check_mos(np.array([3.0, 3.0]), "y")
    with pytest.raises(ValueError, match="MOS has 0 NaN"):
        quality.check_mos(np.array([]), "z")


def test_gmsd_downsamples_both_axes_by_two():
    rng = np.random.default_rng(4)
    ref, dis = rng.random((12, 12, 3)), rng.random((12, 12, 3))
    maps = []
    for im in (ref, dis):
        y = (distortions.luminance(im) * 255).reshape(6, 2, 6, 2).mean(axis=(1, 3))
        maps.append(_prewitt_magnitude(y))
    gms = (2 * maps[0] * maps[1] + 170) / (maps[0] ** 2 + maps[1] ** 2 + 170)
    assert quality.gmsd(ref, dis) == pytest.approx(float(np.std(gms)))


def test_a_single_mos_is_constant():
    with pytest.raises(ValueError, match=r"MOS is constant \(3\.0\)"):
        quality.check_mos(np.array([3.0]), "w")


def test_simulated_ratings_are_quality_plus_noise():
    q = np.array([40.0, 60.0])
    mos, _ = quality.simulate_study(q, 3, 2.0, np.random.default_rng(9))
    noise = np.random.default_rng(9).standard_normal((2, 3))
    assert np.allclose(mos, np.clip(q[:, None] + 2.0 * noise, 1, 100).mean(axis=1))


def test_ratings_are_clipped_at_both_ends_of_the_scale():
    q = np.array([2.0, 99.0])
    mos, sd = quality.simulate_study(q, 50, 5.0, np.random.default_rng(4))
    noise = np.random.default_rng(4).standard_normal((2, 50))
    ratings = np.clip(q[:, None] + 5.0 * noise, 1.0, 100.0)
    assert np.allclose(mos, ratings.mean(axis=1)) and np.allclose(sd, ratings.std(axis=1))
    assert ratings.min() == 1.0 and ratings.max() == 100.0  # both ends are reached here


def test_ssim_matches_a_direct_gaussian_window_computation():
    from scipy.ndimage import gaussian_filter

    rng = np.random.default_rng(0)
    ref = rng.random((24, 24, 3))
    dis = np.clip(ref + 0.2 * rng.standard_normal(ref.shape), 0, 1)
    x, y = distortions.luminance(ref), distortions.luminance(dis)
    window = lambda z: gaussian_filter(z, 1.5, truncate=3.5)  # noqa: E731  (11 x 11, sigma 1.5)
    ux, uy = window(x), window(y)
    vx, vy, vxy = window(x * x) - ux**2, window(y * y) - uy**2, window(x * y) - ux * uy
    c1, c2 = 0.01**2, 0.03**2  # (K L)^2 with K = 0.01, 0.03 and L = 1
    s = (2 * ux * uy + c1) * (2 * vxy + c2) / ((ux**2 + uy**2 + c1) * (vx + vy + c2))
    assert quality.ssim(ref, dis) == pytest.approx(float(s[5:-5, 5:-5].mean()), rel=1e-9)


def test_a_missing_mos_in_an_object_column_counts_as_nan():
    with pytest.raises(ValueError, match="x: MOS has 1 NaN/inf value"):
        quality.check_mos(np.array([1.0, None, 2.0], dtype=object), "x")


def test_a_constant_integer_latent_maps_to_the_middle_of_the_scale_for_every_image():
    out = quality.to_quality_scale(np.array([3, 3, 3]))
    assert out.shape == (3,) and np.array_equal(out, [50.5, 50.5, 50.5])
