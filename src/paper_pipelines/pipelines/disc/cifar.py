"""The paper-scale society's data: CIFAR-100 from a local folder (disc.cifar100) and the 10 % labelled list.

Released protocol (yxjdarren/SC, configs/cls/_base_/datasets/cifar100_10p.py): the linear probe trains on
a 10 % list of the training set (train_10p) and is evaluated on the full test set. Here the downstream pool
is that labelled list (labelled = True) followed by the test set (labelled = False), so the probes'
"fit on the labelled, score on the rest" is exactly that protocol. The collaboration modules are trained
on a socialisation split drawn from the training images outside the list (the released code ships them
frozen inside an unreleased checkpoint, so it names no split; a disjoint split keeps the probe's labels
unseen by socialisation, as the miniature society's disjoint pools do).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from paper_pipelines.common.runtime import substream

from .data import labelled_split

N_CLASSES = 100


def parse_index_list(source: Any, n_train: int) -> np.ndarray:
    """Training indices from disc.cifar_labelled_list: text (one index first on each line; '#' comments,
    commas allowed) or a sequence of ints. Each index must be in [0, n_train) and appear once."""
    if isinstance(source, str):
        tokens = []
        for line in source.splitlines():
            line = line.split("#", 1)[0].replace(",", " ").strip()
            if line:
                tokens.append(line.split()[0])
        try:
            indices = np.asarray([int(t) for t in tokens], dtype=np.int64)
        except ValueError as err:
            raise ValueError(
                f"disc.cifar_labelled_list: every line must start with a training index ({err})"
            ) from None
    else:
        indices = np.asarray(list(source), dtype=np.int64)
    if indices.size == 0:
        raise ValueError("disc.cifar_labelled_list holds no index")
    bad = indices[(indices < 0) | (indices >= n_train)]
    if bad.size:
        raise ValueError(
            f"disc.cifar_labelled_list: index {int(bad[0])} is outside the {n_train} training images"
        )
    if len(np.unique(indices)) != len(indices):
        raise ValueError("disc.cifar_labelled_list repeats an index")
    return indices


def _pool(images: np.ndarray, labels: np.ndarray) -> dict[str, np.ndarray]:
    # CIFAR has no boxes: a full-image box keeps the pools' layout (only the classification task runs)
    boxes = np.tile(np.asarray([0.5, 0.5, 1.0, 1.0], dtype=np.float32), (len(labels), 1))
    return {"images": images, "labels": labels.astype(np.int64), "boxes": boxes}


def cifar_society(
    cifar: dict[str, Any],
    labelled_list: Any,
    label_frac: float,
    social_size: int | None,
    tasks: Sequence[str],
    seed: int,
) -> dict[str, Any]:
    """One replicate: the socialisation pool (training images outside the labelled list; `social_size`
    of them, drawn from the seed, or all) and the downstream pool (labelled list, then the test set)."""
    train, test = cifar["train"], cifar["test"]
    n_train = len(train["labels"])
    if labelled_list is None:
        # floor(label_frac * n_c) per class, as the digit society's labelled split
        mask = labelled_split(train["labels"], label_frac, substream(seed, "labelled"))
        labelled = np.flatnonzero(mask)
    else:
        labelled = parse_index_list(labelled_list, n_train)
    rest = np.setdiff1d(np.arange(n_train), labelled)
    if social_size is not None:
        if social_size > len(rest):
            raise ValueError(
                f"disc.data.cifar.social = {social_size} exceeds the {len(rest)} training images "
                "outside the labelled list"
            )
        rest = np.sort(substream(seed, "social").choice(rest, size=social_size, replace=False))
    images = np.concatenate((train["images"][labelled], test["images"]))
    labels = np.concatenate((train["labels"][labelled], test["labels"]))
    down = _pool(images, labels)
    down["labelled"] = np.arange(len(labels)) < len(labelled)
    return {
        "seed": seed,
        "source": "cifar100",
        "tasks": list(tasks),
        "digits": {"labelled": labelled.tolist(), "social": rest.tolist()},
        "social": _pool(train["images"][rest], train["labels"][rest]),
        "downstream": down,
    }
