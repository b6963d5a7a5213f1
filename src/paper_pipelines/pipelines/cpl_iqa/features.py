"""Classical natural-scene-statistics (NSS) features of a blind image: the feature-MLP's input and SVR's.

BRISQUE-style statistics (Mittal et al., 2012) summarised by moments instead of fitted generalised
Gaussians (cheaper, same information for a regressor): MSCN coefficients and their four paired
products at two scales, plus sharpness, contrast, colour and blockiness cues.
"""

from __future__ import annotations

import numpy as np
from scipy.ndimage import gaussian_filter, laplace

from .distortions import luminance


def mscn(y: np.ndarray, sigma: float = 7.0 / 6.0, c: float = 1.0 / 255.0) -> np.ndarray:
    """Mean-subtracted contrast-normalised coefficients (y - mu) / (sigma_local + C) (BRISQUE eq. 1)."""
    mu = gaussian_filter(y, sigma)
    var = gaussian_filter(y * y, sigma) - mu * mu
    return (y - mu) / (np.sqrt(np.clip(var, 0.0, None)) + c)


def paired_products(m: np.ndarray) -> dict[str, np.ndarray]:
    """Products of neighbouring MSCN coefficients: horizontal, vertical, both diagonals."""
    return {
        "h": m[:, :-1] * m[:, 1:],
        "v": m[:-1, :] * m[1:, :],
        "d1": m[:-1, :-1] * m[1:, 1:],
        "d2": m[:-1, 1:] * m[1:, :-1],
    }


def standard_moments(x: np.ndarray) -> tuple[float, float, float, float]:
    """Mean, variance, skewness and excess kurtosis (0, 0 for a constant input, which has neither)."""
    x = np.asarray(x, float).ravel()
    mean = x.mean()
    centred = x - mean
    var = float(np.mean(centred**2))
    if var <= 1e-12:
        return float(mean), var, 0.0, 0.0
    skewness = float(np.mean(centred**3) / var**1.5)
    excess = float(np.mean(centred**4) / var**2 - 3.0)
    return float(mean), var, skewness, excess


def _moments(x: np.ndarray) -> list[float]:
    mean, var, skewness, _ = standard_moments(x)
    return [mean, var, float(np.mean(np.abs(x))), skewness]


def scale_features(y: np.ndarray) -> list[float]:
    """MSCN variance / |.| / skew / kurtosis and four moments of each paired product at one scale."""
    m = mscn(y)
    _, var, skewness, excess = standard_moments(m)
    out = [var, float(np.mean(np.abs(m))), skewness, excess]
    for product in paired_products(m).values():
        out.extend(_moments(product))
    return out


def blockiness(y: np.ndarray, block: int = 8) -> float:
    """Mean absolute step across 8-pixel block borders over the mean step inside blocks (JPEG cue)."""
    dx = np.abs(np.diff(y, axis=1))
    cols = np.arange(dx.shape[1])
    border = dx[:, (cols % block) == block - 1].mean()
    inside = dx[:, (cols % block) != block - 1].mean()
    return float(border / (inside + 1e-6))


def colourfulness(image: np.ndarray) -> float:
    """Hasler and Suesstrunk (2003): sqrt(s_rg^2 + s_yb^2) + 0.3 sqrt(m_rg^2 + m_yb^2)."""
    r, g, b = image[..., 0], image[..., 1], image[..., 2]
    rg, yb = r - g, 0.5 * (r + g) - b
    return float(np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean()))


def nss_features(image_uint8: np.ndarray) -> np.ndarray:
    """The feature vector of one RGB uint8 image (two scales of MSCN statistics + global cues)."""
    image = np.asarray(image_uint8, float) / 255.0
    y = luminance(image)
    half = y[::2, ::2] if min(y.shape) < 4 else gaussian_filter(y, 0.5)[::2, ::2]
    gy, gx = np.gradient(y)
    local_sd = np.sqrt(np.clip(gaussian_filter(y * y, 2.0) - gaussian_filter(y, 2.0) ** 2, 0, None))
    saturation = image.max(axis=2) - image.min(axis=2)
    extra = [
        float(np.var(laplace(y))),
        float(np.mean(np.hypot(gx, gy))),
        float(local_sd.mean()),
        float(local_sd.std()),
        float(y.mean()),
        float(y.std()),
        colourfulness(image),
        float(saturation.mean()),
        blockiness(y),
        float(np.mean(np.abs(y - gaussian_filter(y, 1.0)))),
    ]
    return np.asarray(scale_features(y) + scale_features(half) + extra)


def feature_matrix(images: np.ndarray) -> np.ndarray:
    """NSS features of every image, (n, d)."""
    return np.stack([nss_features(im) for im in images])


def standardise(x: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """(x - mean) / sd with the statistics of ``reference`` rows (constant columns left centred)."""
    mean = reference.mean(axis=0)
    sd = reference.std(axis=0)
    return (x - mean) / np.where(sd > 0, sd, 1.0)
