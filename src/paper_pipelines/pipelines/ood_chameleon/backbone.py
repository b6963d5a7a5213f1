"""Paper scale: embeddings of a user-supplied image (or text) dataset by a frozen backbone.

The user supplies three catalog entries (conf/paper/catalog/ood_chameleon.yml): the metadata CSV
(columns ``filename``, ``y``, ``a``, optional ``split`` with 0 = training pool, 1 or 2 = test pool), the
images as a PartitionedDataset of pillow images keyed by file name, and the backbone as a Hugging Face
feature-extraction pipeline from a local folder (ResNet-18, CLIP ViT-B/32, BERT). Nothing is downloaded.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np
import pandas as pd

REQUIRED_COLUMNS = ("filename", "y", "a")


def check_metadata(metadata: pd.DataFrame) -> pd.DataFrame:
    """The metadata CSV must name every sample's file, label y and attribute a (both 0/1)."""
    missing = [c for c in REQUIRED_COLUMNS if c not in metadata.columns]
    if missing:
        raise ValueError(
            f"ood_chameleon.real_metadata lacks column(s) {missing} (has {list(metadata.columns)}); "
            "it needs filename, y and a (0/1), optionally split; nothing was written"
        )
    for column in ("y", "a"):
        values = set(pd.unique(metadata[column]))
        if not values <= {0, 1}:
            raise ValueError(
                f"ood_chameleon.real_metadata column {column!r} must hold 0/1, got {sorted(values)[:5]}"
            )
    if "split" not in metadata.columns:
        metadata = metadata.assign(split=0)
    return metadata


def pooled_features(output: Any) -> np.ndarray:
    """One vector per input from a feature-extraction pipeline's output: (tokens, dim) text outputs are
    averaged over tokens, (channels, height, width) CNN maps over positions (global average pooling)."""
    array = np.squeeze(np.asarray(output, dtype=np.float32))
    if array.ndim == 2:
        return array.mean(axis=0)
    if array.ndim == 3:
        return array.mean(axis=(1, 2))
    return array.reshape(-1)


def _item(items: Mapping[str, Callable[[], Any]], filename: str):
    """A PartitionedDataset key is the file's relative path, with its suffix when none is configured."""
    if filename in items:
        return items[filename]
    stem = os.path.splitext(filename)[0]
    return items.get(stem)


def embed_pool(
    metadata: pd.DataFrame,
    items: Mapping[str, Callable[[], Any]],
    backbone: Callable,
    batch_size: int,
    progress=lambda x, desc, total=None: x,
) -> dict[str, np.ndarray]:
    """x = backbone(item) for every metadata row (items: lazy loaders keyed by file name)."""
    metadata = check_metadata(metadata)
    names = [str(f) for f in metadata["filename"]]
    missing = [f for f in names if _item(items, f) is None]
    if missing:
        raise FileNotFoundError(
            f"ood_chameleon.real_images has no file for {len(missing)} metadata row(s), e.g. {missing[:3]}"
        )
    vectors = []
    starts = range(0, len(names), batch_size)
    for start in progress(starts, "embedding the real pool", total=len(starts)):
        batch = [_item(items, f)() for f in names[start : start + batch_size]]
        vectors.extend(pooled_features(out) for out in backbone(batch))
    split = metadata["split"].to_numpy()
    return {
        "x": np.stack(vectors),
        "y": metadata["y"].to_numpy(int),
        "a": metadata["a"].to_numpy(int),
        "split": np.where(split == 0, 0, 1),
    }
