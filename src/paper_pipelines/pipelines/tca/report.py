"""The metrics contract, the accuracy and cost tables, the metrics dict and the results table (one row per
method: every TTA baseline, LinearTCA and its variants, and LinearTCA+ on each baseline)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.claims import Claim
from paper_pipelines.common.reporting import check_metrics_contract
from paper_pipelines.common.reporting import results_table as one_row_per_method
from paper_pipelines.pipelines.tca import digits_c
from paper_pipelines.pipelines.tca.metrics import accuracy_of_logits

# The headline numbers every run writes to tca.metrics (at the metric severity, mean over corruptions).
METRICS: tuple[str, ...] = (
    "acc_source",
    "acc_linear_tca",
    "acc_mean_only",
    "acc_tent",
    "time_ratio_tca_over_tent",
    "corruptions_improved",
    "corruptions_not_worse",
    "gain_linear_tca_over_best_tta",
)

# The spec's acceptance checks 1, 2 and 4-6 gate, each condition as the spec writes it (check 3, bit
# parity with the official code, is benchmarks/tca_official_parity.py; check 7, the fast run's wall
# time, is tests/pipelines/tca/test_pipeline.py). The abstract's claims are reported only. A claim whose
# metric this run did not measure (None: the forgetting check at paper scale, the memory probe when
# disabled) does not hold. The paper's own numbers are the abstract's; per-table cells were not
# retrievable (spec, "Paper's data").
FIG_1B = "abstract; Fig. 1b (CIFAR-10-C, time and peak GPU memory vs the best TTA baseline)"
CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="linear_tca_beats_source",
        statement="LinearTCA improves the source model's mean accuracy by at least 1.5 pt without any "
        "weight update.",
        condition="acc_linear_tca >= acc_source + 1.5",
        source="spec check 1",
    ),
    Claim(
        id="linear_tca_most_corruptions",
        statement="LinearTCA is at least as accurate as the source model on at least 10 of the 12 "
        "corruptions.",
        condition="corruptions_not_worse >= 10 / 12 * n_corruptions",
        source="spec check 1",
    ),
    Claim(
        id="correlation_alignment_matters",
        statement="Correlation alignment adds at least 1 pt over mean alignment alone (W = I).",
        condition="acc_linear_tca >= acc_mean_only + 1.0",
        source="spec check 2",
    ),
    Claim(
        id="tca_step_cheap",
        statement="The TCA step costs at most 10 % of Tent's adaptation time on the same domains.",
        condition="time_ratio_tca_over_tent <= 0.10",
        paper={"time_ratio_tca_over_tent": 0.006},
        source="spec check 4; paper: " + FIG_1B,
    ),
    Claim(
        id="linear_tca_whole_method_cheap",
        statement="LinearTCA as a whole (the source model's pass over each domain plus the TCA step) "
        "costs at most 10 % of Tent's adaptation time.",
        condition="time_ratio_linear_tca_total_over_tent <= 0.10",
        paper={"time_ratio_linear_tca_total_over_tent": 0.006},
        source="paper: " + FIG_1B + "; the abstract's 0.6 % does not say which of the two it times",
        gates=False,
    ),
    Claim(
        id="tca_memory_bound",
        statement="The TCA step's peak extra memory is at most two d x d matrices plus the N x d "
        "embeddings (float32).",
        condition="tca_peak_bytes <= 2 * 4 * embedding_dim ** 2 + embedding_bytes",
        source="spec check 4",
    ),
    Claim(
        id="no_forgetting",
        statement="LinearTCA leaves the weights bit-identical, so clean accuracy is unchanged.",
        condition="weights_unchanged_by_tca and clean_acc_after_linear_tca == clean_acc_source",
        source="spec check 5",
    ),
    Claim(
        id="plug_in_t3a_not_harmful",
        statement="LinearTCA+ on T3A costs at most 0.5 pt of T3A's mean accuracy.",
        condition="acc_t3a_tca >= acc_t3a - 0.5",
        source="spec check 6",
    ),
    Claim(
        id="plug_in_tent_not_harmful",
        statement="LinearTCA+ on Tent costs at most 1.5 pt of Tent's mean accuracy.",
        condition="acc_tent_tca >= acc_tent - 1.5",
        source="spec check 6",
    ),
    Claim(
        id="tent_forgets",
        statement="Continual Tent lowers the clean accuracy of the model it adapts.",
        condition="clean_acc_after_continual_tent < clean_acc_source",
        source="spec check 5 (reported); paper: Fig. 1c",
        gates=False,
    ),
    Claim(
        id="tca_memory_small",
        statement="The TCA step's peak extra memory is a fraction of Tent's.",
        condition="mem_ratio_tca_over_tent < 1",
        paper={"mem_ratio_tca_over_tent": 0.04},
        source=FIG_1B,
        gates=False,
    ),
    Claim(
        id="linear_tca_beats_best_tta",
        statement="LinearTCA is more accurate than the best TTA baseline (the best of BN, Tent, T3A).",
        condition="gain_linear_tca_over_best_tta > 0",
        paper={"gain_linear_tca_over_best_tta": 5.88},
        source="v1 abstract (OfficeHome; read as the gain over the best baseline, which v2 restates "
        "as 'higher accuracy ... compared to the best TTA baseline')",
        gates=False,
    ),
    Claim(
        id="linear_tca_plus_boosts",
        statement="LinearTCA+ raises the mean accuracy of every TTA method it is plugged into "
        "(BN, Tent, T3A).",
        condition="acc_bn_tca > acc_bn and acc_tent_tca > acc_tent and acc_t3a_tca > acc_t3a",
        source="abstract ('a plug-and-play module that can easily boost existing TTA methods')",
        gates=False,
    ),
)

# The figure the scoreboard shows for this paper.
HEADLINE_FIGURE = "accuracy_plot"

# Display order and the base each row is compared with.
METHOD_BASE = {
    "source": None,
    "source+mean_only": "source",
    "source+tca": "source",
    "source+tca_adam": "source",
    "source+tca_eig": "source",
    "bn": None,
    "bn+tca": "bn",
    "tent": None,
    "tent+tca": "tent",
    "t3a": None,
    "t3a+tca": "t3a",
}
LABELS = {
    "source": "Source",
    "source+mean_only": "Mean-only (W=I)",
    "source+tca": "LinearTCA",
    "source+tca_adam": "LinearTCA (official Adam W)",
    "source+tca_eig": "LinearTCA (exact eig W)",
    "bn": "BN",
    "bn+tca": "BN + LinearTCA+",
    "tent": "Tent",
    "tent+tca": "Tent + LinearTCA+",
    "t3a": "T3A",
    "t3a+tca": "T3A + LinearTCA+",
}


def method_order(methods: list[str]) -> list[str]:
    """Known methods in display order, then any others."""
    known = [m for m in METHOD_BASE if m in methods]
    return known + sorted(m for m in methods if m not in METHOD_BASE)


def accuracy_table(tta_outputs: dict[str, Any], tca_outputs: dict[str, Any]) -> pd.DataFrame:
    """Per domain and method: accuracy (%), seconds and the number of target samples."""
    rows = []
    for key, outputs in tta_outputs["domains"].items():
        name, severity = digits_c.parse_domain_key(key)
        labels = tta_outputs["labels"][key]
        merged = {**outputs, **tca_outputs["domains"][key]}
        for method, out in merged.items():
            rows.append(
                {
                    "corruption": name,
                    "severity": severity,
                    "method": method,
                    "accuracy": accuracy_of_logits(out["logits"], labels),
                    "seconds": float(out["seconds"]),
                    "n": len(labels),
                }
            )
    return pd.DataFrame(rows)


def cost_table(
    accuracy: pd.DataFrame,
    memory: dict[str, Any] | None,
    metric_severity: int,
    solver: str,
) -> pd.DataFrame:
    """Per method at the metric severity: seconds over all domains, probed peak memory, ratio to Tent."""
    at = accuracy[accuracy["severity"] == metric_severity]
    cost = at.groupby("method", as_index=False)["seconds"].sum()
    cost["kind"] = ["tca step" if "+" in m else "tta stream" for m in cost["method"]]
    if memory:
        probed = {
            "source": memory["source"],
            "tent": memory["tent"],
            "source+tca": memory["linear_tca_step"],
        }
        cost["peak_bytes"] = [float(probed.get(m, np.nan)) for m in cost["method"]]
    tent_s = float(cost.loc[cost["method"] == "tent", "seconds"].sum()) or np.nan
    cost["time_ratio_to_tent"] = cost["seconds"] / tent_s
    cost["w_solver"] = [solver if m.endswith("+tca") else "" for m in cost["method"]]
    return cost


def metrics(
    accuracy: pd.DataFrame,
    cost: pd.DataFrame,
    forgetting: dict[str, Any],
    training_log: dict[str, Any],
    memory: dict[str, Any] | None,
    metric_severity: int,
    solver: str,
) -> dict[str, Any]:
    """The metrics contract (metric severity, mean over corruptions) plus supporting numbers."""
    at = accuracy[accuracy["severity"] == metric_severity]
    mean = at.groupby("method")["accuracy"].mean()

    def acc(method: str) -> float | None:
        return round(float(mean[method]), 3) if method in mean.index else None

    per = at.pivot(index="corruption", columns="method", values="accuracy")
    secs = at.groupby("method")["seconds"].sum()
    tent_s = float(secs.get("tent", math.nan))
    tca_s = float(secs.get("source+tca", math.nan))
    src_s = float(secs.get("source", math.nan))
    improved = {"source+tca", "source"} <= set(per.columns)
    values: dict[str, Any] = {
        "severity": int(metric_severity),
        "n_corruptions": int(len(per)),
        "w_solver": solver,
        "acc_source": acc("source"),
        "acc_linear_tca": acc("source+tca"),
        "acc_mean_only": acc("source+mean_only"),
        "acc_tent": acc("tent"),
        "time_ratio_tca_over_tent": _ratio(tca_s, tent_s),
        "corruptions_improved": int((per["source+tca"] > per["source"]).sum())
        if improved
        else None,
        "corruptions_not_worse": int((per["source+tca"] >= per["source"]).sum())
        if improved
        else None,
    }
    # the baselines and LinearTCA+ rows the claims read: None when a method was not run
    for method in ("bn", "t3a", "bn+tca", "tent+tca", "t3a+tca"):
        values["acc_" + method.replace("+", "_")] = acc(method)
    for method in ("source+tca_adam", "source+tca_eig"):
        if method in mean.index:
            values["acc_" + method.replace("+", "_")] = acc(method)
    baselines = [values[k] for k in ("acc_bn", "acc_tent", "acc_t3a") if values[k] is not None]
    values["gain_linear_tca_over_best_tta"] = (
        round(values["acc_linear_tca"] - max(baselines), 3)
        if baselines and values["acc_linear_tca"] is not None
        else None
    )
    values["time_ratio_linear_tca_total_over_tent"] = _ratio(src_s + tca_s, tent_s)
    values["mem_ratio_tca_over_tent"] = None
    if "peak_bytes" in cost.columns:
        mem = cost.set_index("method")["peak_bytes"]
        if {"tent", "source+tca"} <= set(mem.dropna().index):
            values["mem_ratio_tca_over_tent"] = _ratio(float(mem["source+tca"]), float(mem["tent"]))
    # None when not measured (no clean split at paper scale, or the check disabled)
    for key in (
        "clean_acc_source",
        "clean_acc_after_linear_tca",
        "clean_acc_after_continual_tent",
        "weights_unchanged_by_tca",
    ):
        values[key] = forgetting.get(key)
    if "clean_test_accuracy" in training_log:
        values["clean_acc_source_training"] = round(float(training_log["clean_test_accuracy"]), 3)
    probe = memory or {}
    values["tca_peak_bytes"] = probe.get("linear_tca_step")
    values["tent_peak_bytes"] = probe.get("tent")
    values["embedding_bytes"] = probe.get("embedding_bytes")
    values["embedding_dim"] = probe.get("d")
    return check_metrics_contract(values, METRICS, "tca")


def _ratio(a: float, b: float) -> float | None:
    if not (math.isfinite(a) and math.isfinite(b)) or b <= 0:
        return None
    return round(a / b, 5)


def results_table(accuracy: pd.DataFrame, cost: pd.DataFrame, metric_severity: int) -> pd.DataFrame:
    """Method x metric: mean accuracy per severity, gain over its base and corruptions improved at the
    metric severity, probed peak bytes, then the metric severity's accuracy per corruption (no timings:
    they are in the cost table, so that a re-run on the same code gives the same table)."""
    mean = accuracy.pivot_table(
        index="method", columns="severity", values="accuracy", aggfunc="mean"
    )
    mean.columns = [f"acc_sev{int(s)}" for s in mean.columns]
    at = accuracy[accuracy["severity"] == metric_severity]
    per = at.pivot(index="corruption", columns="method", values="accuracy")
    rows = []
    for method in method_order(list(mean.index)):
        base = METHOD_BASE.get(method)
        row = {"method": method, "label": LABELS.get(method, method), "base": base or ""}
        row.update(mean.loc[method].round(3).to_dict())
        if base and base in per.columns:
            diff = per[method] - per[base]
            row[f"gain_over_base_sev{metric_severity}"] = round(float(diff.mean()), 3)
            row[f"improved_sev{metric_severity}"] = int((diff > 0).sum())
        else:
            row[f"gain_over_base_sev{metric_severity}"] = np.nan
            row[f"improved_sev{metric_severity}"] = np.nan
        c = cost[cost["method"] == method]  # seconds stay in tca.cost_table: a re-run moves them
        row["peak_bytes"] = (
            float(c["peak_bytes"].iloc[0]) if len(c) and "peak_bytes" in c else np.nan
        )
        for corruption in per.index:  # the metric severity's accuracy per corruption
            row[f"sev{metric_severity}_{corruption}"] = (
                round(float(per.loc[corruption, method]), 3) if method in per.columns else np.nan
            )
        rows.append(row)
    return one_row_per_method(rows)
