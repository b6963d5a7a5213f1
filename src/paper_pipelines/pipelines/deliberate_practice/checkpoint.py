"""Catalog datasets for what a user supplies at paper scale (read-only), with offline defaults.

- :class:`RealImagesDataset`: the real images. ``source: sklearn_digits`` (default, shipped with
  scikit-learn) or ``source: folder`` (an ImageNet-100-style ``<class>/<image>`` folder).
- :class:`DiffusionCheckpointDataset`: the generator. ``source: train_in_pipeline`` (default: the DDPM
  is trained by the pipeline, ``load()`` returns None) or ``source: diffusers_folder`` (a local
  Stable-Diffusion-1.5-class folder with model_index.json; loaded offline, never downloaded).

A folder that is not there makes ``exists()`` false, so the project's input check stops the run
before any node writes (paper_pipelines.hooks.InputCheckHooks).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from kedro.io import AbstractDataset, DatasetError

IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".JPEG", ".bmp")


class RealImagesDataset(AbstractDataset[None, dict]):
    """``load()`` -> {"x": (N, C, H, W) float32 in [-1, 1], "y": int64, "class_names": list[str]}."""

    def __init__(
        self,
        *,
        source: str = "sklearn_digits",
        path: str | None = None,
        image_size: int = 224,
        max_per_class: int | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if source not in ("sklearn_digits", "folder"):
            raise DatasetError(
                f"RealImagesDataset source must be sklearn_digits or folder, got {source!r}"
            )
        if source == "folder" and not path:
            raise DatasetError("RealImagesDataset with source folder needs path: the image folder")
        self._source, self._path = source, path
        self._size, self._max = image_size, max_per_class
        self.metadata = metadata

    def load(self) -> dict:
        if self._source == "sklearn_digits":
            from .data import digits_images

            x, y, names = digits_images(8)
            return {"x": x, "y": y, "class_names": names}
        return load_image_folder(Path(str(self._path)), self._size, self._max)

    def save(self, data: None) -> None:
        raise DatasetError("RealImagesDataset is read-only: it names real images, it never writes")

    def _exists(self) -> bool:
        return self._source == "sklearn_digits" or Path(str(self._path)).is_dir()

    def _describe(self) -> dict[str, Any]:
        return {"source": self._source, "path": self._path, "image_size": self._size}


def load_image_folder(root: Path, size: int, max_per_class: int | None) -> dict:
    """Every ``root/<class>/<image>`` resized to size x size RGB, in [-1, 1]; classes sorted by name."""
    from PIL import Image

    classes = sorted(p.name for p in root.iterdir() if p.is_dir())
    if not classes:
        raise DatasetError(f"no class folders under {root}: expected {root}/<class>/<image>")
    images, labels = [], []
    for index, name in enumerate(classes):
        files = sorted(p for p in (root / name).iterdir() if p.suffix in IMAGE_SUFFIXES)
        for file in files[:max_per_class]:
            with Image.open(file) as image:
                rgb = image.convert("RGB").resize((size, size), Image.BICUBIC)
            images.append(np.asarray(rgb, dtype=np.uint8).transpose(2, 0, 1))
            labels.append(index)
    x = np.stack(images).astype(np.float32) / 127.5 - 1.0
    return {"x": x, "y": np.asarray(labels, dtype=np.int64), "class_names": classes}


class DiffusionCheckpointDataset(AbstractDataset[None, Any]):
    """``load()`` -> None (train in the pipeline) or a dict of diffusers / transformers components."""

    def __init__(
        self,
        *,
        source: str = "train_in_pipeline",
        path: str | None = None,
        dtype: str = "float16",
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if source not in ("train_in_pipeline", "diffusers_folder"):
            raise DatasetError(
                "DiffusionCheckpointDataset source must be train_in_pipeline or diffusers_folder, "
                f"got {source!r}"
            )
        if source == "diffusers_folder" and not path:
            raise DatasetError(
                "DiffusionCheckpointDataset with source diffusers_folder needs path: the model folder"
            )
        self._source, self._path, self._dtype = source, path, dtype
        self.metadata = metadata

    def load(self) -> Any:
        if self._source == "train_in_pipeline":
            return None
        import torch
        from diffusers import StableDiffusionPipeline

        pipe = StableDiffusionPipeline.from_pretrained(
            str(self._path),
            torch_dtype=getattr(torch, self._dtype),
            local_files_only=True,
            safety_checker=None,
        )
        return {
            "unet": pipe.unet,
            "vae": pipe.vae,
            "text_encoder": pipe.text_encoder,
            "tokenizer": pipe.tokenizer,
            "scheduler_config": dict(pipe.scheduler.config),
        }

    def save(self, data: None) -> None:
        raise DatasetError("DiffusionCheckpointDataset is read-only: it names a model folder")

    def _exists(self) -> bool:
        if self._source == "train_in_pipeline":
            return True
        return (Path(str(self._path)) / "model_index.json").is_file()

    def _describe(self) -> dict[str, Any]:
        return {"source": self._source, "path": self._path, "dtype": self._dtype}
