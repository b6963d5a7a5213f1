"""les_molecules nodes: les's VAE, scores, baselines and optimiser on SELFIES molecules."""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.runtime import apply_runtime, substream

from .. import experiments
from .. import nodes as les_nodes
from .. import report as les_report
from ..vae import ExpressionVAE
from . import chem, report
from .parameters import (
    EvaluationParams,
    LSOParams,
    MoleculeDataParams,
    MoleculeVAEParams,
    OODParams,
    RuntimeParams,
    ScoreParams,
    Seed,
)

logger = logging.getLogger(__name__)


def build_vae(vae: MoleculeVAEParams, splits: dict[str, np.ndarray], state=None) -> ExpressionVAE:
    """les's GRU VAE sized to the SELFIES vocabulary and length of the split."""
    model = ExpressionVAE(
        vae.latent_dim,
        len(splits["vocab"]),
        splits["train_tokens"].shape[1],
        vae.hidden,
        vae.layers,
        vae.dropout,
        vae.eps_std,
        vae.conv_size,
    )
    if state is not None:
        model.load_state_dict(state, strict=True)
    return model.eval()


def evaluator(splits: dict[str, np.ndarray], data: MoleculeDataParams):
    return chem.evaluator([str(s) for s in splits["vocab"]], data.objective)


# ---------------------------------------------------------------- ingest
def load_molecules(
    smiles_input: pd.DataFrame | None, data: MoleculeDataParams, lso: LSOParams, seed: Seed
) -> pd.DataFrame:
    """The subsample of MOSES (or of the catalog's table) as SELFIES, with quality and objective."""
    n_train = int(data.n * (1 - data.test_frac))
    if lso.n_init > n_train:
        raise ValueError(
            f"les_molecules.lso.n_init = {lso.n_init} exceeds the {n_train} training molecules of "
            f"les_molecules.data.n = {data.n}; lower les_molecules.lso.n_init or raise data.n"
        )
    if data.source == "moses":
        smiles = chem.moses_smiles()
    else:
        smiles = chem.smiles_column(
            smiles_input,
            "les_molecules.data.source = catalog: the catalog entry les_molecules.smiles_input "
            "(see conf/base/catalog/les_molecules.yml)",
        )
    return chem.molecules_table(
        smiles, data.n, data.max_len, data.objective, substream(seed, "data")
    )


# ---------------------------------------------------------------- preprocess
def split_molecules(
    table: pd.DataFrame, data: MoleculeDataParams, seed: Seed
) -> dict[str, np.ndarray]:
    """SELFIES token ids, objectives and quality, train / test."""
    return chem.split(table, data.max_len, data.test_frac, substream(seed, "split"))


# ---------------------------------------------------------------- train
def fit_vae(
    splits: dict[str, np.ndarray], vae: MoleculeVAEParams, runtime: RuntimeParams, seed: Seed
) -> tuple[ExpressionVAE, dict[str, Any]]:
    """Train the GRU VAE on the SELFIES tokens (les's loop and seeding); its training curve."""
    device = apply_runtime(runtime)
    return les_nodes.trained_vae(lambda: build_vae(vae, splits), splits, vae, device, seed)


def score_latents(
    vae_model: dict[str, Any],
    splits: dict[str, np.ndarray],
    data: MoleculeDataParams,
    vae: MoleculeVAEParams,
    score: ScoreParams,
    ood: OODParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """les's OOD experiment with validity = a quality molecule (sanitises, no PAINS / Brenk alert)."""
    apply_runtime(runtime)
    model = build_vae(vae, splits, vae_model)
    return les_nodes.ood_experiment(
        model, splits["train_tokens"], score, ood, seed, evaluator(splits, data)
    )


def run_lso(
    vae_model: dict[str, Any],
    splits: dict[str, np.ndarray],
    data: MoleculeDataParams,
    vae: MoleculeVAEParams,
    score: ScoreParams,
    lso: LSOParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> pd.DataFrame:
    """les's optimisation runs from encoded quality training molecules, the objective as black box."""
    apply_runtime(runtime)
    model = build_vae(vae, splits, vae_model)
    good = splits["train_quality"] & np.isfinite(splits["train_objective"])
    if good.sum() < lso.n_init:
        raise ValueError(
            f"les_molecules.lso.n_init = {lso.n_init} exceeds the {int(good.sum())} quality "
            "training molecules; lower it or raise les_molecules.data.n"
        )
    return experiments.lso_runs(
        model, splits["train_tokens"][good], splits["train_objective"][good], lso, score, seed,
        evaluator(splits, data),
    )  # fmt: skip


# ---------------------------------------------------------------- evaluate
def summarise(
    auroc: pd.DataFrame,
    trajectories: pd.DataFrame,
    score_cost: dict[str, Any],
    training: dict[str, Any],
    splits: dict[str, np.ndarray],
    evaluation: EvaluationParams,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """les's metrics and results; a run without a valid molecule scores the data's worst objective."""
    worst = float(np.nanmin(splits["train_objective"]))
    runs = les_report.run_table(trajectories, evaluation.top_k, worst)
    metrics = les_report.build_metrics(auroc, runs, score_cost, training)
    metrics["data_quality_frac"] = float(splits["train_quality"].mean())
    return metrics, les_report.build_results(auroc, runs, score_cost)


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    return evaluate_claims(report.CLAIMS, metrics, "les_molecules")
