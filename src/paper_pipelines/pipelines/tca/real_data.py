"""Paper-scale target domains read from a user-supplied CIFAR-10-C directory (no download, no torchvision).

Two layouts are accepted:
- the Hendrycks release: ``<dir>/<corruption>.npy`` (5 x 10000 images, severity-major, HWC uint8) and
  ``<dir>/labels.npy``;
- an image-folder tree as the official TCA scripts read it: ``<dir>/<corruption>/<severity>/<class>/*``
  or, for a single severity, ``<dir>/<corruption>/<class>/*`` (classes in sorted order).
The manifest stores paths and row ranges only; images are read when a domain is adapted.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

CIFAR_C_ROWS_PER_SEVERITY = 10_000
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


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
            f"real_data.data_dir={data_dir!r} is not a directory; point it at a CIFAR-10-C folder"
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
