"""Synthetic-mixture distortions of SynAuth-IQA (our substitute for authentic distortions).

Each function takes an RGB image as floats in [0, 1] (H, W, 3) and a level in [0, 1] (0 = mild,
1 = strong) and returns the distorted image in [0, 1]. An image gets 1-3 of them at random levels, in
random order, to mimic the mixture character of authentic distortions; they remain synthetic.
"""

from __future__ import annotations

import io

import numpy as np
from PIL import Image
from scipy.ndimage import gaussian_filter

LUMA = np.array([0.299, 0.587, 0.114])


def luminance(image: np.ndarray) -> np.ndarray:
    """ITU-R BT.601 luma Y = 0.299 R + 0.587 G + 0.114 B."""
    return np.asarray(image, float) @ LUMA


def blur(image: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    """Gaussian blur, sigma from 0.4 to 2.4 pixels."""
    sigma = 0.4 + 2.0 * level
    return np.clip(gaussian_filter(image, sigma=(sigma, sigma, 0)), 0.0, 1.0)


def noise(image: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    """Additive white Gaussian noise, sd from 0.01 to 0.16."""
    sd = 0.01 + 0.15 * level
    return np.clip(image + sd * rng.standard_normal(image.shape), 0.0, 1.0)


def jpeg(image: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    """JPEG compression through Pillow, quality from 60 down to 5."""
    quality = int(round(60 - 55 * level))
    buffer = io.BytesIO()
    Image.fromarray(to_uint8(image)).save(buffer, format="JPEG", quality=quality)
    buffer.seek(0)
    return np.asarray(Image.open(buffer).convert("RGB"), float) / 255.0


def contrast(image: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    """Contrast reduction towards the mean, factor from 0.85 down to 0.3."""
    factor = 0.85 - 0.55 * level
    mean = image.mean()
    return np.clip(mean + factor * (image - mean), 0.0, 1.0)


def brightness(image: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    """Brightness shift up or down (random sign) by 0.05 to 0.35."""
    shift = (0.05 + 0.3 * level) * (1.0 if rng.random() < 0.5 else -1.0)
    return np.clip(image + shift, 0.0, 1.0)


def saturation(image: np.ndarray, level: float, rng: np.random.Generator) -> np.ndarray:
    """Desaturation towards the luma, keeping from 80 % down to 0 % of the chroma."""
    keep = 0.8 * (1.0 - level)
    grey = luminance(image)[..., None]
    return np.clip(grey + keep * (image - grey), 0.0, 1.0)


DISTORTIONS = {
    "blur": blur,
    "noise": noise,
    "jpeg": jpeg,
    "contrast": contrast,
    "brightness": brightness,
    "saturation": saturation,
}


def to_uint8(image: np.ndarray) -> np.ndarray:
    return np.clip(np.rint(np.asarray(image) * 255.0), 0, 255).astype(np.uint8)


def apply_mixture(
    image: np.ndarray, names: list[str], levels: list[float], rng: np.random.Generator
) -> np.ndarray:
    """Apply the named distortions in the given order at the given levels."""
    out = np.asarray(image, float)
    for name, level in zip(names, levels, strict=True):
        if name not in DISTORTIONS:
            raise ValueError(f"unknown distortion {name!r}: use one of {sorted(DISTORTIONS)}")
        out = DISTORTIONS[name](out, float(level), rng)
    return out
