"""Read-only catalog entries for user-supplied vision data and backbones: CIFAR-100 (python version) from a
local folder, and a ResNet checkpoint (a transformers folder or a torchvision-layout state-dict file)."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
from kedro.io import AbstractDataset, DatasetError

# The only globals a CIFAR python-version pickle needs: numpy's array reconstruction (its ``data`` entry)
# and, in protocol-2 files written by Python 3, the codec call that rebuilds a bytes object.
_CIFAR_GLOBALS = {
    ("_codecs", "encode"),
    ("numpy.core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"),
    ("numpy", "ndarray"),
    ("numpy", "dtype"),
}


class _CifarUnpickler(pickle.Unpickler):
    """Refuses every global outside numpy's array reconstruction: a file in the user's folder that is
    not a CIFAR batch cannot run code on load."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in _CIFAR_GLOBALS:
            return super().find_class(module, name)
        raise DatasetError(f"CifarFolderDataset: a CIFAR pickle may not name {module}.{name}")


def _read_batch(path: Path) -> dict[str, Any]:
    with path.open("rb") as f:
        raw = _CifarUnpickler(f, encoding="bytes").load()
    return {(k.decode() if isinstance(k, bytes) else k): v for k, v in raw.items()}


class CifarFolderDataset(AbstractDataset[None, dict[str, Any]]):
    """CIFAR-100's python version (``cifar-100-python/{train,test,meta}``, the archive from the CIFAR
    page, unpacked). ``load()`` returns ``{"train": {"images", "labels"}, "test": {...}, "classes"}``:
    images uint8 (N, 3, 32, 32) RGB, labels int64 (the fine labels). ``path`` is the folder holding
    ``cifar-100-python`` or that folder itself. Example (conf/paper/catalog/disc.yml)::

        disc.cifar100:
          type: paper_pipelines.datasets.CifarFolderDataset
          path: /data/cifar-100-python
    """

    def __init__(self, *, path: str, metadata: dict[str, Any] | None = None) -> None:
        if not path:
            raise DatasetError("CifarFolderDataset needs path: a local cifar-100-python folder")
        self._path = str(path)
        self.metadata = metadata

    def _folder(self) -> Path:
        root = Path(self._path)
        return root / "cifar-100-python" if (root / "cifar-100-python").is_dir() else root

    def load(self) -> dict[str, Any]:
        folder = self._folder()
        if not self._exists():
            raise DatasetError(
                f"CifarFolderDataset: no train, test and meta files under {folder}; point the entry's "
                "path at the unpacked cifar-100-python folder"
            )
        out: dict[str, Any] = {}
        for split in ("train", "test"):
            batch = _read_batch(folder / split)
            data = np.asarray(batch["data"], dtype=np.uint8)
            if data.ndim != 2 or data.shape[1] != 3 * 32 * 32:
                raise DatasetError(
                    f"CifarFolderDataset: {folder / split} data has shape {data.shape}, expected (N, 3072)"
                )
            labels = np.asarray(batch["fine_labels"], dtype=np.int64)
            if len(labels) != len(data):
                raise DatasetError(
                    f"CifarFolderDataset: {folder / split} has {len(data)} images, {len(labels)} labels"
                )
            out[split] = {"images": data.reshape(-1, 3, 32, 32), "labels": labels}
        names = _read_batch(folder / "meta")["fine_label_names"]
        out["classes"] = [n.decode() if isinstance(n, bytes) else str(n) for n in names]
        return out

    def save(self, data: None) -> None:
        raise DatasetError("CifarFolderDataset is read-only: it names a user's folder")

    def _exists(self) -> bool:
        folder = self._folder()
        return all((folder / name).is_file() for name in ("train", "test", "meta"))

    def _describe(self) -> dict[str, Any]:
        return {"path": self._path}


class ResNetCheckpointDataset(AbstractDataset[None, dict[str, Any]]):
    """A ResNet backbone: a transformers folder (``config.json``; ``ResNetModel.from_pretrained``, local
    only) -> ``{"model": ResNetModel}``, or a ``torch.save`` file in torchvision layout (also mmcls /
    INTERN / mmdet checkpoints, backbone under ``backbone.``) read with ``weights_only`` on the CPU ->
    ``{"state_dict": {...}}``. Nothing is downloaded. Example (conf/paper/catalog/disc.yml)::

        disc.cls_checkpoint:
          type: paper_pipelines.datasets.ResNetCheckpointDataset
          path: /models/intern_r50_up_e_c.pth
    """

    def __init__(self, *, path: str, metadata: dict[str, Any] | None = None) -> None:
        if not path:
            raise DatasetError(
                "ResNetCheckpointDataset needs path: a local folder or checkpoint file"
            )
        self._path = str(path)
        self.metadata = metadata

    def load(self) -> dict[str, Any]:
        import torch

        path = Path(self._path)
        if (path / "config.json").is_file():
            from transformers import ResNetModel

            model = ResNetModel.from_pretrained(path, local_files_only=True)
            return {"model": model.eval(), "path": self._path}
        if path.is_file():
            state = torch.load(path, map_location="cpu", weights_only=True)
            if not isinstance(state, dict):
                raise DatasetError(f"ResNetCheckpointDataset: {path} holds no state dict")
            return {"state_dict": state, "path": self._path}
        raise DatasetError(
            f"ResNetCheckpointDataset: {path} is neither a transformers folder (config.json) nor a "
            "checkpoint file; point the entry's path at your local copy"
        )

    def save(self, data: None) -> None:
        raise DatasetError("ResNetCheckpointDataset is read-only: it names a checkpoint")

    def _exists(self) -> bool:
        path = Path(self._path)
        return (path / "config.json").is_file() or path.is_file()

    def _describe(self) -> dict[str, Any]:
        return {"path": self._path}
