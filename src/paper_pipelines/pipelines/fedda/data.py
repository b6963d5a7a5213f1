"""Ingest and preprocess for FedDDA: PACS-like feature shift rendered from data that ships offline.

scikit-learn's 1797 digits (8 x 8) are split into disjoint pools: one for the mini-CLIP's neutral source
domain, one per client. Each client renders its pool in its own visual domain, as each PACS client
holds one domain: ``photo`` (the digit blended onto crops of scikit-image's photographs), ``sketch``
(dark edge strokes on white), ``texture`` (stamped on tinted brick / grass / gravel), ``negative``
(inverted, tinted, noisy and blurred). Images are float arrays (N, 3, S, S) in [0, 1]; class names are
English words so that the text tower's prior means something. Every random stream is a named
sub-stream of the paper's one seed.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import ndimage
from skimage.transform import resize

CLASS_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
PHOTOS = ("coffee", "astronaut", "chelsea", "rocket")
TEXTURES = ("brick", "grass", "gravel")


def load_digits_and_backgrounds() -> dict[str, Any]:
    """The shipped images: digit glyphs in [0, 1] (N, 8, 8), labels, photographs and textures."""
    import skimage.data
    from sklearn.datasets import load_digits

    digits = load_digits()
    return {
        "glyphs": (digits.images / 16.0).astype(np.float32),
        "labels": digits.target.astype(np.int64),
        "photos": {n: getattr(skimage.data, n)().astype(np.float32) / 255.0 for n in PHOTOS},
        "textures": {n: getattr(skimage.data, n)().astype(np.float32) / 255.0 for n in TEXTURES},
    }


# ---------------------------------------------------------------- rendering helpers
def upscale(glyph: np.ndarray, size: int) -> np.ndarray:
    """An 8 x 8 glyph resized to size x size (bilinear), values in [0, 1]."""
    return np.clip(resize(glyph, (size, size), order=1, anti_aliasing=False), 0.0, 1.0)


def random_crop(image: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """A random square crop (2 to 6 output sizes wide) of ``image`` resized to (size, size, C)."""
    h, w = image.shape[:2]
    side = int(rng.integers(2 * size, min(6 * size, h, w) + 1))
    top, left = int(rng.integers(0, h - side + 1)), int(rng.integers(0, w - side + 1))
    crop = image[top : top + side, left : left + side]
    if crop.ndim == 2:
        crop = crop[..., None]
    return resize(crop, (size, size), order=1, anti_aliasing=True).astype(np.float32)


def shift(image: np.ndarray, rng: np.random.Generator, max_shift: int = 1) -> np.ndarray:
    """A random translation by up to ``max_shift`` pixels in each direction (H, W[, C])."""
    dy, dx = rng.integers(-max_shift, max_shift + 1, size=2)
    return np.roll(image, (int(dy), int(dx)), axis=(0, 1))


def blend(background: np.ndarray, mask: np.ndarray, colour: np.ndarray, alpha: float = 1.0):
    """Digit of ``colour`` over ``background`` with opacity alpha * mask: (H, W, 3)."""
    a = alpha * mask[..., None]
    return background * (1.0 - a) + colour[None, None, :] * a


def render_source(glyph: np.ndarray, size: int, rng: np.random.Generator) -> np.ndarray:
    """Neutral source domain: a bright tinted digit on a dark solid or gradient background, shifted,
    sometimes blurred (generic augmentation that contains none of the client styles)."""
    mask = shift(upscale(glyph, size), rng)
    base = rng.uniform(0.0, 0.3, 3)
    if rng.random() < 0.5:  # vertical or horizontal gradient
        ramp = np.linspace(0.0, 1.0, size)[:, None] * np.ones((1, size))
        ramp = ramp if rng.random() < 0.5 else ramp.T
        background = base[None, None] + ramp[..., None] * rng.uniform(-0.15, 0.15, 3)
    else:
        background = np.broadcast_to(base, (size, size, 3))
    img = blend(np.clip(background, 0, 1), mask, rng.uniform(0.7, 1.0, 3))
    if rng.random() < 0.3:
        img = ndimage.gaussian_filter(img, sigma=(0.6, 0.6, 0))
    return img


def render_photo(glyph, size, rng, backgrounds) -> np.ndarray:
    """Photo domain: the digit alpha-blended onto a random crop of a scikit-image photograph."""
    name = PHOTOS[int(rng.integers(len(PHOTOS)))]
    background = random_crop(backgrounds["photos"][name], size, rng)
    return blend(background, shift(upscale(glyph, size), rng), rng.uniform(0, 1, 3), 0.85)


def render_sketch(glyph, size, rng, backgrounds) -> np.ndarray:
    """Sketch domain: Sobel edges of the (2x) upscaled digit as dark strokes on white paper."""
    big = upscale(glyph, 2 * size)
    edges = np.hypot(ndimage.sobel(big, 0), ndimage.sobel(big, 1))
    edges = resize(edges / max(edges.max(), 1e-6), (size, size), order=1, anti_aliasing=True)
    strokes = shift(np.clip(1.5 * edges, 0, 1), rng)
    paper = rng.uniform(0.9, 1.0, 3)
    return blend(np.broadcast_to(paper, (size, size, 3)), strokes, rng.uniform(0.0, 0.2, 3))


def render_texture(glyph, size, rng, backgrounds) -> np.ndarray:
    """Texture domain: the digit stamped onto a tinted brick / grass / gravel crop."""
    name = TEXTURES[int(rng.integers(len(TEXTURES)))]
    background = random_crop(backgrounds["textures"][name], size, rng) * rng.uniform(0.4, 1.0, 3)
    return blend(background, shift(upscale(glyph, size), rng), rng.uniform(0, 1, 3))


def render_negative(glyph, size, rng, backgrounds) -> np.ndarray:
    """Negative domain: inverted, colour-tinted digit with Gaussian noise and blur."""
    mask = shift(upscale(glyph, size), rng)
    img = 1.0 - mask[..., None] * rng.uniform(0.5, 1.0, 3)[None, None]
    img = img + rng.normal(0.0, 0.12, img.shape)
    return ndimage.gaussian_filter(img, sigma=(0.7, 0.7, 0))


RENDERERS = {
    "photo": render_photo,
    "sketch": render_sketch,
    "texture": render_texture,
    "negative": render_negative,
}


def to_uint8_chw(images: list[np.ndarray]) -> np.ndarray:
    """(H, W, 3) float images -> one (N, 3, H, W) uint8 array (compact to store)."""
    stack = np.clip(np.stack(images), 0.0, 1.0).transpose(0, 3, 1, 2)
    return np.round(stack * 255).astype(np.uint8)


def as_float(images: np.ndarray) -> np.ndarray:
    """Stored uint8 images back to float32 in [0, 1]."""
    return images.astype(np.float32) / 255.0


# ---------------------------------------------------------------- pools and splits
def source_split(n: int, n_source: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Disjoint digit indices: the mini-CLIP's source pool and the rest (for the clients)."""
    order = rng.permutation(n)
    return np.sort(order[:n_source]), np.sort(order[n_source:])


