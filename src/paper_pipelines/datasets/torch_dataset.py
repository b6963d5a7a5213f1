"""TorchDataset: kedro-datasets' PyTorchDataset that also takes plain dicts of tensors."""

from __future__ import annotations

from copy import deepcopy
from typing import Any

import torch
from kedro.io.core import DatasetError, get_filepath_str
from kedro_datasets_experimental.pytorch import PyTorchDataset


class TorchDataset(PyTorchDataset):
    """Versioned ``torch.save`` files: an ``nn.Module`` (saved as its state dict) or a dict of tensors.

    kedro-datasets' ``PyTorchDataset`` does the file system, versioning and the ``weights_only`` load;
    it only accepts modules, while several papers save tensor collections (calibration windows, packed
    masks), hence this thin subclass. Loads map to the CPU, so a run on a GPU reloads on a laptop.

    Example catalog entry::

        dlp.pruning_masks:
          type: paper_pipelines.datasets.TorchDataset
          filepath: data/06_models/dlp/pruning_masks.pt
          versioned: true
    """

    DEFAULT_LOAD_ARGS: dict[str, Any] = {"weights_only": True, "map_location": "cpu"}

    def save(self, data: Any) -> None:
        if isinstance(data, torch.nn.Module):
            data = data.state_dict()
        if not isinstance(data, dict):
            raise DatasetError(
                f"TorchDataset saves a torch.nn.Module or a dict of tensors, got {type(data).__name__}."
            )
        data = {k: v.detach().cpu() if torch.is_tensor(v) else deepcopy(v) for k, v in data.items()}
        save_path = get_filepath_str(self._get_save_path(), self._protocol)
        with self._fs.open(save_path, **self._fs_open_args_save) as f:
            torch.save(data, f, **self._save_args)
        self._invalidate_cache()
