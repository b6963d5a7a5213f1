"""Ingest: the real images (sklearn digits, or a folder at paper scale), their split and the OOD shift.

Images are float32 arrays of shape (N, C, H, W) in [-1, 1]; labels are int64 class indices.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage
from sklearn.model_selection import train_test_split


def digits_images(image_size: int = 8) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """sklearn's shipped digits (1797 images, 17 grey levels) scaled to [-1, 1], optionally upsampled."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = (digits.images.astype(np.float32) / 8.0 - 1.0)[:, None]
    if image_size != 8:
        x = resize_images(x, image_size)
    return x, digits.target.astype(np.int64), [str(c) for c in range(10)]


def resize_images(x: np.ndarray, size: int) -> np.ndarray:
    """Bilinear resize of (N, C, h, w) images to (N, C, size, size)."""
    import torch
    import torch.nn.functional as F

    out = F.interpolate(
        torch.from_numpy(x), size=(size, size), mode="bilinear", align_corners=False
    )
    return out.clamp(-1, 1).numpy().astype(np.float32)


def stratified_split(
    x: np.ndarray,
    y: np.ndarray,
    fractions: dict[str, float],
    rng: np.random.Generator,
) -> dict[str, dict[str, np.ndarray]]:
    """Class-stratified split into named parts with the given fractions (generator / val / test)."""
    names = [k for k, f in fractions.items() if f > 0]
    parts: dict[str, dict[str, np.ndarray]] = {}
    rest_x, rest_y, rest_frac = x, y, 1.0
    for name in names[:-1]:
        size = fractions[name] / rest_frac
        seed = int(rng.integers(2**31))
        take_x, rest_x, take_y, rest_y = train_test_split(
            rest_x, rest_y, train_size=size, stratify=rest_y, random_state=seed
        )
        parts[name] = {"x": take_x, "y": take_y}
        rest_frac -= fractions[name]
    parts[names[-1]] = {"x": rest_x, "y": rest_y}
    for name in fractions:
        parts.setdefault(name, {"x": x[:0], "y": y[:0]})
    return parts


def shift_images(
    x: np.ndarray,
    rng: np.random.Generator,
    rotation_deg: float,
    noise_std: float,
    morphology: bool,
) -> np.ndarray:
    """OOD shift of real test images: random rotation in +-rotation_deg, stroke change, additive noise.

    Strokes are bright (high values): grey dilation thickens them (even images), erosion thins them (odd).
    """
    out = np.empty_like(x)
    angles = rng.uniform(-rotation_deg, rotation_deg, size=len(x))
    for i, image in enumerate(x):
        shifted = np.stack(
            [
                ndimage.rotate(c, angles[i], reshape=False, order=1, mode="constant", cval=-1.0)
                for c in image
            ]
        )
        if morphology:
            op = ndimage.grey_dilation if i % 2 == 0 else ndimage.grey_erosion
            shifted = np.stack([op(c, size=(2, 2)) for c in shifted])
        out[i] = shifted
    out = out + noise_std * rng.standard_normal(out.shape).astype(np.float32)
    return np.clip(out, -1.0, 1.0).astype(np.float32)
