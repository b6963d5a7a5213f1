"""Ingest and rendering: scikit-learn's shipped 8x8 digits pasted into larger canvases (spec, "Small-scale
reproduction plan"), each canvas with a class label and a box, from disjoint digit pools per actor."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F

from paper_pipelines.common.runtime import substream
from paper_pipelines.common.tables import load_sklearn_table

# The society's actors, each with its own disjoint pool of digits.
POOLS = ("expert_c", "expert_d", "social", "downstream")


def digits_table() -> pd.DataFrame:
    """load_digits as a table: 64 pixel columns in [0, 16] and the label."""
    x, y = load_sklearn_table("digits")
    table = pd.DataFrame(x, columns=[f"p{i}" for i in range(64)])
    table["label"] = y.astype(int)
    return table


def digit_labels() -> np.ndarray:
    """The 1797 labels of load_digits (for the pool checks made before any node runs)."""
    return load_sklearn_table("digits")[1].astype(int)


def replicate_pools(
    labels: np.ndarray, sizes: Mapping[str, int | None], seed: int
) -> dict[str, np.ndarray]:
    """Disjoint digit indices per actor: a seeded permutation cut in pool order; downstream=None is the rest."""
    order = substream(seed, "pools").permutation(len(labels))
    pools, start = {}, 0
    for name in POOLS:
        size = sizes.get(name)
        stop = len(labels) if size is None else start + int(size)
        if stop > len(labels):
            raise ValueError(
                f"disc.data.pools ask for {stop} digits, load_digits has {len(labels)}"
            )
        pools[name] = order[start:stop]
        start = stop
    return pools


def labelled_counts(labels: np.ndarray, renders: int, frac: float) -> dict[int, int]:
    """Labelled canvases per class: floor(frac * canvases of the class), as labelled_split draws them."""
    classes, counts = np.unique(labels, return_counts=True)
    per_class = {
        int(c): int(np.floor(frac * n * renders)) for c, n in zip(classes, counts, strict=True)
    }
    return {c: per_class.get(c, 0) for c in range(10)}


def labelled_split(labels: np.ndarray, frac: float, rng: np.random.Generator) -> np.ndarray:
    """Boolean mask of the labelled canvases: floor(frac * n_c) drawn per class c (stratified)."""
    mask = np.zeros(len(labels), dtype=bool)
    for c in np.unique(labels):
        members = np.flatnonzero(labels == c)
        take = int(np.floor(frac * len(members)))
        if take == 0:
            raise ValueError(
                f"disc.probe.label_frac = {frac} leaves class {int(c)} without a labelled canvas"
            )
        mask[rng.choice(members, size=take, replace=False)] = True
    return mask


def scaled_digits(pixels: np.ndarray, scales: list[int]) -> dict[int, np.ndarray]:
    """Every digit bilinearly resized to s x s for each scale s, intensities in [0, 1]."""
    x = torch.as_tensor(pixels.reshape(-1, 1, 8, 8) / 16.0, dtype=torch.float32)
    return {
        s: F.interpolate(x, size=(s, s), mode="bilinear", align_corners=False)[:, 0].numpy()
        for s in scales
    }


def stroke_pixels(
    canvas: int, length: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of one straight clutter stroke (horizontal, vertical or diagonal)."""
    dy, dx = [(0, 1), (1, 0), (1, 1), (1, -1)][int(rng.integers(4))]
    y0 = int(rng.integers(0, canvas - dy * (length - 1)))
    x_lo = max(0, -dx * (length - 1))
    x0 = int(rng.integers(x_lo, canvas - max(0, dx) * (length - 1)))
    steps = np.arange(length)
    return y0 + dy * steps, x0 + dx * steps


def render_canvas(
    digit_by_scale: dict[int, np.ndarray],
    index: int,
    canvas: int,
    clutter: int,
    stroke_length: int,
    stroke_intensity: float,
    noise: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """One canvas: the digit at a random scale and position, clutter strokes, Gaussian noise.

    Returns the image (canvas, canvas) and its box (cx, cy, w, h) as fractions of the canvas.
    """
    scales = sorted(digit_by_scale)
    s = scales[int(rng.integers(len(scales)))]
    y0, x0 = (int(v) for v in rng.integers(0, canvas - s + 1, size=2))
    image = np.zeros((canvas, canvas), dtype=np.float32)
    image[y0 : y0 + s, x0 : x0 + s] = digit_by_scale[s][index]
    for _ in range(clutter):
        rows, cols = stroke_pixels(canvas, stroke_length, rng)
        image[rows, cols] = np.maximum(image[rows, cols], stroke_intensity)
    image += noise * rng.standard_normal(image.shape).astype(np.float32)
    box = np.array([x0 + s / 2, y0 + s / 2, s, s], dtype=np.float32) / canvas
    return image, box


def render_pool(
    digit_by_scale: dict[int, np.ndarray],
    labels: np.ndarray,
    indices: np.ndarray,
    renders: int,
    canvas: int,
    clutter: int,
    stroke_length: int,
    stroke_intensity: float,
    noise: float,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """Every digit of a pool rendered `renders` times: images (N, 1, H, W), labels (N,), boxes (N, 4)."""
    images, boxes, ys = [], [], []
    for _ in range(renders):
        for index in indices:
            image, box = render_canvas(
                digit_by_scale,
                int(index),
                canvas,
                clutter,
                stroke_length,
                stroke_intensity,
                noise,
                rng,
            )
            images.append(image)
            boxes.append(box)
            ys.append(labels[index])
    return {
        "images": np.stack(images)[:, None].astype(np.float32),
        "labels": np.asarray(ys, dtype=np.int64),
        "boxes": np.stack(boxes).astype(np.float32),
    }


def render_society(table: pd.DataFrame, data: Any, label_frac: float, seed: int) -> dict[str, Any]:
    """One replicate's four rendered pools (and the downstream labelled mask), from `seed`."""
    pixels = table.drop(columns="label").to_numpy(float)
    labels = table["label"].to_numpy(int)
    by_scale = scaled_digits(pixels, list(data.scales))
    pools = replicate_pools(labels, data.pools.model_dump(), seed)
    clean = {"clutter": 0, "noise": data.clean_noise}
    cluttered = {"clutter": data.clutter_strokes, "noise": data.noise}
    settings = {
        "expert_c": (cluttered if data.expert_c_clutter else clean, data.renders.expert),
        "expert_d": (cluttered, data.renders.expert),
        "social": (cluttered, data.renders.social),
        "downstream": (cluttered, data.renders.downstream),
    }
    society: dict[str, Any] = {"seed": seed, "digits": {k: v.tolist() for k, v in pools.items()}}
    for name, (style, renders) in settings.items():
        society[name] = render_pool(
            by_scale,
            labels,
            pools[name],
            renders,
            data.canvas,
            style["clutter"],
            data.stroke_length,
            data.stroke_intensity,
            style["noise"],
            substream(seed, "render", name),
        )
    down = society["downstream"]["labels"]
    society["downstream"]["labelled"] = labelled_split(
        down, label_frac, substream(seed, "labelled")
    )
    return society
