"""The metrics contract, the claims, the metrics dict and the results table (one row per method).

Headline number of a method: mean over repeats of the client-mean personalised test accuracy,
averaged over the last ``evaluation.last_rounds`` rounds (the spec's protocol; the released log prints
the mean of the last 5 rounds).
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from paper_pipelines.common.claims import Claim
from paper_pipelines.common.reporting import check_metrics_contract, results_table

from . import metrics as measures
from .parameters import StudyParams

# The headline numbers every run writes to fedda.metrics (the metrics contract).
METRICS: tuple[str, ...] = (
    "acc_fedda",
    "acc_fedda_no_vda",
    "acc_fedda_no_tpd",
    "acc_dual_prompt_vda",
    "acc_promptfl",
    "acc_local_coop",
    "acc_zero_shot",
)

# Every method the default study runs (fedda.study.methods); the contract reads seven of them.
METRICS_METHODS: tuple[str, ...] = (
    "zero_shot", "local_coop", "promptfl", "dual_prompt", "dual_prompt_vda", "fedda_no_tpd",
    "fedda_no_vda", "fedda",
)  # fmt: skip

SPEC = "spec acceptance check"
NO_TABLE = (
    "the paper's table cells were not retrievable here (spec: abstract only), so no paper number "
    "is quoted"
)
CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="fedda_beats_promptfl",
        statement="FedDDA's personalised accuracy is at least 2 points above PromptFL's (one shared "
        "prompt) under feature shift.",
        condition="acc_fedda >= acc_promptfl + 0.02",
        source=f"{SPEC} 1; {NO_TABLE}",
    ),
    Claim(
        id="fedda_beats_local_coop",
        statement="FedDDA is at least 1 point above local CoOp (no collaboration): sharing G and A_s helps.",
        condition="acc_fedda >= acc_local_coop + 0.01",
        source=f"{SPEC} 2",
    ),
    Claim(
        id="fedda_beats_zero_shot",
        statement="FedDDA is at least 10 points above the zero-shot mini-CLIP.",
        condition="acc_fedda >= acc_zero_shot + 0.10",
        source=f"{SPEC} 3",
    ),
    Claim(
        id="vda_adds_to_prompts",
        statement="The gated adapters (VDA) add at least 1 point to FedDDA's prompts alone.",
        condition="acc_fedda >= acc_fedda_no_vda + 0.01",
        source=f"{SPEC} 4 (ablation)",
    ),
    Claim(
        id="tpd_no_harm",
        statement="The middle placement with the link phrase costs at most 2 points against both "
        "blocks concatenated before the class word (no-harm gate of the TPD ablation).",
        condition="acc_fedda >= acc_fedda_no_tpd - 0.02",
        source=f"{SPEC} 5 (gate)",
    ),
    Claim(
        id="tpd_beats_concatenated",
        statement="TPD (the paper's claim): FedDDA beats the same model with both blocks concatenated "
        "before the class word.",
        condition="acc_fedda > acc_fedda_no_tpd",
        source=f"{SPEC} 5 (reported, not gated; within seed noise in the spec's prototype)",
        gates=False,
    ),
    Claim(
        id="tpd_beats_feature_level",
        statement="TPD (the paper's claim): one-sentence decoupling beats encoding G and P in two "
        "passes and averaging the text features (with the same adapters).",
        condition="acc_fedda > acc_dual_prompt_vda",
        source=f"{SPEC} 5 (reported, not gated)",
        gates=False,
    ),
    Claim(
        id="fedda_beats_dual_prompt",
        statement="FedDDA beats the feature-level dual prompt without adapters (a simplified "
        "FedOTP / FedPGP-style baseline).",
        condition="acc_fedda > acc_dual_prompt",
        source="the abstract: FedDDA improves over personalised federated PEFT methods",
        gates=False,
    ),
    Claim(
        id="fedda_beats_promptfl_label_skew",
        statement="With Dirichlet label skew added inside the clients, FedDDA still beats PromptFL "
        "and local CoOp.",
        condition="acc_fedda_label_skew > max(acc_promptfl_label_skew, acc_local_coop_label_skew)",
        source="the abstract (data heterogeneity; the paper varies beta)",
        gates=False,
    ),
    Claim(
        id="zero_shot_useful",
        statement="The mini-CLIP's zero-shot accuracy on the client domains lies in 0.3-0.6, useful "
        "but far from solved (the regime of CLIP on PACS-like shifts).",
        condition="0.3 <= acc_zero_shot <= 0.6",
        source="spec small-scale plan (target of the mini-CLIP pretraining)",
        gates=False,
    ),
)

# The figure the scoreboard shows for this paper.
HEADLINE_FIGURE = "accuracy_curves_plot"


def all_runs(*tables: pd.DataFrame) -> pd.DataFrame:
    """The run tables of every setting stacked (empty ones dropped)."""
    kept = [t for t in tables if len(t)]
    return pd.concat(kept, ignore_index=True) if kept else pd.DataFrame()


def summary(runs: pd.DataFrame, last: int) -> pd.DataFrame:
    """Per (method, setting): mean and std over repeats of the last-rounds client-mean accuracy."""
    per_repeat = measures.last_rounds_mean(runs, last)
    rows = []
    for (method, setting), group in per_repeat.groupby(["method", "setting"], sort=False):
        mean, std = measures.mean_and_std(group["accuracy"].to_numpy())
        rows.append(
            {
                "method": method,
                "setting": setting,
                "accuracy": mean,
                "accuracy_std": std,
                "repeats": int(len(group)),
                "per_repeat": [float(a) for a in group["accuracy"]],
            }
        )
    return pd.DataFrame(rows)


def build_results(runs: pd.DataFrame, last: int) -> pd.DataFrame:
    """One row per (method, setting): accuracy, its spread over repeats and each client's accuracy."""
    table = summary(runs, last)
    clients = measures.per_client_last_rounds(runs, last)
    wide = clients.pivot_table(
        index=["method", "setting"], columns="client", values="accuracy", sort=False
    )
    wide.columns = [f"acc_{c}" for c in wide.columns]
    table = table.merge(wide.reset_index(), on=["method", "setting"], how="left")
    table["per_repeat"] = [", ".join(f"{a:.3f}" for a in x) for x in table["per_repeat"]]
    return results_table(table.to_dict("records"))


def build_metrics(
    runs: pd.DataFrame, tower_report: dict[str, Any], last: int, study: StudyParams
) -> dict[str, Any]:
    """The contract (main setting, mean over repeats) plus spreads, the extra settings and the tower."""
    table = summary(runs, last).set_index(["method", "setting"])

    def value(method: str, setting: str, column: str = "accuracy") -> float:
        key = (method, setting)
        return float(table.loc[key, column]) if key in table.index else float("nan")

    metrics: dict[str, Any] = {}
    for method in study.methods:
        metrics[f"acc_{method}"] = value(method, "main")
        metrics[f"std_{method}"] = value(method, "main", "accuracy_std")
    for method in ("local_coop", "promptfl", "fedda"):
        metrics[f"acc_{method}_label_skew"] = value(method, "label_skew")
    metrics["acc_fedda_official_sgd"] = value("fedda", "official_sgd")
    metrics["label_skew_beta"] = study.label_skew_beta
    metrics["repeats"] = study.repeats
    metrics["source_zero_shot_accuracy"] = tower_report["source_zero_shot_accuracy"]
    metrics["rounds"] = int(runs["round"].max())
    metrics["clients"] = int(runs["client"].nunique())
    return check_metrics_contract(metrics, METRICS, "fedda")
