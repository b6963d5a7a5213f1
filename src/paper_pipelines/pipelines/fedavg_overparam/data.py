"""Ingest and client splits: scikit-learn's shipped digits (default), or a user's local MNIST / CIFAR-10
folder (paper scale, the catalog entry ``fedavg_overparam.image_folder``); nothing is downloaded.

Images are kept as float32 arrays (N, C, H, W) in [0, 1] with integer labels and an ``is_test`` flag (the
official test split of MNIST / CIFAR-10; digits has none, so its test rows are drawn in the split).
"""

from __future__ import annotations

import gzip
import pickle
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from kedro.io import AbstractDataset, DatasetError

from paper_pipelines.common.tables import load_sklearn_table

# Training images per class in each source (the size checks in parameters.py read these).
TRAIN_PER_CLASS_MIN = {"digits": 174, "mnist": 5421, "cifar10": 5000}
TRAIN_SIZE = {"digits": 1797, "mnist": 60000, "cifar10": 50000}


def load_digits_images() -> dict[str, Any]:
    """scikit-learn's 8x8 digits (1797 images, 10 classes), pixels scaled from 0..16 to [0, 1]."""
    x, y = load_sklearn_table("digits")
    x = (x / 16.0).astype(np.float32).reshape(-1, 1, 8, 8)
    return {"x": x, "y": y.astype(np.int64), "is_test": np.zeros(len(y), bool), "source": "digits"}


def _open(path: Path):
    return gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")


def _find(root: Path, stem: str) -> Path:
    hits = sorted(p for p in root.rglob(f"{stem}*") if p.is_file() and p.suffix in ("", ".gz"))
    if not hits:
        raise FileNotFoundError(f"no file {stem}[.gz] under {root}")
    return hits[0]


def read_mnist_folder(root: Path) -> dict[str, Any]:
    """MNIST as the IDX files torchvision keeps (train-images-idx3-ubyte[.gz] ... t10k-labels-idx1-ubyte)."""
    parts = {}
    for split, prefix in (("train", "train"), ("test", "t10k")):
        with _open(_find(root, f"{prefix}-images-idx3-ubyte")) as fh:
            _, n, rows, cols = struct.unpack(">IIII", fh.read(16))
            images = np.frombuffer(fh.read(), np.uint8).reshape(n, 1, rows, cols)
        with _open(_find(root, f"{prefix}-labels-idx1-ubyte")) as fh:
            fh.read(8)
            labels = np.frombuffer(fh.read(), np.uint8)
        parts[split] = (images, labels)
    return _stack(parts, "mnist")


def read_cifar10_folder(root: Path) -> dict[str, Any]:
    """CIFAR-10 as the python batches of cifar-10-batches-py (data_batch_1..5, test_batch)."""
    parts = {}
    for split, stems in (
        ("train", [f"data_batch_{i}" for i in range(1, 6)]),
        ("test", ["test_batch"]),
    ):
        xs, ys = [], []
        for stem in stems:
            with _find(root, stem).open("rb") as fh:
                batch = pickle.load(fh, encoding="bytes")
            xs.append(np.asarray(batch[b"data"], np.uint8).reshape(-1, 3, 32, 32))
            ys.append(np.asarray(batch[b"labels"], np.int64))
        parts[split] = (np.concatenate(xs), np.concatenate(ys))
    return _stack(parts, "cifar10")


def _stack(parts: dict, source: str) -> dict[str, Any]:
    (xtr, ytr), (xte, yte) = parts["train"], parts["test"]
    x = (np.concatenate([xtr, xte]).astype(np.float32) / 255.0).astype(np.float32)
    y = np.concatenate([ytr, yte]).astype(np.int64)
    is_test = np.r_[np.zeros(len(ytr), bool), np.ones(len(yte), bool)]
    return {"x": x, "y": y, "is_test": is_test, "source": source}


class ImageFolderDataset(AbstractDataset[None, dict]):
    """Read-only catalog input: a local MNIST or CIFAR-10 folder (e.g. what torchvision once stored).

    Example (conf/paper/catalog/fedavg_overparam.yml)::

        fedavg_overparam.image_folder:
          type: paper_pipelines.pipelines.fedavg_overparam.data.ImageFolderDataset
          path: data/01_raw/fedavg_overparam/MNIST
          layout: mnist
    """

    def __init__(self, path: str, layout: str, metadata: dict[str, Any] | None = None) -> None:
        if layout not in ("mnist", "cifar10"):
            raise DatasetError(
                f"fedavg_overparam.image_folder: layout must be mnist or cifar10, got {layout!r}"
            )
        self._path, self._layout, self.metadata = str(path), layout, metadata

    def load(self) -> dict[str, Any]:
        root = Path(self._path)
        if not root.is_dir():
            raise DatasetError(
                f"fedavg_overparam.image_folder: {self._path!r} is not a directory; point `path` of "
                "this entry in conf/paper/catalog/fedavg_overparam.yml at your MNIST / CIFAR-10 folder"
            )
        reader = read_mnist_folder if self._layout == "mnist" else read_cifar10_folder
        return reader(root)

    def save(self, data: None) -> None:
        raise DatasetError("fedavg_overparam.image_folder is a read-only input (your image folder)")

    def _exists(self) -> bool:
        return Path(self._path).is_dir()

    def _describe(self) -> dict[str, Any]:
        return {"path": self._path, "layout": self._layout}


