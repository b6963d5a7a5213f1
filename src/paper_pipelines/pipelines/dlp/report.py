"""The metrics contract, the metrics dict and the results table (one row per allocation method).

The headline setting is the target sparsity with the first base pruner (``dlp.pruner.bases[0]``); the
full grid of allocations x base pruners x sparsities stays in ``dlp.pruning_runs_table``.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from paper_pipelines.common.claims import Claim
from paper_pipelines.common.reporting import check_metrics_contract, results_table
from paper_pipelines.pipelines.dlp.parameters import AllocationParams, PrunerParams

# The headline numbers every run writes to dlp.metrics: the paper's three allocations are always run
# (dlp.allocation.methods); another method m adds ppl_<m> and actual_sparsity_<m>, and an enabled
# dlp.recovery adds ppl_after_lora and lora_masks_intact.
METRICS: tuple[str, ...] = (
    "model_name",
    "base_pruner",
    "target_sparsity",
    "dense_ppl",
    "ppl_uniform",
    "ppl_owl",
    "ppl_dlp",
    "actual_sparsity_uniform",
    "actual_sparsity_owl",
    "actual_sparsity_dlp",
)

# The paper's claims (spec acceptance checks 2-4), checked on every run (common.claims). The paper's
# numbers: README table of ironartisan/DLP, LLaMA-2-7B, WikiText-2, 70 % unstructured, Wanda base.
README_TABLE = "ironartisan/DLP README table (LLaMA-2-7B, WikiText-2, S = 0.7, Wanda)"
CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="sparsity_exact",
        statement="Every allocation prunes the block linears to the target sparsity within 0.002.",
        condition="abs(actual_sparsity_uniform - target_sparsity) < 0.002 "
        "and abs(actual_sparsity_owl - target_sparsity) < 0.002 "
        "and abs(actual_sparsity_dlp - target_sparsity) < 0.002",
    ),
    Claim(
        id="dlp_beats_owl",
        statement="DLP's allocation gives a lower perplexity than OWL's at the same sparsity.",
        condition="ppl_dlp < ppl_owl",
        paper={"ppl_owl": 30.58, "ppl_dlp": 22.79},
        source=README_TABLE,
    ),
    Claim(
        id="dlp_beats_uniform",
        statement="DLP's perplexity is at most 0.8 times uniform layerwise pruning's.",
        condition="ppl_dlp <= 0.8 * ppl_uniform",
        paper={"ppl_uniform": 76.84, "ppl_dlp": 22.79},
        source=README_TABLE,
    ),
    Claim(
        id="dense_sane",
        statement="The dense model's perplexity is in [8, 16] and every pruned model is worse.",
        condition="8 <= dense_ppl <= 16 and min(ppl_uniform, ppl_owl, ppl_dlp) > dense_ppl",
        paper={"dense_ppl": 5.47},
        source="paper, dense LLaMA-2-7B on WikiText-2",
    ),
)

# The figure the scoreboard shows for this paper.
HEADLINE_FIGURE = "allocation_plot"


def headline_runs(
    runs: pd.DataFrame, allocation: AllocationParams, pruner: PrunerParams
) -> pd.DataFrame:
    """The runs at the headline setting, indexed by allocation method."""
    at_headline = (runs["base"] == pruner.bases[0]) & (
        runs["target_sparsity"] == allocation.target_sparsity
    )
    return runs[at_headline].set_index("allocation")


def build_results(
    runs: pd.DataFrame, dense_ppl: float, allocation: AllocationParams, pruner: PrunerParams
) -> pd.DataFrame:
    """One row per allocation method at the headline setting, with the dense perplexity beside it."""
    headline = headline_runs(runs, allocation, pruner)
    rows = [
        {"method": method, **headline.loc[method].to_dict(), "dense_perplexity": dense_ppl}
        for method in allocation.methods
    ]
    return results_table(rows)


def build_metrics(
    runs: pd.DataFrame,
    dense_ppl: float,
    recovery_result: dict[str, Any],
    zero_shot_result: dict[str, Any],
    allocation: AllocationParams,
    pruner: PrunerParams,
) -> dict[str, Any]:
    """The headline metrics (target sparsity, first base pruner)."""
    headline = headline_runs(runs, allocation, pruner)
    metrics: dict[str, Any] = {
        "model_name": str(runs["model"].iloc[0]),
        "base_pruner": pruner.bases[0],
        "target_sparsity": allocation.target_sparsity,
        "dense_ppl": dense_ppl,
    }
    for method in allocation.methods:
        metrics[f"ppl_{method}"] = float(headline.loc[method, "perplexity"])
        metrics[f"actual_sparsity_{method}"] = float(headline.loc[method, "actual_sparsity"])
    if recovery_result.get("enabled"):
        metrics["ppl_after_lora"] = recovery_result["ppl_after"]
        metrics["lora_masks_intact"] = recovery_result["masks_intact"]
    if "mean_accuracy" in zero_shot_result:
        metrics["zero_shot_mean_accuracy"] = zero_shot_result["mean_accuracy"]
    return check_metrics_contract(metrics, METRICS, "dlp")
