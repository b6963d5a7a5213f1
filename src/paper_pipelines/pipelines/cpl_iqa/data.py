"""Ingest and the SynAuth-IQA generator: shipped reference images, random crops, mixed distortions.

No authentic IQA images ship offline, so the images are crops of the 20 sample images in
scikit-image (``skimage.data``, the ones packaged in the wheel) and the two in scikit-learn
(``load_sample_images``), at random down-scales, each with 1-3 synthetic distortions. At paper scale
the images and their MOS come from a folder and a label CSV (KonIQ-10k / SPAQ / LIVE-C; catalog
entries ``cpl_iqa.real_images`` and ``cpl_iqa.real_labels`` in conf/paper/catalog/cpl_iqa.yml).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from PIL import Image

from .distortions import apply_mixture, to_uint8

# The skimage.data images packaged in the scikit-image wheel (the pooch-fetched ones need a network).
SKIMAGE_NAMES = (
    "astronaut", "camera", "chelsea", "coffee", "rocket", "hubble_deep_field",
    "immunohistochemistry", "retina", "moon", "coins", "brick", "grass", "gravel", "clock",
    "colorwheel", "stereo_motorcycle", "page", "text", "cell", "microaneurysms",
)  # fmt: skip

IMAGE_COLUMNS = ("image", "image_name", "filename", "file", "name")
MOS_COLUMNS = ("mos", "score", "mos_zscore")


def as_rgb(image: np.ndarray) -> np.ndarray:
    """uint8 (H, W, 3): grey images repeated over three channels, alpha dropped."""
    image = np.asarray(image)
    if image.ndim == 2:
        image = np.repeat(image[..., None], 3, axis=2)
    return np.ascontiguousarray(image[..., :3]).astype(np.uint8)


def load_shipped_images() -> dict[str, np.ndarray]:
    """The 22 reference scenes that ship inside scikit-image and scikit-learn, as RGB uint8."""
    import skimage.data
    from sklearn.datasets import load_sample_images

    images = {}
    for name in SKIMAGE_NAMES:
        image = getattr(skimage.data, name)()
        # stereo_motorcycle returns (left, right, disparity): the left view is the scene
        images[name] = as_rgb(image[0] if isinstance(image, tuple) else image)
    sample = load_sample_images()
    for path, image in zip(sample.filenames, sample.images, strict=True):
        images[path.rsplit("/", 1)[-1].split(".")[0]] = as_rgb(image)
    return images


def random_crop(
    image: np.ndarray, patch: int, scale_range: tuple[float, float], rng: np.random.Generator
) -> tuple[np.ndarray, float, int, int]:
    """A patch x patch crop of the image down-scaled by a random factor (at least enough to fit).

    The window of side patch / scale is cut first and then resized, which equals resizing the whole
    image and cropping, at a fraction of the cost.
    """
    h, w = image.shape[:2]
    smallest = patch / min(h, w)
    if smallest > 1.0:
        raise ValueError(f"image of {h}x{w} is smaller than the patch {patch}")
    scale = max(float(rng.uniform(*scale_range)), smallest)
    side = min(min(h, w), int(round(patch / scale)))
    top = int(rng.integers(0, h - side + 1))
    left = int(rng.integers(0, w - side + 1))
    window = Image.fromarray(image[top : top + side, left : left + side])
    return np.asarray(window.resize((patch, patch), Image.Resampling.LANCZOS)), scale, top, left


def make_synthetic_set(
    references: dict[str, np.ndarray],
    n_images: int,
    patch: int,
    scale_range: tuple[float, float],
    distortions: list[str],
    n_distortions: tuple[int, int],
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, pd.DataFrame]:
    """(pristine, distorted) uint8 arrays (n, patch, patch, 3) and the log of what was applied."""
    usable = [name for name, im in references.items() if min(im.shape[:2]) >= patch]
    if not usable:
        raise ValueError(f"no reference image is at least {patch} pixels on its short side")
    pristine = np.zeros((n_images, patch, patch, 3), np.uint8)
    distorted = np.zeros_like(pristine)
    log = []
    choices = sorted(set(distortions))
    for i in range(n_images):
        source = usable[int(rng.integers(len(usable)))]
        crop, scale, top, left = random_crop(references[source], patch, scale_range, rng)
        count = int(rng.integers(n_distortions[0], n_distortions[1] + 1))
        names = list(rng.choice(choices, size=count, replace=False))
        levels = rng.uniform(0.0, 1.0, size=count).tolist()
        pristine[i] = crop
        distorted[i] = to_uint8(apply_mixture(crop / 255.0, names, levels, rng))
        log.append(
            {
                "image_id": i,
                "source": source,
                "scale": scale,
                "top": top,
                "left": left,
                "distortions": "+".join(names),
                "levels": "+".join(f"{lv:.3f}" for lv in levels),
                "n_distortions": count,
            }
        )
    return pristine, distorted, pd.DataFrame(log)


def _column(frame: pd.DataFrame, options: tuple[str, ...], what: str) -> str:
    lower = {c.lower(): c for c in frame.columns}
    for option in options:
        if option in lower:
            return lower[option]
    raise ValueError(
        f"cpl_iqa.real_labels has no {what} column (looked for {', '.join(options)}; "
        f"found {list(frame.columns)}): rename it in the label CSV or via load_args"
    )


def load_folder_set(
    real_images: dict[str, Any], real_labels: pd.DataFrame, n_images: int, patch: int
) -> tuple[np.ndarray, pd.DataFrame]:
    """Images named in the label table, resized to patch x patch (the paper: 256 x 256), with their MOS."""
    image_col = _column(real_labels, IMAGE_COLUMNS, "image name")
    mos_col = _column(real_labels, MOS_COLUMNS, "MOS")
    stems = {key.rsplit("/", 1)[-1]: key for key in real_images}
    rows, images = [], []
    for _, row in real_labels.iterrows():
        name = str(row[image_col]).rsplit("/", 1)[-1]
        key = stems.get(name) or stems.get(name.rsplit(".", 1)[0])
        if key is None:
            continue
        loaded = real_images[key]
        loaded = loaded() if callable(loaded) else loaded
        image = Image.fromarray(as_rgb(np.asarray(loaded))).resize((patch, patch))
        images.append(np.asarray(image))
        rows.append({"image_id": len(rows), "source": name, "mos": float(row[mos_col])})
        if len(rows) >= n_images:
            break
    if len(rows) < 20:
        raise ValueError(
            f"cpl_iqa.real_images: only {len(rows)} of the images named in cpl_iqa.real_labels "
            "were found in the folder; check both catalog entries"
        )
    return np.stack(images), pd.DataFrame(rows)


def make_splits(
    n_images: int, ratio: list[float], n_splits: int, seed_streams: list[np.random.Generator]
) -> list[dict[str, np.ndarray]]:
    """Random labelled / unlabelled / test index sets in the given ratio, one per split seed."""
    total = sum(ratio)
    n_labeled = int(n_images * ratio[0] / total)
    n_test = int(n_images * ratio[2] / total)
    splits = []
    for k in range(n_splits):
        order = seed_streams[k].permutation(n_images)
        splits.append(
            {
                "labeled": np.sort(order[:n_labeled]),
                "test": np.sort(order[n_labeled : n_labeled + n_test]),
                "unlabeled": np.sort(order[n_labeled + n_test :]),
            }
        )
    return splits
