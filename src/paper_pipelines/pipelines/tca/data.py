"""Ingest: scikit-learn's shipped digits with the stratified source/target split (default and fast
scale), and the user's CIFAR-10-C folder (paper scale, the catalog entry ``tca.cifar_c_folder``).

Two CIFAR-10-C layouts are accepted (no download, no torchvision):
- the Hendrycks release: ``<dir>/<corruption>.npy`` (5 x 10000 images, severity-major, HWC uint8) and
  ``<dir>/labels.npy``;
- an image-folder tree as the official TCA scripts read it: ``<dir>/<corruption>/<severity>/<class>/*``
  or, for a single severity, ``<dir>/<corruption>/<class>/*`` (classes in sorted order).
The manifest stores paths and row ranges only; images are read when a domain is adapted.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from kedro.io import AbstractDataset, DatasetError
from PIL import Image
from scipy import ndimage

from paper_pipelines.common.tables import load_sklearn_table

CIFAR_C_ROWS_PER_SEVERITY = 10_000
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


def load_digits_images(image_size: int = 16) -> tuple[np.ndarray, np.ndarray]:
    """sklearn's 1797 digits as float32 images (N, image_size, image_size) in [0, 1], bilinear upsampling."""
    pixels, labels = load_sklearn_table("digits", dtype=np.float32)
    images = pixels.reshape(-1, 8, 8) / 16.0
    if image_size != 8:
        zoom = image_size / 8
        images = ndimage.zoom(images, (1, zoom, zoom), order=1, mode="nearest")
    return np.clip(images, 0.0, 1.0).astype(np.float32), labels.astype(np.int64)


def stratified_split(
    labels: np.ndarray, test_frac: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Sorted indices of a stratified train/test split: round(test_frac * n_c) test samples per class.

    Kept instead of ``sklearn.model_selection.train_test_split(stratify=)``, which is not the same
    split: at the default sizes (1797 digits, test_frac 0.45) it draws ceil(0.45 * 1797) = 809 test
    images (the extra one in class 4, by largest remainder) where per-class rounding gives 808, and
    with its own RandomState stream only 355 of our 808 test indices coincide. Switching would change
    the target set and so every default-run number.
    """
    rng = np.random.default_rng(seed)
    test = []
    for c in np.unique(labels):
        members = rng.permutation(np.flatnonzero(labels == c))
        test.append(members[: int(round(test_frac * len(members)))])
    test_idx = np.sort(np.concatenate(test))
    train_idx = np.setdiff1d(np.arange(len(labels)), test_idx)
    return train_idx, test_idx


@dataclass(frozen=True)
class CifarCFolder:
    """A user's CIFAR-10-C folder, as the catalog entry ``tca.cifar_c_folder`` loads it (lazily)."""

    root: str

    def manifest(
        self, corruptions: list[str], severities: list[int], max_per_domain: int | None, seed: int
    ) -> dict[str, dict[str, Any]]:
        """See :func:`domain_manifest`."""
        return domain_manifest(self.root, corruptions, severities, max_per_domain, seed)


class CifarCFolderDataset(AbstractDataset[None, CifarCFolder]):
    """Read-only catalog input for a CIFAR-10-C folder; loading lists nothing, it checks the folder.

    Example (conf/paper/catalog/tca.yml)::

        tca.cifar_c_folder:
          type: paper_pipelines.pipelines.tca.data.CifarCFolderDataset
          path: data/01_raw/tca/CIFAR-10-C
    """

    def __init__(self, path: str, metadata: dict[str, Any] | None = None) -> None:
        self._path = str(path)
        self.metadata = metadata

    def load(self) -> CifarCFolder:
        if not Path(self._path).is_dir():
            raise DatasetError(
                f"tca.cifar_c_folder: {self._path!r} is not a directory; point `path` of this entry "
                "in conf/paper/catalog/tca.yml at a CIFAR-10-C folder (layouts: docs/papers/tca.md)"
            )
        return CifarCFolder(self._path)

    def save(self, data: None) -> None:
        raise DatasetError("tca.cifar_c_folder is a read-only input (the user's CIFAR-10-C folder)")

    def _exists(self) -> bool:
        return Path(self._path).is_dir()

    def _describe(self) -> dict[str, Any]:
        return {"path": self._path}


def require_input(value: Any, entry: str, what: str) -> Any:
    """``value`` of a paper-scale catalog input, or an error saying how to supply it."""
    if value is None:
        raise ValueError(
            f"tca.real_data.enabled is true but the catalog entry {entry} supplies no {what}: run "
            f"with --env paper and set its path in conf/paper/catalog/tca.yml"
        )
    return value


def domain_manifest(
    data_dir: str,
    corruptions: list[str],
    severities: list[int],
    max_per_domain: int | None,
    seed: int,
) -> dict[str, dict[str, Any]]:
    """One entry per (corruption, severity): where its images are and which rows to use."""
    root = Path(data_dir)
    if not root.is_dir():
        raise FileNotFoundError(
            f"{data_dir!r} is not a directory; point tca.cifar_c_folder at a CIFAR-10-C folder"
        )
    manifest = {}
    for name in corruptions:
        for severity in severities:
            key = f"{name}@{severity}"
            npy = root / f"{name}.npy"
            folder = root / name
            if npy.is_file():
                entry = {"layout": "npy", "path": str(npy), "labels": str(root / "labels.npy")}
                start = (severity - 1) * CIFAR_C_ROWS_PER_SEVERITY
                rows = np.arange(start, start + CIFAR_C_ROWS_PER_SEVERITY)
            elif (folder / str(severity)).is_dir() or folder.is_dir():
                sub = folder / str(severity) if (folder / str(severity)).is_dir() else folder
                files, labels = _image_folder(sub)
                entry = {"layout": "folder", "files": files, "file_labels": labels}
                rows = np.arange(len(files))
            else:
                raise FileNotFoundError(
                    f"no data for corruption {name!r} in {data_dir}: expected {npy.name} or a folder "
                    f"{name}/ (see the tca docs for the accepted layouts)"
                )
            if max_per_domain is not None and len(rows) > max_per_domain:
                rng = np.random.default_rng([seed, severity, len(name)])
                rows = np.sort(rng.choice(rows, size=max_per_domain, replace=False))
            entry["rows"] = rows.tolist()
            manifest[key] = entry
    return manifest


def _image_folder(root: Path) -> tuple[list[str], list[int]]:
    classes = sorted(p.name for p in root.iterdir() if p.is_dir())
    if not classes:
        raise FileNotFoundError(f"{root} has no class sub-folders")
    files, labels = [], []
    for label, cls in enumerate(classes):
        for f in sorted((root / cls).iterdir()):
            if f.suffix.lower() in IMAGE_SUFFIXES:
                files.append(str(f))
                labels.append(label)
    return files, labels


def load_domain(entry: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """uint8 images (N, 3, H, W) and int64 labels of one manifest entry."""
    rows = np.asarray(entry["rows"], dtype=np.int64)
    if entry["layout"] == "npy":
        images = np.load(entry["path"], mmap_mode="r")[rows]
        labels = np.load(entry["labels"])[rows]
    else:
        images = np.stack([np.asarray(Image.open(entry["files"][i]).convert("RGB")) for i in rows])
        labels = np.asarray(entry["file_labels"])[rows]
    return np.ascontiguousarray(images.transpose(0, 3, 1, 2)), labels.astype(np.int64)
