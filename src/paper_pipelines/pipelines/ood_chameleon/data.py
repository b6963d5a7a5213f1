"""Ingest for ood_chameleon: the base datasets the tasks are resampled from, seeded by argument.

* ``synth``: the official synthetic generator (``synthetic/train_syn.py``): a causal block
  x_c ~ N(y' mu_c 1, var_c I) and a spurious block x_s ~ N(a' 1, I), y', a' in {-1, +1}; the test split
  has n/4 samples per group.
* ``digits:<partition>``: a ColoredMNIST analogue from scikit-learn's shipped 8x8 digits: the digit is
  written into colour channel a of a 2 x 8 x 8 image (the other channel zero, as the CMNIST construction),
  plus N(0, noise^2) pixel noise; y is a binary partition of the digit (ge5, parity, loops). Disjoint
  image pools feed the training and the (group-balanced, n/16 per group) test splits.
* ``real``: a user-supplied pool of frozen-backbone embeddings with fixed (y, a) per sample (paper scale).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .shifts import GROUPS, group_counts

PARTITIONS = {
    "ge5": lambda d: (d >= 5).astype(int),
    "parity": lambda d: (d % 2).astype(int),
    "loops": lambda d: np.isin(d, (0, 6, 8, 9)).astype(int),
}


# ---------------------------------------------------------------- synthetic source
def synthetic_split(
    counts: np.ndarray, var_causal: float, d_feat: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, a) with counts[g] samples of group g: x = [N(y' 1, var_c I), N(a' 1, I)] (train_syn.py)."""
    xs, ys, as_ = [], [], []
    for (y, a), m in zip(GROUPS, counts, strict=True):
        causal = rng.normal((2 * y - 1) * 1.0, np.sqrt(var_causal), (m, d_feat))
        spurious = rng.normal((2 * a - 1) * 1.0, 1.0, (m, d_feat))
        xs.append(np.hstack([causal, spurious]))
        ys.append(np.full(m, y))
        as_.append(np.full(m, a))
    return np.vstack(xs).astype(np.float32), np.concatenate(ys), np.concatenate(as_)


