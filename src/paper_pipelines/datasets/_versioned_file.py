"""The file-system plumbing shared by the project's single-file versioned datasets."""

from __future__ import annotations

from pathlib import PurePosixPath
from typing import Any

import fsspec
from kedro.io.core import (
    AbstractVersionedDataset,
    DatasetError,
    Version,
    get_filepath_str,
    get_protocol_and_path,
)


class VersionedFileDataset(AbstractVersionedDataset[Any, Any]):
    """One versioned file on any fsspec file system; subclasses read and write its bytes."""

    def __init__(
        self,
        *,
        filepath: str,
        version: Version | None = None,
        credentials: dict[str, Any] | None = None,
        fs_args: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> None:
        protocol, path = get_protocol_and_path(filepath, version)
        self._protocol = protocol
        self._fs = fsspec.filesystem(protocol, **(credentials or {}), **(fs_args or {}))
        self.metadata = metadata
        super().__init__(
            filepath=PurePosixPath(path),
            version=version,
            exists_function=self._fs.exists,
            glob_function=self._fs.glob,
        )

    def _describe(self) -> dict[str, Any]:
        return {"filepath": self._filepath, "protocol": self._protocol, "version": self._version}

    def _read_bytes(self) -> tuple[str, bytes]:
        load_path = get_filepath_str(self._get_load_path(), self._protocol)
        with self._fs.open(load_path, "rb") as f:
            return load_path, f.read()

    def _write_bytes(self, payload: bytes) -> None:
        save_path = get_filepath_str(self._get_save_path(), self._protocol)
        self._fs.makedirs(str(PurePosixPath(save_path).parent), exist_ok=True)
        with self._fs.open(save_path, "wb") as f:
            f.write(payload)
        self._invalidate_cache()

    def _invalidate_cache(self) -> None:
        self._fs.invalidate_cache(get_filepath_str(self._filepath, self._protocol))

    def _exists(self) -> bool:
        try:
            load_path = get_filepath_str(self._get_load_path(), self._protocol)
        except DatasetError:
            return False
        return self._fs.exists(load_path)
