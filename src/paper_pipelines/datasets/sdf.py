"""SDFDataset: the molecules of a local SDF file, read with RDKit, as a catalog entry."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pandas as pd
from kedro.io import AbstractDataset, DatasetError

logger = logging.getLogger(__name__)

FIX = "point the entry's filepath at an SDF file (MDL molfile records, each ending in $$$$)"
# the table's own columns; an SD property may not take their names
RESERVED = ("record", "molecule")


def read_sdf(path: str | Path, sanitize: bool = True) -> pd.DataFrame:
    """One row per molecule RDKit parses from the SDF file at ``path``: ``record`` (its position in the
    file, from 0), ``molecule`` (an RDKit Mol, hydrogens removed) and one string column per SD property
    (None where a record lacks it). Records RDKit cannot parse are skipped, and counted in the log."""
    from rdkit import Chem, RDLogger

    try:
        supplier = Chem.SDMolSupplier(str(path), sanitize=sanitize, removeHs=True)
    except OSError as exc:  # RDKit refuses an empty file before reading any record
        raise DatasetError(f"SDFDataset: RDKit cannot read {path} ({exc}); {FIX}") from None
    rows, skipped = [], 0
    RDLogger.DisableLog("rdApp.*")  # one summary line below instead of one warning per bad record
    try:
        for record, mol in enumerate(supplier):
            if mol is None:
                skipped += 1
                continue
            props = {name: mol.GetProp(name) for name in mol.GetPropNames()}
            clash = sorted(set(props) & set(RESERVED))
            if clash:
                raise DatasetError(
                    f"SDFDataset: record {record} of {path} has an SD property named {clash[0]!r}, "
                    f"a name the table uses itself ({', '.join(RESERVED)}); rename it in the file"
                )
            rows.append({"record": record, "molecule": mol, **props})
    finally:
        RDLogger.EnableLog("rdApp.*")
    if not rows:
        raise DatasetError(
            f"SDFDataset: RDKit parsed no molecule from {path} ({skipped} unreadable records); {FIX}"
        )
    if skipped:
        logger.warning("%s: skipped %d records RDKit could not parse", path, skipped)
    return pd.DataFrame(rows)


class SDFDataset(AbstractDataset[None, pd.DataFrame]):
    """Read-only: ``load()`` returns :func:`read_sdf`'s table of the file's molecules. A path that is
    not a file makes ``exists()`` false, so the project's input check refuses the run before any node.
    Example (conf/base/catalog/nego.yml)::

        nego.molecules_sdf:
          type: paper_pipelines.datasets.SDFDataset
          filepath: data/01_raw/nego/my_molecules.sdf
    """

    def __init__(
        self, *, filepath: str, sanitize: bool = True, metadata: dict[str, Any] | None = None
    ) -> None:
        if not filepath:
            raise DatasetError("SDFDataset needs filepath: a local .sdf file")
        self._filepath, self._sanitize = str(filepath), bool(sanitize)
        self.metadata = metadata

    def load(self) -> pd.DataFrame:
        if not self._exists():
            raise DatasetError(
                f"SDFDataset: no file at {self._filepath}; point the entry's filepath at an SDF file"
            )
        return read_sdf(self._filepath, self._sanitize)

    def save(self, data: None) -> None:
        raise DatasetError("SDFDataset is read-only: it names a user's molecules, it never writes")

    def _exists(self) -> bool:
        return Path(self._filepath).is_file()

    def _describe(self) -> dict[str, Any]:
        return {"filepath": self._filepath, "sanitize": self._sanitize}