def synthetic_task(row: dict, seed_rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One synthetic task: training split with the row's shift, test split with n/4 per group."""
    counts = group_counts(row["sc"], row["ci"], row["ai"], int(row["n"]))
    x_tr, y_tr, a_tr = synthetic_split(counts, row["var_causal"], int(row["d_feat"]), seed_rng)
    test_counts = np.full(4, int(row["n"]) // 4)
    x_te, y_te, a_te = synthetic_split(test_counts, row["var_causal"], int(row["d_feat"]), seed_rng)
    return {"x_tr": x_tr, "y_tr": y_tr, "a_tr": a_tr, "x_te": x_te, "y_te": y_te, "a_te": a_te}


# ---------------------------------------------------------------- coloured digits
def load_digits_pool(train_pool: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """scikit-learn's 1797 digits (pixels scaled to [0, 1]) split into a training and a test pool."""
    from paper_pipelines.common.tables import load_sklearn_table

    images, digits = load_sklearn_table("digits")
    order = rng.permutation(len(digits))
    if not 0 < train_pool < len(digits):
        raise ValueError(
            f"ood_chameleon.data.digits_train_pool must be in (0, {len(digits)}), got {train_pool}"
        )
    tr, te = order[:train_pool], order[train_pool:]
    images = (images / 16.0).astype(np.float32)
    return {
        "images_tr": images[tr],
        "digits_tr": digits[tr],
        "images_te": images[te],
        "digits_te": digits[te],
    }


def colour_digits(
    images: np.ndarray, colour: np.ndarray, noise: float, rng: np.random.Generator
) -> np.ndarray:
    """(m, 64) digits -> (m, 128) two-channel images with the digit in channel ``colour`` + noise."""
    out = np.zeros((len(images), 2, images.shape[1]), dtype=np.float32)
    out[np.arange(len(images)), np.asarray(colour, dtype=int)] = images
    out += noise * rng.standard_normal(out.shape).astype(np.float32)
    return out.reshape(len(images), -1)


def draw_group_members(
    candidates: np.ndarray, sizes: list[int], rng: np.random.Generator
) -> list[np.ndarray]:
    """Disjoint draws of ``sizes`` members from ``candidates``; with replacement only when too few."""
    total = int(sum(sizes))
    replace = total > len(candidates)
    picked = rng.choice(candidates, total, replace=replace)
    return np.split(picked, np.cumsum(sizes)[:-1])


def digits_task_index(
    pool: dict[str, np.ndarray], partition: str, counts: np.ndarray, rng: np.random.Generator
) -> dict[str, Any]:
    """Pool indices and colours of one digits task: counts[g] training images of group g from the
    training pool, n/16 per group from the test pool (n/4 in all, group-balanced)."""
    label = PARTITIONS[partition]
    n = int(counts.sum())
    per_group_te = max(n // 16, 1)
    index: dict[str, Any] = {}
    for split, sizes in (("tr", [int(c) for c in counts]), ("te", [per_group_te] * 4)):
        y_pool = label(pool[f"digits_{split}"])
        idx, ys, as_ = [], [], []
        for y in (0, 1):
            members = draw_group_members(np.flatnonzero(y_pool == y), sizes[2 * y : 2 * y + 2], rng)
            for a, chosen in enumerate(members):
                idx.append(chosen)
                ys.append(np.full(len(chosen), y))
                as_.append(np.full(len(chosen), a))
        index[f"idx_{split}"] = np.concatenate(idx)
        index[f"y_{split}"] = np.concatenate(ys)
        index[f"a_{split}"] = np.concatenate(as_)
    return index


def digits_task(
    pool: dict[str, np.ndarray], index: dict[str, Any], noise: float, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """The coloured, noisy 128-d images of one digits task from its pool indices and colours."""
    task = {}
    for split in ("tr", "te"):
        images = pool[f"images_{split}"][index[f"idx_{split}"]]
        task[f"x_{split}"] = colour_digits(images, index[f"a_{split}"], noise, rng)
        task[f"y_{split}"] = index[f"y_{split}"]
        task[f"a_{split}"] = index[f"a_{split}"]
    return task


def fit_digit_features(
    pool: dict[str, np.ndarray], kind: str, dim: int, noise: float, rng: np.random.Generator
) -> dict[str, Any]:
    """The fixed 'frozen embedding' of the digits: identity (128-d) or a PCA fit once on the training
    pool, each image drawn in a random colour (the same map for every task)."""
    if kind == "identity":
        return {"kind": "identity"}
    from sklearn.decomposition import PCA

    images = pool["images_tr"]
    colours = rng.integers(0, 2, len(images))
    pca = PCA(n_components=dim, random_state=0).fit(colour_digits(images, colours, noise, rng))
    return {"kind": "pca", "mean": pca.mean_.astype(np.float32), "components": pca.components_}


def apply_digit_features(x: np.ndarray, feature_map: dict[str, Any]) -> np.ndarray:
    """Project 128-d digit images with the fixed feature map."""
    if feature_map["kind"] == "identity":
        return x
    return ((x - feature_map["mean"]) @ feature_map["components"].T).astype(np.float32)


# ---------------------------------------------------------------- user-supplied embeddings
def real_task_index(
    y: np.ndarray, a: np.ndarray, split: np.ndarray, counts: np.ndarray, rng: np.random.Generator
) -> dict[str, Any]:
    """Pool indices of one task from a real dataset with fixed groups (the official TaskGenerator):
    counts[g] training samples of group g, n/16 per group for the balanced test split."""
    n = int(counts.sum())
    per_group_te = max(n // 16, 1)
    index: dict[str, Any] = {}
    for name, sizes in (("tr", counts), ("te", [per_group_te] * 4)):
        pool = split == (0 if name == "tr" else 1)
        chosen = []
        for g, (gy, ga) in enumerate(GROUPS):
            members = np.flatnonzero(pool & (y == gy) & (a == ga))
            if len(members) == 0:
                raise ValueError(
                    f"the real pool has no sample of group (y={gy}, a={ga}) in its "
                    f"{'training' if name == 'tr' else 'test'} split"
                )
            chosen.append(rng.choice(members, int(sizes[g]), replace=int(sizes[g]) > len(members)))
        index[f"idx_{name}"] = np.concatenate(chosen)
    return index
