"""Parameter blocks of les_molecules (conf/*/parameters/les_molecules.yml).

The score, OOD, LSO and evaluation blocks are les's own models; the data block is new and the VAE
block is les's without the pretrained source (no released molecules GRU is wired here).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel

from ..parameters import (
    EvaluationParams,
    LSOParams,
    OODParams,
    RuntimeParams,
    ScoreParams,
    Seed,
    VAEParams,
)
from . import chem

__all__ = [
    "EvaluationParams",
    "LSOParams",
    "MoleculeDataParams",
    "MoleculeVAEParams",
    "OODParams",
    "RuntimeParams",
    "ScoreParams",
    "Seed",
]


class MoleculeDataParams(ParamsModel):
    """A random subsample of the MOSES training SMILES (or of the user's table in the catalog entry
    ``les_molecules.smiles_input``, a SMILES column), as SELFIES of at most ``max_len`` symbols; the
    objective of the LSO loop."""

    source: Literal["moses", "catalog"] = "moses"
    n: int = Field(20000, ge=50)
    max_len: int = Field(56, ge=2)
    test_frac: float = Field(0.2, gt=0, lt=1)
    objective: Literal["penalised_logp", "qed"] = "penalised_logp"

    @model_validator(mode="after")
    def _moses_is_installed(self) -> MoleculeDataParams:
        # checked with the parameters, so a missing file stops the run before anything is written
        # (a user's table is the catalog's: Kedro checks its file when it loads it, before the node)
        if self.source == "moses":
            try:
                chem.moses_path()
            except FileNotFoundError as exc:
                raise ValueError(str(exc)) from None
        return self


class MoleculeVAEParams(VAEParams):
    source: Literal["train"] = "train"
