"""Molecules for les_molecules: the MOSES SMILES shipped in the molsets wheel, SELFIES tokens, the
objective (QED or penalised logP) and the quality check that plays the role of validity.

SELFIES always decode to some molecule, so validity is "quality" as the official SELFIES task uses it:
the molecule sanitises, has at least one atom, and matches none of RDKit's FilterCatalog PAINS A/B/C
and Brenk alerts (a stand-in for the rd_filters alert sets the official code uses).
"""

from __future__ import annotations

import importlib.util
import logging
import math
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from paper_pipelines.common.package_data import package_files
from paper_pipelines.common.progress import progress

logger = logging.getLogger(__name__)

PAD = "[nop]"  # SELFIES's no-operation symbol: ignored when decoding, so it pads for free
MOSES_FILE = "dataset/data/train.csv.gz"  # inside the moses package folder
INSTALL_HINT = "install it with `pip install --no-deps molsets==0.3.1` (make install does)"


def moses_path() -> Path:
    """The MOSES training SMILES file inside the installed molsets wheel, found without importing
    ``moses`` (its dependencies are not installed)."""
    (path,) = package_files(
        "moses",
        [MOSES_FILE],
        needed_by="les_molecules.data.source = moses",
        install_hint=INSTALL_HINT,
        distribution="molsets",
    )
    return path


def smiles_column(table: pd.DataFrame | None, where: str) -> pd.Series:
    """The ``SMILES`` column of a MOSES-style table; ``where`` names its origin for the error."""
    if table is None or "SMILES" not in getattr(table, "columns", ()):
        found = list(table.columns) if isinstance(table, pd.DataFrame) else type(table).__name__
        raise ValueError(f"{where} needs a table with a SMILES column (got: {found})")
    return table["SMILES"].astype(str)


def moses_smiles() -> pd.Series:
    """The 1,584,663 MOSES training SMILES shipped inside the molsets wheel (package data, like
    sklearn's bundled datasets: not a catalog entry)."""
    path = moses_path()
    return smiles_column(pd.read_csv(path), str(path))


def to_selfies(smiles: list[str]) -> list[str | None]:
    """SELFIES of each SMILES (None where the encoder refuses it)."""
    import selfies as sf

    out: list[str | None] = []
    for s in smiles:
        try:
            out.append(sf.encoder(s))
        except sf.EncoderError:
            out.append(None)
    return out


def symbols(selfies: str) -> list[str]:
    import selfies as sf

    return list(sf.split_selfies(selfies))


def vocabulary(strings: list[str]) -> list[str]:
    """The pad symbol first, then every symbol of the data in sorted order."""
    seen = sorted({s for text in strings for s in symbols(text)} - {PAD})
    return [PAD, *seen]


def tokenize(strings: list[str], vocab: list[str], length: int) -> np.ndarray:
    """Symbol ids padded with [nop] to ``length``; a symbol outside ``vocab`` or a longer string is
    an error naming it."""
    index = {s: i for i, s in enumerate(vocab)}
    out = np.zeros((len(strings), length), dtype=np.int64)
    for row, text in enumerate(strings):
        parts = symbols(text)
        if len(parts) > length:
            raise ValueError(f"SELFIES {text!r} has {len(parts)} symbols, more than {length}")
        for col, symbol in enumerate(parts):
            if symbol not in index:
                raise ValueError(f"symbol {symbol!r} of {text!r} is not in the vocabulary")
            out[row, col] = index[symbol]
    return out


def detokenize(row: np.ndarray, vocab: list[str]) -> str:
    """The SELFIES string of a row of ids (pads dropped)."""
    return "".join(vocab[i] for i in row if vocab[i] != PAD)


def to_smiles(selfies: str) -> str:
    """The SMILES the SELFIES decodes to ("" when it decodes to nothing)."""
    import selfies as sf

    try:
        return sf.decoder(selfies) or ""
    except sf.DecoderError:
        return ""


@lru_cache(maxsize=1)
def _alerts():
    from rdkit.Chem import FilterCatalog

    params = FilterCatalog.FilterCatalogParams()
    for catalog in ("PAINS_A", "PAINS_B", "PAINS_C", "BRENK"):
        params.AddCatalog(getattr(FilterCatalog.FilterCatalogParams.FilterCatalogs, catalog))
    return FilterCatalog.FilterCatalog(params)


