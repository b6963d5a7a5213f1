"""The metrics contract, the claims, the metrics dict and the results table (one row per score / penalty)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.claims import Claim
from paper_pipelines.common.reporting import check_metrics_contract, results_table

from . import metrics as measures
from .objective import WORST

# The headline numbers every run writes to les.metrics (the metrics contract).
METRICS: tuple[str, ...] = (
    "auroc_les",
    "auroc_prior",
    "auroc_polarity",
    "auroc_likelihood",
    "valid_frac_les",
    "valid_frac_none",
    "best_valid_objective_les_minus_none",
)

# The paper's Table 1 / LSO table cells could not be retrieved (spec: only the abstract was
# readable), so the numbers beside ours are the spec's anchor: the same OOD experiment measured on
# the official pretrained expressions GRU VAE (beta = 1, eval mode, float64).
ANCHOR = (
    "spec anchor: official pretrained expressions GRU VAE (OmerRonen/les trained_models/"
    "expressions_gru_1), 300 latents per group, eval mode; the paper's Table 1 cells were not retrievable"
)
CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="les_detects_invalid",
        statement="LES (eval mode) predicts the validity of the argmax decoding with AUROC >= 0.75 "
        "over encoded, prior and far latents (spec check 2).",
        condition="auroc_les >= 0.75",
        paper={"auroc_les": 0.88},
        source=ANCHOR,
    ),
    Claim(
        id="les_beats_prior",
        statement="LES beats the prior's -||z||^2 by at least 0.15 AUROC (spec check 2).",
        condition="auroc_les >= auroc_prior + 0.15",
        paper={"auroc_les": 0.88, "auroc_prior": 0.52},
        source=ANCHOR,
    ),
    Claim(
        id="les_beats_polarity",
        statement="LES beats the polarity volume score by at least 0.10 AUROC (spec check 2).",
        condition="auroc_les >= auroc_polarity + 0.10",
        paper={"auroc_les": 0.88, "auroc_polarity": 0.60},
        source=ANCHOR,
    ),
    Claim(
        id="les_beats_train_distance",
        statement="LES beats the distance to the 3 nearest encoded training points.",
        condition="auroc_les > auroc_train_distance",
        paper={"auroc_les": 0.88, "auroc_train_distance": 0.60},
        source=ANCHOR,
        gates=False,
    ),
    Claim(
        id="likelihood_close_competitor",
        statement="The cheap Likelihood score is within 0.05 AUROC of LES (a reviewer's remark; the "
        "anchor found it 0.015 above LES).",
        condition="abs(auroc_likelihood - auroc_les) <= 0.05",
        paper={"auroc_les": 0.88, "auroc_likelihood": 0.895},
        source=ANCHOR,
        gates=False,
    ),
    Claim(
        id="les_raises_valid_fraction",
        statement="Adding LES to gradient-ascent LSO raises the valid fraction by >= 10 points over "
        "no penalty (spec check 3; not gated: the spec never ran it).",
        condition="valid_frac_les >= valid_frac_none + 0.10",
        source="abstract: 'LES always enhances the quality of the solutions' (5 tasks, 22 VAEs)",
        gates=False,
    ),
    Claim(
        id="les_keeps_objective",
        statement="...while the best valid objective drops by at most 0.5 (spec check 3, not gated).",
        condition="best_valid_objective_les_minus_none >= -0.5",
        source="abstract: 'while maintaining high objective values'",
        gates=False,
    ),
)

# The figure the scoreboard shows for this paper.
HEADLINE_FIGURE = "auroc_plot"

GROUPS = ("data", "prior", "far")


def curve_dict(curve) -> dict[str, Any]:
    """The VAE's training curve as JSON."""
    return {
        "recon": [float(v) for v in curve.recon],
        "kl": [float(v) for v in curve.kl],
        "test_token_accuracy": curve.test_token_accuracy,
        "test_sequence_accuracy": curve.test_sequence_accuracy,
    }


def score_columns(ood_scores: pd.DataFrame) -> list[str]:
    return [c for c in ood_scores.columns if c not in ("group", "valid")]