def client_pools(rest: np.ndarray, n_clients: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``rest`` shuffled into one equal disjoint pool per client (the remainder is dropped)."""
    order = rng.permutation(rest)
    per_client = len(order) // n_clients
    return [np.sort(order[k * per_client : (k + 1) * per_client]) for k in range(n_clients)]


def label_skew(
    pool: np.ndarray, labels: np.ndarray, beta: float, rng: np.random.Generator
) -> np.ndarray:
    """Dirichlet(beta) label skew inside one client: class c keeps a share p_c / max(p) of its digits
    (beta = 0: no skew, the pool unchanged)."""
    if beta == 0:
        return pool
    classes = np.unique(labels)
    p = rng.dirichlet(np.full(len(classes), beta))
    keep = []
    for c, share in zip(classes, p / p.max(), strict=True):
        members = pool[labels[pool] == c]
        keep.append(members[: int(round(share * len(members)))])
    return np.sort(np.concatenate(keep))


def train_test_split(
    pool: np.ndarray, train_frac: float, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Split a pool by digit identity, so no glyph is in both splits."""
    order = rng.permutation(pool)
    n_train = int(round(train_frac * len(order)))
    return np.sort(order[:n_train]), np.sort(order[n_train:])


def render_many(indices, raw, renderer, size, renders, rng) -> tuple[np.ndarray, np.ndarray]:
    """Each glyph rendered ``renders`` times with fresh randomness: (uint8 images, labels)."""
    images = [renderer(raw["glyphs"][i], size, rng, raw) for i in indices for _ in range(renders)]
    labels = np.repeat(raw["labels"][indices], renders)
    if not images:
        return np.zeros((0, 3, size, size), np.uint8), labels
    return to_uint8_chw(images), labels


Plan = dict[str, tuple[np.ndarray, np.ndarray]]


def plan_clients(
    labels: np.ndarray,
    pools: list[np.ndarray],
    domains: list[str],
    train_frac: float,
    beta: float,
    rng: np.random.Generator,
) -> Plan:
    """Which digits each client trains and tests on: label skew inside its pool, then 80/20 by digit."""
    plan = {}
    for domain, pool in zip(domains, pools, strict=True):
        plan[domain] = train_test_split(label_skew(pool, labels, beta, rng), train_frac, rng)
    return plan


def check_plan(plan: Plan, renders: int, beta: float) -> None:
    """Every client needs at least 2 training images and a non-empty test split."""
    for name, (train, test) in plan.items():
        n_train, n_test = renders * len(train), renders * len(test)
        if n_train < 2 or n_test < 1:
            raise ValueError(
                f"client {name!r} would get {n_train} training and {n_test} test images (at least 2 "
                f"and 1 needed): raise fedda.data.beta (now {beta}), lower fedda.data.n_source_digits "
                "or use fewer fedda.data.domains; move fedda.data.train_frac away from 0 and 1"
            )


def render_clients(
    raw: dict[str, Any], plan: Plan, size: int, renders: int, rng: np.random.Generator
) -> dict[str, dict[str, np.ndarray]]:
    """One client per domain: {domain: {train_images, train_labels, test_images, test_labels}}."""
    clients = {}
    for domain, (train, test) in plan.items():
        renderer = RENDERERS[domain]
        x_tr, y_tr = render_many(train, raw, renderer, size, renders, rng)
        x_te, y_te = render_many(test, raw, renderer, size, renders, rng)
        clients[domain] = {
            "train_images": x_tr,
            "train_labels": y_tr,
            "test_images": x_te,
            "test_labels": y_te,
        }
    return clients


def settings(
    beta: float, repeats: int, skew_beta: float | None, skew_repeats: int
) -> dict[str, float]:
    """The rendered settings and their beta: main_<r> for every repeat, label_skew_<r> beside."""
    out = {f"main_{r}": beta for r in range(repeats)}
    if skew_beta is not None:
        out.update({f"label_skew_{r}": skew_beta for r in range(skew_repeats)})
    return out


def client_plans(labels: np.ndarray, data_params: Any, study: Any, seed: int) -> dict[str, Plan]:
    """Every setting's client plan (checked): the source pool is the same as the mini-CLIP's, so no
    client ever holds a pretraining digit. Cheap (indices only): the parameter check runs it too."""
    from paper_pipelines.common.runtime import substream

    _, rest = source_split(len(labels), data_params.n_source_digits, substream(seed, "pools"))
    plans = {}
    chosen = settings(
        data_params.beta, study.repeats, study.label_skew_beta, study.label_skew_repeats
    )
    for key, beta in chosen.items():
        pools = client_pools(rest, len(data_params.domains), substream(seed, "pools", key))
        plan = plan_clients(
            labels, pools, data_params.domains, data_params.train_frac, beta,
            substream(seed, "split", key),
        )  # fmt: skip
        check_plan(plan, data_params.renders_per_digit, beta)
        plans[key] = plan
    return plans


def partition_stats(
    settings: dict[str, dict[str, dict[str, np.ndarray]]],
    class_names: tuple[str, ...] | list[str] = CLASS_NAMES,
) -> pd.DataFrame:
    """Images per class, split and client for every setting (for kedro-viz and the page)."""
    rows = []
    for setting, clients in settings.items():
        for client, split in clients.items():
            for part in ("train", "test"):
                counts = np.bincount(split[f"{part}_labels"], minlength=len(class_names))
                for c, n in enumerate(counts):
                    rows.append(
                        {
                            "setting": setting,
                            "client": client,
                            "split": part,
                            "class": class_names[c],
                            "count": int(n),
                        }
                    )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- a user's domain folders (paper scale)
def prompt_name(folder: str) -> str:
    """A class folder's name as prompts read it (Office-Home's ``Alarm_Clock`` -> ``alarm clock``)."""
    return folder.replace("_", " ").strip().lower()


def load_domain_folders(
    partitions: dict[str, Any], domains: list[str], image_size: int
) -> dict[str, Any]:
    """``<domain>/<class>/<image>`` partitions (PACS, Office-Home) -> per requested domain uint8
    (N, 3, S, S) images resized to ``image_size`` and labels over the sorted class folders of all
    requested domains. Partition values are loaders (Kedro's PartitionedDataset) or images."""
    from PIL import Image

    by_domain: dict[str, list[tuple[str, str, Any]]] = {}
    for key in sorted(partitions):
        parts = key.replace("\\", "/").strip("/").split("/")
        if len(parts) < 3:
            raise ValueError(
                f"fedda.domain_images: partition {key!r} is not <domain>/<class>/<image>; point the "
                "entry's path at the folder that holds one sub-folder per domain"
            )
        by_domain.setdefault(parts[0], []).append((parts[1], key, partitions[key]))
    missing = [d for d in domains if d not in by_domain]
    if missing:
        raise ValueError(
            f"fedda.data.domains names {missing}, but fedda.domain_images has no such folder "
            f"(found: {sorted(by_domain)}); fix fedda.data.domains or the entry's path"
        )
    folders = sorted({c for d in domains for c, _, _ in by_domain[d]})
    index = {c: i for i, c in enumerate(folders)}
    out = {}
    for domain in domains:
        images, labels = [], []
        for cls, _, item in by_domain[domain]:
            image = item() if callable(item) else item
            image = image.convert("RGB").resize((image_size, image_size), Image.BICUBIC)
            images.append(np.asarray(image, dtype=np.uint8).transpose(2, 0, 1))
            labels.append(index[cls])
        out[domain] = {"images": np.stack(images), "labels": np.asarray(labels, np.int64)}
    return {"domains": out, "class_names": tuple(prompt_name(c) for c in folders)}


def split_domain_clients(
    folders: dict[str, dict[str, np.ndarray]],
    train_frac: float,
    beta: float,
    rng: np.random.Generator,
) -> dict[str, dict[str, np.ndarray]]:
    """One client per domain folder: label skew inside the domain (beta > 0), then a random
    train/test split by image; every client needs at least 2 training and 1 test image."""
    clients = {}
    for domain, d in folders.items():
        pool = label_skew(np.arange(len(d["labels"])), d["labels"], beta, rng)
        train, test = train_test_split(pool, train_frac, rng)
        if len(train) < 2 or len(test) < 1:
            raise ValueError(
                f"client {domain!r} would get {len(train)} training and {len(test)} test images (at "
                f"least 2 and 1 needed): add images to its folder, raise the label-skew beta (now "
                f"{beta}) or move fedda.data.train_frac away from 0 and 1"
            )
        clients[domain] = {
            "train_images": d["images"][train],
            "train_labels": d["labels"][train],
            "test_images": d["images"][test],
            "test_labels": d["labels"][test],
        }
    return clients