def molecule(smiles: str):
    """The sanitised RDKit molecule, or None (unparsable, not sanitisable, or no atoms)."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog(
        "rdApp.*"
    )  # unparsable candidates are expected; they are counted, not logged
    mol = Chem.MolFromSmiles(smiles) if smiles else None
    return mol if mol is not None and mol.GetNumAtoms() > 0 else None


def is_quality(smiles: str) -> bool:
    """Sanitises, has atoms, and matches no PAINS A/B/C or Brenk alert."""
    mol = molecule(smiles)
    return mol is not None and not _alerts().HasMatch(mol)


@lru_cache(maxsize=1)
def _sascorer():
    """RDKit's own Contrib SA_Score module (it reads the shipped fpscores.pkl.gz)."""
    from rdkit.Chem import RDConfig

    path = Path(RDConfig.RDContribDir) / "SA_Score" / "sascorer.py"
    if not path.is_file():
        raise FileNotFoundError(f"RDKit's SA_Score module is missing ({path}); reinstall rdkit")
    spec = importlib.util.spec_from_file_location("rdkit_contrib_sascorer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ring_penalty(mol) -> int:
    """Atoms beyond 6 in the largest ring (0 without rings larger than 6)."""
    sizes = [len(ring) for ring in mol.GetRingInfo().AtomRings()]
    return max(0, max(sizes, default=0) - 6)


def penalised_logp(mol) -> float:
    """Crippen logP - SA score - ring penalty (unstandardised)."""
    from rdkit.Chem import Crippen

    return float(Crippen.MolLogP(mol) - _sascorer().calculateScore(mol) - ring_penalty(mol))


def qed(mol) -> float:
    from rdkit.Chem import QED

    return float(QED.qed(mol))


OBJECTIVES = {"qed": qed, "penalised_logp": penalised_logp}


def objective(smiles: str, name: str) -> float:
    """The objective of a molecule; NaN when it does not sanitise."""
    mol = molecule(smiles)
    return OBJECTIVES[name](mol) if mol is not None else math.nan


def evaluator(vocab: list[str], name: str):
    """tokens -> (SMILES, quality, objective or NaN): the black box of the LSO loop."""

    def evaluate(row: np.ndarray) -> tuple[str, bool, float]:
        smiles = to_smiles(detokenize(row, vocab))
        good = is_quality(smiles)
        return smiles, good, objective(smiles, name) if good else math.nan

    return evaluate


def molecules_table(
    smiles: pd.Series, n: int, max_len: int, objective_name: str, rng: np.random.Generator
) -> pd.DataFrame:
    """``n`` distinct molecules drawn at random whose SELFIES have at most ``max_len`` symbols, with
    their quality and objective (NaN where RDKit cannot sanitise)."""
    order = rng.permutation(len(smiles))
    rows: list[dict] = []
    seen: set[str] = set()
    for start in range(0, len(order), max(n, 1)):
        chunk = smiles.iloc[order[start : start + n]].tolist()
        for s, text in zip(chunk, to_selfies(chunk), strict=True):
            if text is None or text in seen or not 0 < len(symbols(text)) <= max_len:
                continue
            seen.add(text)
            rows.append({"smiles": s, "selfies": text, "length": len(symbols(text))})
            if len(rows) == n:
                break
        if len(rows) == n:
            break
    if len(rows) < n:
        raise ValueError(
            f"only {len(rows)} molecules have SELFIES of at most {max_len} symbols, fewer than "
            f"les_molecules.data.n = {n}; lower n or raise max_len"
        )
    table = pd.DataFrame(rows)
    quality, values = [], []
    chunks = range(0, len(table), 1000)
    for start in progress(chunks, "les_molecules: quality and objective", total=len(chunks),
                          logger=logger):  # fmt: skip
        for s in table["smiles"].iloc[start : start + 1000]:
            quality.append(is_quality(s))
            values.append(objective(s, objective_name))
    table["quality"], table["objective"] = quality, values
    return table


def split(
    table: pd.DataFrame, max_len: int, test_frac: float, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Token ids (vocabulary from all the molecules, [nop] first), objectives and quality of a random
    train / test split."""
    order = rng.permutation(len(table))
    n_test = max(1, int(round(test_frac * len(table))))
    test, train = order[:n_test], order[n_test:]
    vocab = vocabulary(list(table["selfies"]))
    tokens = tokenize(list(table["selfies"]), vocab, max_len)
    y = table["objective"].to_numpy(dtype=np.float64)
    quality = table["quality"].to_numpy(dtype=bool)
    return {
        "vocab": np.array(vocab),
        "train_index": train,
        "test_index": test,
        "train_tokens": tokens[train],
        "test_tokens": tokens[test],
        "train_objective": y[train],
        "test_objective": y[test],
        "train_quality": quality[train],
    }
