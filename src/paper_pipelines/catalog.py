"""The project's DataCatalog: versioned saves are atomic, and a damaged version says which and what to do.

Kedro loads the newest version folder that holds the dataset's file. A run killed while writing would
otherwise leave a half-written (often 0-byte) file there, which then becomes "latest" for every later
run and for kedro-viz. Here every save of a versioned dataset on the local filesystem goes to a hidden
temporary name in the same version folder and is renamed into place (an atomic rename on POSIX), so the
folder holds the whole file or no file at all, and a killed save is simply not a version. It is one
class set as ``DATA_CATALOG_CLASS``, so every runner (sequential, parallel, Dask workers, an Airflow
task) and every dataset type (the project's and kedro-datasets') gets it.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path, PurePosixPath
from typing import Any

from kedro.io import AbstractVersionedDataset, DataCatalog, DatasetError
from kedro.io.core import get_filepath_str

PARTIAL = ".partial"


def _local_versioned(dataset: Any) -> bool:
    return (
        isinstance(dataset, AbstractVersionedDataset)
        and getattr(dataset, "_version", None) is not None
        and getattr(dataset, "_protocol", "file") in ("file", None)
    )


def _remove(path: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path, ignore_errors=True)
    elif path.exists():
        path.unlink(missing_ok=True)


def available_versions(dataset: Any) -> list[str]:
    """Versions of a local versioned dataset that hold its file, oldest first."""
    folder = Path(get_filepath_str(dataset._filepath, "file"))
    if not folder.is_dir():
        return []
    return sorted(p.parent.name for p in folder.glob(f"*/{folder.name}") if p.exists())


def partial_path(final: Path) -> Path:
    """Where a save is written before it is renamed into place (hidden, beside the final file)."""
    return final.with_name(f".{final.name}{PARTIAL}-{os.getpid()}")


class AtomicDataCatalog(DataCatalog):
    """DataCatalog whose versioned local saves are write-then-rename, and whose load errors name the version."""

    def save(self, ds_name: str, data: Any) -> None:
        dataset = self.get(ds_name)
        if dataset is None or not _local_versioned(dataset):
            return super().save(ds_name, data)
        # Raises Kedro's own "must not exist" error for an existing version, before anything is written.
        final = Path(get_filepath_str(dataset._get_save_path(), "file"))
        temporary = partial_path(final)
        save_version = dataset.resolve_save_version()
        # While the file sits under its temporary name the dataset writes there, and Kedro's
        # after-save comparison of save and load versions must not look for the final file yet.
        dataset._get_save_path = lambda: PurePosixPath(temporary)
        dataset.resolve_load_version = lambda: save_version
        try:
            super().save(ds_name, data)
            os.replace(temporary, final)
        except BaseException:
            _remove(temporary)
            raise
        finally:
            del dataset._get_save_path, dataset.resolve_load_version  # the class methods again
            dataset._clear_version_cache()

    def load(self, ds_name: str, version: str | None = None) -> Any:
        try:
            return super().load(ds_name, version)
        except DatasetError as exc:
            dataset = self.get(ds_name)
            if dataset is None or not _local_versioned(dataset) or "not supported" in str(exc):
                raise
            raise DatasetError(self._load_failure(ds_name, dataset, version, exc)) from exc

    @staticmethod
    def _load_failure(ds_name: str, dataset: Any, version: str | None, exc: Exception) -> str:
        folder = Path(get_filepath_str(dataset._filepath, "file"))
        name = folder.name
        available = available_versions(dataset)
        if version is None:
            try:
                version = dataset.resolve_load_version()
            except Exception:
                version = None
        cause = str(exc).splitlines()[-1] if str(exc) else type(exc).__name__
        if version and version not in available:
            return (
                f"{ds_name}: version {version} does not exist in {folder} (versions there: "
                f"{', '.join(available[-5:]) or 'none'}). Pin one of those with "
                f"--load-versions={ds_name}:<version>, or run the nodes that produce it "
                f"(kedro run --pipeline={ds_name.split('.')[0]})."
            )
        file = folder / (version or "?") / name
        older = [v for v in available if version is None or v < version]
        hint = (
            f"--load-versions={ds_name}:{older[-1]} loads the previous version"
            if older
            else "no earlier version exists"
        )
        return (
            f"{ds_name}: could not read version {version} ({file}): {cause}. The file is damaged or "
            f"was written by an incompatible version of its library. Move that version folder aside "
            f"(mv {file.parent} {folder}/.damaged-{version}) so that the previous one becomes latest "
            f"({hint}), or re-run the nodes that produce it."
        )
