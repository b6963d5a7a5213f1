"""Digits-C: a CIFAR-10-C analogue on scikit-learn's shipped 8x8 handwritten digits (loaded in data.py).

The digits are upsampled to 16x16 grey images in [0, 1]; twelve of the fifteen CIFAR-10-C corruptions
(Hendrycks & Dietterich, 2019) are re-implemented at five severities, with their strengths scaled to the
16x16 resolution. Snow, frost and zoom blur are dropped (they need textures or are meaningless at 16x16).
Every corrupted set is a deterministic function of (corruption, severity, seed) and is stored as uint8,
like the PNG-backed CIFAR-10-C release.
"""

from __future__ import annotations

import io
from collections.abc import Callable

import numpy as np
from PIL import Image
from scipy import ndimage

from paper_pipelines.common.progress import progress

# Canonical order: the index of a corruption in this tuple seeds its random generator, so adding or
# reordering corruptions in the parameters never changes the images of the others.
CORRUPTIONS: tuple[str, ...] = (
    "gaussian_noise",
    "shot_noise",
    "impulse_noise",
    "defocus_blur",
    "glass_blur",
    "motion_blur",
    "fog",
    "brightness",
    "contrast",
    "elastic_transform",
    "pixelate",
    "jpeg_compression",
)
SEVERITIES: tuple[int, ...] = (1, 2, 3, 4, 5)


def _disk_kernel(radius: float) -> np.ndarray:
    """Anti-aliased disk (area fraction by 8x8 supersampling), the defocus point-spread function."""
    half = int(np.ceil(radius))
    sub = (np.arange(8) + 0.5) / 8.0 - 0.5
    coords = np.arange(-half, half + 1)
    kernel = np.zeros((len(coords), len(coords)), dtype=np.float64)
    for i, y in enumerate(coords):
        for j, x in enumerate(coords):
            yy, xx = np.meshgrid(y + sub, x + sub, indexing="ij")
            kernel[i, j] = np.mean(yy**2 + xx**2 <= radius**2)
    return kernel / kernel.sum()


def _smooth_noise(rng: np.random.Generator, n: int, size: int, decay: float) -> np.ndarray:
    """Low-frequency noise (sum of upsampled random grids, octave weights decaying): a plasma-fractal stand-in."""
    out = np.zeros((n, size, size), dtype=np.float64)
    weight, grid = 1.0, 2
    while grid <= size // 2:
        coarse = rng.uniform(-1.0, 1.0, size=(n, grid, grid))
        out += weight * ndimage.zoom(coarse, (1, size / grid, size / grid), order=1, mode="nearest")
        weight /= decay
        grid *= 2
    out -= out.min(axis=(1, 2), keepdims=True)
    return out / np.maximum(out.max(axis=(1, 2), keepdims=True), 1e-8)


