"""CausalLMDataset: a language model as a catalog entry (the shipped SmolLM2, or a folder a user supplies)."""

from __future__ import annotations

from typing import Any

from kedro.io import AbstractDataset, DatasetError

from paper_pipelines.common.lm import CausalLM, load_causal_lm


class CausalLMDataset(AbstractDataset[None, CausalLM]):
    """Read-only: ``load()`` returns a :class:`~paper_pipelines.common.lm.CausalLM` on the CPU.

    The node moves it to the run's device. At paper scale, conf/paper/catalog/<slug>.yml points the
    entry at a local Hugging Face folder::

        dlp.pretrained_lm:
          type: paper_pipelines.datasets.CausalLMDataset
          source: hf_folder
          path: /models/Llama-2-7b-hf
          dtype: float16
          device_map: auto     # optional: a model too large for one GPU, spread by accelerate
    """

    def __init__(
        self,
        *,
        source: str = "smollm2_wheel",
        path: str | None = None,
        dtype: str = "float32",
        device_map: str | dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        if source not in ("smollm2_wheel", "hf_folder", "tiny_random"):
            raise DatasetError(
                f"CausalLMDataset source must be smollm2_wheel, hf_folder or tiny_random, got {source!r}"
            )
        if source == "hf_folder" and not path:
            raise DatasetError("CausalLMDataset with source hf_folder needs path: the model folder")
        if device_map is not None and source != "hf_folder":
            raise DatasetError(
                f"CausalLMDataset device_map is only for source hf_folder (got {source!r}); drop it"
            )
        self._source, self._path, self._dtype = source, path, dtype
        self._device_map = device_map
        self.metadata = metadata

    def load(self) -> CausalLM:
        return load_causal_lm(self._source, self._path, self._dtype, "cpu", self._device_map)

    def save(self, data: None) -> None:
        raise DatasetError("CausalLMDataset is read-only: it names a model, it never writes one")

    def _exists(self) -> bool:
        if self._source != "hf_folder":
            return True
        from pathlib import Path

        return (Path(str(self._path)) / "config.json").is_file()

    def _describe(self) -> dict[str, Any]:
        return {
            "source": self._source,
            "path": self._path,
            "dtype": self._dtype,
            "device_map": self._device_map,
        }
