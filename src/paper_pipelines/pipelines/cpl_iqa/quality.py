"""The hidden quality target of SynAuth-IQA: full-reference fidelity -> latent quality -> simulated MOS.

Full-reference scores against the pristine crop (GMSD, Xue et al. 2014; SSIM, Wang et al. 2004) track
human MOS on synthetic IQA databases; their z-scored mean is the latent quality, mapped to [1, 100],
and a subjective study is simulated: MOS = mean of R noisy ratings. The blind model never sees the
reference or these scores.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import convolve, uniform_filter
from skimage.metrics import structural_similarity

from .distortions import luminance

# GMSD's Prewitt filters (divided by 3) and its constant for images on [0, 255].
PREWITT_X = np.array([[1.0, 0.0, -1.0], [1.0, 0.0, -1.0], [1.0, 0.0, -1.0]]) / 3.0
GMSD_C = 170.0


def gmsd(reference: np.ndarray, distorted: np.ndarray) -> float:
    """GMSD = std of GMS = (2 m_r m_d + c) / (m_r^2 + m_d^2 + c) on 2x-downsampled luma (0 = identical)."""
    maps = []
    for image in (reference, distorted):
        y = luminance(image) * 255.0
        # the GMSD paper's 2x2 average then every second pixel
        y = uniform_filter(y, size=2, mode="nearest", origin=(-1, -1))[::2, ::2]
        # zero padding, as the official MATLAB code's conv2(..., 'same') and piq's GMSD (equal to 1e-15)
        gx = convolve(y, PREWITT_X, mode="constant")
        gy = convolve(y, PREWITT_X.T, mode="constant")
        maps.append(np.sqrt(gx**2 + gy**2))
    m_r, m_d = maps
    gms = (2.0 * m_r * m_d + GMSD_C) / (m_r**2 + m_d**2 + GMSD_C)
    return float(np.std(gms))


def ssim(reference: np.ndarray, distorted: np.ndarray) -> float:
    """SSIM on luma with an 11x11 Gaussian window, sigma 1.5 (Wang et al. 2004), via scikit-image."""
    return float(
        structural_similarity(
            luminance(reference),
            luminance(distorted),
            data_range=1.0,
            gaussian_weights=True,
            sigma=1.5,
            use_sample_covariance=False,
        )
    )


FR_METRICS = {"gmsd": (gmsd, -1.0), "ssim": (ssim, +1.0)}  # sign: +1 when higher is better


def latent_quality(scores: dict[str, np.ndarray]) -> np.ndarray:
    """Mean of the z-scored full-reference scores, each signed so that higher = better."""
    columns = []
    for name, values in scores.items():
        values = np.asarray(values, float)
        sd = values.std()
        z = (values - values.mean()) / (sd if sd > 0 else 1.0)
        columns.append(FR_METRICS[name][1] * z)
    return np.mean(columns, axis=0)


def to_quality_scale(latent: np.ndarray, low: float = 1.0, high: float = 100.0) -> np.ndarray:
    """Linear map of the latent quality onto [low, high] (min -> low, max -> high)."""
    latent = np.asarray(latent, float)
    span = latent.max() - latent.min()
    if span <= 0:
        return np.full_like(latent, (low + high) / 2.0)
    return low + (high - low) * (latent - latent.min()) / span


def simulate_study(
    quality: np.ndarray, raters: int, rater_sd: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """MOS and its standard deviation from R ratings quality + N(0, sd^2), each clipped to [1, 100]."""
    ratings = quality[:, None] + rater_sd * rng.standard_normal((quality.size, raters))
    ratings = np.clip(ratings, 1.0, 100.0)
    return ratings.mean(axis=1), ratings.std(axis=1)


def check_mos(mos: np.ndarray, where: str) -> None:
    """A usable MOS column: finite everywhere and not constant (else no ranking can be learnt)."""
    mos = np.asarray(mos, float)
    if mos.size == 0 or not np.all(np.isfinite(mos)):
        bad = int(np.sum(~np.isfinite(mos)))
        raise ValueError(f"{where}: MOS has {bad} NaN/inf value(s) of {mos.size}; fix the labels")
    if np.ptp(mos) == 0:
        raise ValueError(f"{where}: MOS is constant ({mos[0]}); quality cannot be learnt from it")