# ----------------------------------------------------------------------------------- client splits
def _split_rows(experiment: str, split: str, role: str, samples, clients) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "sample": np.asarray(samples, np.int64),
            "experiment": experiment,
            "split": split,
            "client": np.asarray(clients, np.int64),
            "role": role,
        }
    )


def kernel_regime_split(
    y: np.ndarray,
    is_test: np.ndarray,
    classes: list[int],
    clients: int,
    per_client: int,
    test_max: int | None,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """The mini-MNIST analogue: images of ``classes`` only, ``per_client`` training images per client.

    non-IID: client i holds only class classes[i * C // M] (clients 0-4 zeros, 5-9 ones for two classes and
    M = 10); IID: the same pooled images dealt out class by class, round robin, so every client gets each
    class in equal shares. Test rows: the official test images of these classes, or (digits) every image
    of them not drawn for training; at most ``test_max``.
    """
    owner = [classes[i * len(classes) // clients] for i in range(clients)]
    pooled, noniid_client = [], []
    for c in classes:
        candidates = np.flatnonzero((y == c) & ~is_test)
        holders = [i for i in range(clients) if owner[i] == c]
        need = per_client * len(holders)
        if need > len(candidates):
            raise ValueError(
                f"class {c} has {len(candidates)} training images, fewer than the {need} that "
                f"{len(holders)} clients x fedavg_overparam.data.kernel_per_client = {per_client} need; "
                "lower kernel_per_client or fedavg_overparam.data.clients"
            )
        chosen = rng.choice(candidates, need, replace=False)
        pooled.append(chosen)
        noniid_client.append(np.repeat(holders, per_client))
    pooled_all = np.concatenate(pooled)
    frames = [
        _split_rows("kernel_regime", "noniid", "train", pooled_all, np.concatenate(noniid_client))
    ]
    iid_samples, iid_clients = [], []
    offset = 0
    for chosen in pooled:
        shuffled = rng.permutation(chosen)
        iid_samples.append(shuffled)
        iid_clients.append((offset + np.arange(len(shuffled))) % clients)
        offset += len(shuffled)
    frames.append(
        _split_rows(
            "kernel_regime",
            "iid",
            "train",
            np.concatenate(iid_samples),
            np.concatenate(iid_clients),
        )
    )
    in_classes = np.isin(y, classes)
    if is_test.any():
        test = np.flatnonzero(in_classes & is_test)
    else:
        test = np.setdiff1d(np.flatnonzero(in_classes), pooled_all)
    if test_max is not None and len(test) > test_max:
        test = np.sort(rng.choice(test, test_max, replace=False))
    frames.append(_split_rows("kernel_regime", "pooled", "test", test, np.full(len(test), -1)))
    return pd.concat(frames, ignore_index=True)


def dirichlet_partition(
    labels: np.ndarray,
    clients: int,
    alpha: float,
    min_size: int,
    rng: np.random.Generator,
    max_tries: int = 1000,
) -> np.ndarray:
    """Client of every sample: for each class, proportions q ~ Dirichlet(alpha 1_M) split its samples
    (the official non-IID generator); redrawn until every client holds at least ``min_size`` samples."""
    for _ in range(max_tries):
        owner = np.empty(len(labels), np.int64)
        for c in np.unique(labels):
            idx = rng.permutation(np.flatnonzero(labels == c))
            q = rng.dirichlet(np.full(clients, alpha))
            cuts = (np.cumsum(q)[:-1] * len(idx)).astype(int)
            for client, part in enumerate(np.split(idx, cuts)):
                owner[part] = client
        if np.bincount(owner, minlength=clients).min() >= min_size:
            return owner
    raise ValueError(
        f"no Dirichlet(alpha={alpha}) split of {len(labels)} samples gave every one of {clients} clients "
        f"at least {min_size} samples in {max_tries} draws; raise fedavg_overparam.data.dirichlet_alpha "
        "or heterogeneity_train, or lower min_client_size"
    )


def heterogeneity_split(
    y: np.ndarray,
    is_test: np.ndarray,
    clients: int,
    n_train: int | None,
    test_max: int | None,
    alpha: float,
    min_size: int,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """The Fig. 1 setting: all classes; non-IID = Dirichlet(alpha) over clients per class, IID = a random
    equal split of the same training images; one shared test set."""
    train_pool = np.flatnonzero(~is_test)
    n = len(train_pool) if n_train is None else n_train
    train = np.sort(rng.choice(train_pool, n, replace=False))
    test = np.flatnonzero(is_test) if is_test.any() else np.setdiff1d(train_pool, train)
    if test_max is not None and len(test) > test_max:
        test = np.sort(rng.choice(test, test_max, replace=False))
    owner = dirichlet_partition(y[train], clients, alpha, min_size, rng)
    iid_owner = rng.permutation(np.arange(n) % clients)
    return pd.concat(
        [
            _split_rows("heterogeneity", "noniid", "train", train, owner),
            _split_rows("heterogeneity", "iid", "train", train, iid_owner),
            _split_rows("heterogeneity", "pooled", "test", test, np.full(len(test), -1)),
        ],
        ignore_index=True,
    )