def gaussian_noise(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Additive N(0, c^2) noise."""
    c = (0.08, 0.12, 0.18, 0.26, 0.38)[severity - 1]
    return x + rng.normal(0.0, c, size=x.shape)


def shot_noise(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Poisson photon noise: Poisson(x * c) / c."""
    c = (60.0, 25.0, 12.0, 5.0, 3.0)[severity - 1]
    return rng.poisson(np.clip(x, 0, 1) * c) / c


def impulse_noise(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Salt-and-pepper noise on a fraction c of the pixels."""
    c = (0.03, 0.06, 0.09, 0.17, 0.27)[severity - 1]
    out = x.copy()
    hit = rng.random(x.shape) < c
    out[hit] = (rng.random(int(hit.sum())) < 0.5).astype(out.dtype)
    return out


def defocus_blur(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Convolution with an anti-aliased disk of radius c pixels."""
    c = (0.6, 0.8, 1.0, 1.3, 1.6)[severity - 1]
    kernel = _disk_kernel(c)[None]
    return ndimage.convolve(x, kernel, mode="nearest")


def glass_blur(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Gaussian blur, then local pixel swaps within +-delta for some iterations, then blur again."""
    sigma, delta, iterations = (
        (0.3, 1, 1),
        (0.4, 1, 1),
        (0.5, 1, 2),
        (0.6, 2, 1),
        (0.7, 2, 2),
    )[severity - 1]
    out = ndimage.gaussian_filter(x, sigma=(0, sigma, sigma), mode="nearest")
    n, h, w = out.shape
    rows = np.arange(n)
    for _ in range(iterations):
        # The same scan order as ImageNet-C (bottom-up), vectorised over images.
        for i in range(h - delta, delta - 1, -1):
            for j in range(w - delta, delta - 1, -1):
                dy, dx = rng.integers(-delta, delta, size=(2, n))
                i2 = np.clip(i + dy, 0, h - 1)
                j2 = np.clip(j + dx, 0, w - 1)
                a = out[rows, i, j].copy()
                out[rows, i, j] = out[rows, i2, j2]
                out[rows, i2, j2] = a
    return ndimage.gaussian_filter(out, sigma=(0, sigma, sigma), mode="nearest")


def motion_blur(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Average of the image shifted along a random direction over a length of c pixels."""
    length = (1.5, 2.0, 3.0, 4.0, 5.0)[severity - 1]
    out = np.empty_like(x)
    steps = np.linspace(0.0, length, int(np.ceil(length)) * 2 + 1)
    angles = rng.uniform(-np.pi, np.pi, size=len(x))
    for k, (img, angle) in enumerate(zip(x, angles, strict=True)):
        acc = np.zeros_like(img)
        for s in steps:
            acc += ndimage.shift(
                img, (s * np.sin(angle), s * np.cos(angle)), order=1, mode="nearest"
            )
        out[k] = acc / len(steps)
    return out


def fog(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Additive low-frequency haze, then the ImageNet-C contrast renormalisation x * max / (max + c)."""
    c, decay = ((0.2, 3.0), (0.4, 3.0), (0.6, 2.5), (0.8, 2.0), (1.0, 1.75))[severity - 1]
    peak = x.max(axis=(1, 2), keepdims=True)
    out = x + c * _smooth_noise(rng, len(x), x.shape[1], decay)
    return out * peak / (peak + c)


def brightness(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Add c to the value channel (the image is grey, so to every pixel)."""
    c = (0.1, 0.2, 0.3, 0.4, 0.5)[severity - 1]
    return x + c


def contrast(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Scale the deviation from each image's mean by c (CIFAR-10-C's factors)."""
    c = (0.75, 0.5, 0.4, 0.3, 0.15)[severity - 1]
    mean = x.mean(axis=(1, 2), keepdims=True)
    return (x - mean) * c + mean


def elastic_transform(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Smooth random displacement field (Gaussian-filtered noise) of amplitude alpha pixels."""
    alpha, sigma = ((0.6, 2.0), (0.9, 2.0), (1.2, 1.5), (1.5, 1.5), (1.9, 1.2))[severity - 1]
    n, h, w = x.shape
    out = np.empty_like(x)
    grid_y, grid_x = np.meshgrid(np.arange(h), np.arange(w), indexing="ij")
    for k in range(n):
        field = ndimage.gaussian_filter(rng.uniform(-1, 1, size=(2, h, w)), sigma=(0, sigma, sigma))
        field *= alpha / np.maximum(field.std(), 1e-8)
        coords = np.stack([grid_y + field[0], grid_x + field[1]])
        out[k] = ndimage.map_coordinates(x[k], coords, order=1, mode="reflect")
    return out


def pixelate(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Box-downsample to c * size, then nearest-neighbour upsample back."""
    c = (0.85, 0.75, 0.6, 0.5, 0.4)[severity - 1]
    size = x.shape[1]
    small = max(2, int(size * c))
    out = np.empty_like(x)
    for k, img in enumerate(x):
        pil = Image.fromarray(np.clip(img, 0, 1).astype(np.float32), mode="F")
        pil = pil.resize((small, small), Image.Resampling.BOX)
        out[k] = np.asarray(pil.resize((size, size), Image.Resampling.NEAREST))
    return out


def jpeg_compression(x: np.ndarray, severity: int, rng: np.random.Generator) -> np.ndarray:
    """Round trip through JPEG at quality c (ImageNet-C's qualities)."""
    quality = (25, 18, 15, 10, 7)[severity - 1]
    out = np.empty_like(x)
    for k, img in enumerate(x):
        buf = io.BytesIO()
        Image.fromarray(to_uint8(img), mode="L").save(buf, format="JPEG", quality=quality)
        out[k] = np.asarray(Image.open(io.BytesIO(buf.getvalue())), dtype=np.float32) / 255.0
    return out


CORRUPTION_FUNCTIONS: dict[str, Callable[[np.ndarray, int, np.random.Generator], np.ndarray]] = {
    "gaussian_noise": gaussian_noise,
    "shot_noise": shot_noise,
    "impulse_noise": impulse_noise,
    "defocus_blur": defocus_blur,
    "glass_blur": glass_blur,
    "motion_blur": motion_blur,
    "fog": fog,
    "brightness": brightness,
    "contrast": contrast,
    "elastic_transform": elastic_transform,
    "pixelate": pixelate,
    "jpeg_compression": jpeg_compression,
}


def to_uint8(images: np.ndarray) -> np.ndarray:
    """[0, 1] floats to uint8 pixels (the storage format of CIFAR-10-C)."""
    return np.round(np.clip(images, 0.0, 1.0) * 255.0).astype(np.uint8)


def corrupt(images: np.ndarray, name: str, severity: int, seed: int) -> np.ndarray:
    """One Digits-C domain: ``images`` (N, H, W) in [0, 1] -> uint8 (N, H, W), deterministic in (name, severity, seed)."""
    if name not in CORRUPTION_FUNCTIONS:
        raise ValueError(f"unknown corruption {name!r}; Digits-C has: {', '.join(CORRUPTIONS)}")
    if severity not in SEVERITIES:
        raise ValueError(f"severity must be one of {list(SEVERITIES)}, got {severity!r}")
    if images.ndim != 3:
        raise ValueError(f"images must have shape (N, H, W), got {images.shape}")
    rng = np.random.default_rng([seed, CORRUPTIONS.index(name), severity])
    out = CORRUPTION_FUNCTIONS[name](images.astype(np.float64), severity, rng)
    return to_uint8(out)


def make_domains(
    clean: np.ndarray, corruptions: list[str], severities: list[int], seed: int
) -> dict[str, np.ndarray]:
    """Every Digits-C domain of ``clean`` images (N, H, W) in [0, 1]: {``name@severity``: uint8 images}."""
    return {
        domain_key(name, severity): corrupt(clean, name, severity, seed)
        for name in progress(corruptions, desc="tca: Digits-C corruptions")
        for severity in severities
    }


def domain_key(name: str, severity: int) -> str:
    """Key of one target domain, e.g. ``gaussian_noise@3``."""
    return f"{name}@{severity}"


def parse_domain_key(key: str) -> tuple[str, int]:
    """Inverse of :func:`domain_key`."""
    name, severity = key.rsplit("@", 1)
    return name, int(severity)
