"""ClipFolderDataset: a CLIP dual encoder from a local Hugging Face folder, as a catalog entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kedro.io import AbstractDataset, DatasetError

DTYPES = ("float32", "float16", "bfloat16")


class ClipFolderDataset(AbstractDataset[None, dict[str, Any]]):
    """Read-only: ``load()`` returns ``{"model": CLIPModel, "tokenizer": CLIPTokenizer}`` on the CPU,
    in eval mode; the node moves the model to the run's device. Nothing is downloaded
    (``local_files_only``). Example (conf/paper/catalog/fedda.yml)::

        fedda.clip_model:
          type: paper_pipelines.datasets.ClipFolderDataset
          path: /models/clip-vit-base-patch16
          dtype: float16
    """

    def __init__(
        self, *, path: str, dtype: str = "float32", metadata: dict[str, Any] | None = None
    ) -> None:
        if not path:
            raise DatasetError("ClipFolderDataset needs path: a local CLIP folder (config.json)")
        if dtype not in DTYPES:
            raise DatasetError(f"ClipFolderDataset dtype must be one of {DTYPES}, got {dtype!r}")
        self._path, self._dtype = str(path), dtype
        self.metadata = metadata

    def load(self) -> dict[str, Any]:
        import torch
        from transformers import CLIPModel, CLIPTokenizer

        if not self._exists():
            raise DatasetError(
                f"ClipFolderDataset: no config.json under {self._path}; point the entry's path at a "
                "saved CLIP folder (CLIPModel.save_pretrained and the tokenizer's files)"
            )
        model = CLIPModel.from_pretrained(
            self._path, local_files_only=True, dtype=getattr(torch, self._dtype)
        )
        tokenizer = CLIPTokenizer.from_pretrained(self._path, local_files_only=True)
        return {"model": model.eval().requires_grad_(False), "tokenizer": tokenizer}

    def save(self, data: None) -> None:
        raise DatasetError("ClipFolderDataset is read-only: it names a model, it never writes one")

    def _exists(self) -> bool:
        return (Path(self._path) / "config.json").is_file()

    def _describe(self) -> dict[str, Any]:
        return {"path": self._path, "dtype": self._dtype}
