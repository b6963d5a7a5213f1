"""The metrics contract, the claims, the metrics dict and the results table of the evaluate stage.

Hierarchy-study gains are leaf matching at T = ``evaluation.matched_dim`` (8) minus the Euclidean
embedding with the identical likelihood at d = T; PubMed numbers are leaf matching at the real study's
first T (16) and first mu (0.1). A number the run did not measure is None, and a claim reading it fails.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from paper_pipelines.common.claims import Claim
from paper_pipelines.common.reporting import check_metrics_contract, results_table

from .parameters import EvaluationParams, ModelParams

METRICS: tuple[str, ...] = (
    "hsbm_auc_gain_mu03",
    "hsbm_auc_gain_mu06",
    "hsbm_ap_gain_min",
    "hsbm_auc_min_step",
    "pubmed_auc_mu01",
    "pubmed_ap_mu01",
    "pubmed_auc_gain_over_adamic_adar",
)

SPEC = "spec acceptance check"
ABSTRACT = "paper abstract (the table cells were not retrievable; no number quoted)"
CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="ct_space_data_efficient_on_hierarchy",
        statement="On the hierarchical SBM at a matched number of coordinates (T = d = 8), leaf "
        "matching's AUC beats the Euclidean embedding with the same likelihood by >= 0.08 at mu = 0.3 "
        "and >= 0.15 at mu = 0.6, and its AP by >= 0.15 at both.",
        condition="hsbm_auc_gain_mu03 >= 0.08 and hsbm_auc_gain_mu06 >= 0.15 "
        "and hsbm_ap_gain_min >= 0.15",
        source=f"{SPEC} 1; {ABSTRACT}: CT space is more data-efficient than Euclidean space",
    ),
    Claim(
        id="leaf_matching_improves_with_mu",
        statement="On the hierarchical SBM, leaf matching's AUC rises at every step of mu "
        "(0.1 < 0.3 < 0.6).",
        condition="hsbm_auc_min_step > 0",
        source=f"{SPEC} 3",
    ),
    Claim(
        id="scarce_links_pubmed",
        statement="On PubMed with 10 % of the links observed, leaf matching reaches AUC >= 0.72 and "
        "AP >= 0.40, more than 0.15 AUC above Adamic-Adar.",
        condition="pubmed_auc_mu01 >= 0.72 and pubmed_ap_mu01 >= 0.40 "
        "and pubmed_auc_gain_over_adamic_adar > 0.15",
        source=f"{SPEC} 2; {ABSTRACT}: leaf matching works when links are scarce",
    ),
    Claim(
        id="pubmed_hits50_vs_euclidean",
        statement="On PubMed at mu = 0.1, leaf matching's Hits@50 is at least the Euclidean "
        "same-likelihood baseline's (d = 16).",
        condition="pubmed_hits50_mu01 >= pubmed_hits50_euclidean_mu01",
        source=f"{SPEC} 2 (reported, one seed)",
        gates=False,
    ),
    Claim(
        id="ct_beats_hyperbolic_at_matched_size",
        statement="On the hierarchical SBM at mu = 0.3 and T = d = 8, leaf matching's AUC beats the "
        "Poincare-ball embedding with the same likelihood.",
        condition="hsbm_auc_gain_over_poincare_mu03 > 0",
        source=f"{ABSTRACT}: CT space vs other (hyperbolic) spaces",
        gates=False,
    ),
    Claim(
        id="tie_at_16_coordinates",
        statement="On the hierarchical SBM at mu = 0.3 and T = d = 16, leaf matching (untuned alpha, "
        "gamma) is within 0.01 AUC of the Euclidean embedding or above it.",
        condition="hsbm_auc_gain_T16_mu03 >= -0.01",
        source=f"{SPEC} 1 context (prototype: a tie)",
        gates=False,
    ),
    Claim(
        id="lm16_vs_euclidean32",
        statement="On the hierarchical SBM at mu = 0.3, leaf matching with T = 16 reaches the AUC of a "
        "32-dimensional Euclidean embedding.",
        condition="hsbm_auc_gap_T16_vs_d32_mu03 >= 0",
        source=f"{SPEC} 1 context (prototype: Euclidean d = 32 ahead)",
        gates=False,
    ),
    Claim(
        id="tuned_lm16_vs_euclidean16",
        statement="With (alpha, gamma) selected on a validation carve-out, leaf matching (T = 16) is "
        "within 0.01 AUC of the Euclidean d = 16 embedding at mu = 0.3 or above it.",
        condition="hsbm_tuned_auc_gain_T16_mu03 >= -0.01",
        source=f"{SPEC} 1 (the gate it proposes once the grid is in place; reported, per the issue)",
        gates=False,
    ),
    Claim(
        id="epoch_time_linear_in_edges",
        statement="Seconds per epoch grow roughly linearly with the number of edges on Erdos-Renyi "
        "graphs: time per edge varies less than 2x across the sizes run.",
        condition="scaling_time_per_edge_ratio <= 2",
        source=f"{SPEC} 5; {ABSTRACT}: excellent scalability",
        gates=False,
    ),
)

HEADLINE_FIGURE = "data_efficiency_plot"


def _value(table: pd.DataFrame, study: str, mu: float, method: str, column: str) -> float:
    rows = table[(table.study == study) & np.isclose(table.mu, mu) & (table.method == method)]
    return float(rows[column].iloc[0]) if len(rows) else math.nan


def build_metrics(
    link_metrics: pd.DataFrame,
    tuning: pd.DataFrame,
    scaling: pd.DataFrame,
    model: ModelParams,
    evaluation: EvaluationParams,
) -> dict:
    """The contract keys plus every number a claim reads (None where the run did not measure it)."""
    t = evaluation.matched_dim
    lm, euclid = f"leaf_matching_T{t}", f"euclidean_d{t}"

    def gain(column: str, mu: float, ours: str = lm, other: str = euclid) -> float:
        v = _value(link_metrics, "hierarchy", mu, ours, column)
        return v - _value(link_metrics, "hierarchy", mu, other, column)

    metrics: dict = {
        "hsbm_auc_gain_mu03": gain("auc", 0.3),
        "hsbm_auc_gain_mu06": gain("auc", 0.6),
        "hsbm_ap_gain_min": min(gain("ap", 0.3), gain("ap", 0.6)),
        "hsbm_auc_gain_over_poincare_mu03": gain("auc", 0.3, other=f"poincare_d{t}"),
        "hsbm_auc_gain_T16_mu03": gain("auc", 0.3, "leaf_matching_T16", "euclidean_d16"),
        "hsbm_auc_gap_T16_vs_d32_mu03": gain("auc", 0.3, "leaf_matching_T16", "euclidean_d32"),
        "hsbm_tuned_auc_gain_T16_mu03": gain(
            "auc", 0.3, "leaf_matching_T16_tuned", "euclidean_d16"
        ),
    }
    ours = link_metrics[(link_metrics.study == "hierarchy") & (link_metrics.method == lm)]
    aucs = ours.sort_values("mu").auc.to_numpy()
    metrics["hsbm_auc_min_step"] = float(np.diff(aucs).min()) if len(aucs) > 1 else math.nan
    for row in ours.sort_values("mu").itertuples():
        metrics[f"hsbm_auc_mu{row.mu:g}"] = float(row.auc)

    real = link_metrics[link_metrics.study == "real"]
    mu = float(real.mu.min()) if len(real) else math.nan
    lm_real = f"leaf_matching_T{model.real.trees[0]}"
    d_real = f"euclidean_d{model.real.trees[0]}"
    metrics["pubmed_mu"] = mu
    metrics["pubmed_auc_mu01"] = _value(link_metrics, "real", mu, lm_real, "auc")
    metrics["pubmed_ap_mu01"] = _value(link_metrics, "real", mu, lm_real, "ap")
    metrics["pubmed_auc_gain_over_adamic_adar"] = metrics["pubmed_auc_mu01"] - _value(
        link_metrics, "real", mu, "adamic_adar", "auc"
    )
    metrics["pubmed_hits50_mu01"] = _value(link_metrics, "real", mu, lm_real, "hits@50")
    metrics["pubmed_hits50_euclidean_mu01"] = _value(link_metrics, "real", mu, d_real, "hits@50")
    for method in sorted(set(real.method)):
        metrics[f"pubmed_auc_{method}"] = _value(link_metrics, "real", mu, method, "auc")

    for row in tuning[tuning.selected].itertuples():
        metrics[f"tuned_alpha_gamma_{row.split}"] = [float(row.alpha), float(row.gamma)]
    per_edge = scaling.seconds_per_epoch_per_edge
    metrics["scaling_time_per_edge_ratio"] = (
        float(per_edge.max() / per_edge.min()) if len(per_edge) > 1 else math.nan
    )
    return check_metrics_contract(metrics, METRICS, "leaf_matching")


def build_results(link_metrics: pd.DataFrame) -> pd.DataFrame:
    """One row per method, study and mu: the paper's measures, sizes and fit seconds."""
    order = {"hierarchy": 0, "real": 1}
    table = link_metrics.assign(_s=link_metrics.study.map(order)).sort_values(
        ["_s", "mu", "method"]
    )
    return results_table(table.drop(columns="_s").to_dict("records")).reset_index(drop=True)