def auroc_table(ood_scores: pd.DataFrame) -> pd.DataFrame:
    """One row per score: AUROC over all latents and within each group, and the groups' valid fractions."""
    rows = []
    for score in score_columns(ood_scores):
        row: dict[str, Any] = {
            "score": score,
            "auroc": measures.validity_auroc(ood_scores["valid"], ood_scores[score]),
        }
        for group in GROUPS:
            part = ood_scores[ood_scores["group"] == group]
            row[f"auroc_{group}"] = measures.validity_auroc(part["valid"], part[score])
            row[f"valid_frac_{group}"] = float(part["valid"].mean())
        rows.append(row)
    return pd.DataFrame(rows)


def run_table(trajectories: pd.DataFrame, top_k: int, worst: float = WORST) -> pd.DataFrame:
    """One row per optimisation run (method, replicate): valid fraction, best and top-k valid objective.

    A run without a valid solution scores ``worst`` (the objective's floor)."""
    rows = []
    for (method, replicate), run in trajectories.groupby(["method", "replicate"], sort=False):
        summary = measures.run_summary(run, worst)
        summary["top10"] = (
            measures.top_k_mean(
                run[run["valid"]].drop_duplicates("expression")["objective"].to_numpy(), top_k
            )
            if run["valid"].any()
            else worst
        )
        rows.append({"method": method, "replicate": int(replicate), **summary})
    return pd.DataFrame(rows)


def build_results(
    auroc: pd.DataFrame, runs: pd.DataFrame, score_cost: dict[str, Any]
) -> pd.DataFrame:
    """One row per score or penalty: AUROC, seconds per latent, and LSO means / spreads over replicates."""
    by_score = auroc.set_index("score")
    methods = list(dict.fromkeys([*runs["method"], *by_score.index]))
    seconds = score_cost.get("seconds_per_latent", {})
    rows = []
    for method in methods:
        row: dict[str, Any] = {"method": method}
        row["auroc"] = float(by_score.loc[method, "auroc"]) if method in by_score.index else np.nan
        row["seconds_per_latent"] = float(seconds.get(method, np.nan))
        mine = runs[runs["method"] == method]
        for key in ("valid_frac", "best", "top10"):
            values = mine[key].to_numpy(dtype=float)
            row[f"{key}_mean"] = float(values.mean()) if len(values) else np.nan
            row[f"{key}_std"] = float(values.std()) if len(values) else np.nan
        rows.append(row)
    return results_table(rows)


def paired_difference(runs: pd.DataFrame, key: str, a: str, b: str) -> np.ndarray:
    """Per-replicate ``key`` of method a minus method b."""
    left = runs[runs["method"] == a].set_index("replicate")[key]
    right = runs[runs["method"] == b].set_index("replicate")[key]
    return (left - right.reindex(left.index)).to_numpy(dtype=float)


def build_metrics(
    auroc: pd.DataFrame, runs: pd.DataFrame, score_cost: dict[str, Any], training: dict[str, Any]
) -> dict[str, Any]:
    """The metrics contract plus the other scores, spreads over replicates, costs and the VAE's fit."""
    by_score = auroc.set_index("score")
    values: dict[str, Any] = {f"auroc_{s}": float(by_score.loc[s, "auroc"]) for s in by_score.index}
    for group in GROUPS:
        values[f"ood_valid_frac_{group}"] = float(auroc[f"valid_frac_{group}"].iloc[0])
    for method, mine in runs.groupby("method", sort=False):
        values[f"valid_frac_{method}"] = float(mine["valid_frac"].mean())
        values[f"best_valid_objective_{method}"] = float(mine["best"].mean())
    gap = paired_difference(runs, "best", "les", "none")
    valid_gap = paired_difference(runs, "valid_frac", "les", "none")
    values["best_valid_objective_les_minus_none"] = float(gap.mean())
    values["best_valid_objective_les_minus_none_std"] = float(gap.std())
    values["valid_frac_les_minus_none_std"] = float(valid_gap.std())
    values["n_replicates"] = int(runs["replicate"].nunique())
    for name, sec in score_cost.get("seconds_per_latent", {}).items():
        values[f"seconds_per_latent_{name}"] = float(sec)
    values["singular_G_ood"] = int(score_cost.get("singular", {}).get("les", 0))
    if "test_token_accuracy" in training:
        values["vae_test_token_accuracy"] = float(training["test_token_accuracy"])
        values["vae_test_sequence_accuracy"] = float(training["test_sequence_accuracy"])
    return check_metrics_contract(values, METRICS, "les")
