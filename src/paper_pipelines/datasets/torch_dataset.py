"""A versioned Kedro dataset for torch state dicts and tensor collections."""

from __future__ import annotations

from copy import deepcopy
from pathlib import PurePosixPath
from typing import Any

import fsspec
import torch
from kedro.io.core import (
    AbstractVersionedDataset,
    DatasetError,
    Version,
    get_filepath_str,
    get_protocol_and_path,
)


class TorchDataset(AbstractVersionedDataset[Any, dict[str, Any]]):
    """Saves an ``nn.Module``'s state dict, or any dict of tensors and plain values, with ``torch.save``.

    Loading uses ``weights_only=True``: only tensors and plain Python containers come back, never
    pickled code. A module is saved as its ``state_dict()``; rebuild the module and call
    ``load_state_dict`` on what ``load()`` returns.

    Example catalog entry::

        dlp.pruned_model:
          type: paper_pipelines.datasets.TorchDataset
          filepath: data/06_models/dlp/pruned_model.pt
          versioned: true
    """

    def __init__(
        self,
        *,
        filepath: str,
        version: Version | None = None,
        fs_args: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        protocol, path = get_protocol_and_path(filepath, version)
        self._protocol = protocol
        self._fs = fsspec.filesystem(protocol, **(fs_args or {}))
        self.metadata = metadata
        super().__init__(
            filepath=PurePosixPath(path),
            version=version,
            exists_function=self._fs.exists,
            glob_function=self._fs.glob,
        )

    def load(self) -> dict[str, Any]:
        load_path = get_filepath_str(self._get_load_path(), self._protocol)
        with self._fs.open(load_path, "rb") as f:
            return torch.load(f, map_location="cpu", weights_only=True)

    def save(self, data: Any) -> None:
        if isinstance(data, torch.nn.Module):
            data = data.state_dict()
        if not isinstance(data, dict):
            raise DatasetError(
                f"TorchDataset saves a torch.nn.Module or a dict of tensors, got {type(data).__name__}."
            )
        data = {k: v.detach().cpu() if torch.is_tensor(v) else deepcopy(v) for k, v in data.items()}
        save_path = get_filepath_str(self._get_save_path(), self._protocol)
        self._fs.makedirs(str(PurePosixPath(save_path).parent), exist_ok=True)
        with self._fs.open(save_path, "wb") as f:
            torch.save(data, f)
        self._invalidate_cache()

    def _exists(self) -> bool:
        try:
            load_path = get_filepath_str(self._get_load_path(), self._protocol)
        except DatasetError:
            return False
        return self._fs.exists(load_path)

    def _describe(self) -> dict[str, Any]:
        return {"filepath": self._filepath, "protocol": self._protocol, "version": self._version}

    def _invalidate_cache(self) -> None:
        self._fs.invalidate_cache(get_filepath_str(self._filepath, self._protocol))
