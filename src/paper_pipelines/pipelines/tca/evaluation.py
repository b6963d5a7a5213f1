"""Accuracy and cost tables, headline metrics and figures for the TCA benchmark."""

from __future__ import annotations

import math
from typing import Any

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

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


def summary_metrics(
    accuracy: pd.DataFrame,
    cost: pd.DataFrame,
    forgetting: dict[str, Any],
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
    metrics: dict[str, Any] = {
        "severity": int(metric_severity),
        "n_corruptions": int(len(per)),
        "w_solver": solver,
        "acc_source": acc("source"),
        "acc_linear_tca": acc("source+tca"),
        "acc_mean_only": acc("source+mean_only"),
        "acc_tent": acc("tent"),
        "time_ratio_tca_over_tent": _ratio(tca_s, tent_s),
        "corruptions_improved": int((per["source+tca"] > per["source"]).sum())
        if {"source+tca", "source"} <= set(per.columns)
        else None,
    }
    for method in (
        "bn",
        "t3a",
        "bn+tca",
        "tent+tca",
        "t3a+tca",
        "source+tca_adam",
        "source+tca_eig",
    ):
        if method in mean.index:
            metrics["acc_" + method.replace("+", "_")] = acc(method)
    metrics["time_ratio_linear_tca_total_over_tent"] = _ratio(src_s + tca_s, tent_s)
    if "peak_bytes" in cost.columns:
        mem = cost.set_index("method")["peak_bytes"]
        if {"tent", "source+tca"} <= set(mem.dropna().index):
            metrics["mem_ratio_tca_over_tent"] = _ratio(
                float(mem["source+tca"]), float(mem["tent"])
            )
    for key in (
        "clean_acc_source",
        "clean_acc_after_linear_tca",
        "clean_acc_after_continual_tent",
        "weights_unchanged_by_tca",
    ):
        if key in forgetting:
            metrics[key] = forgetting[key]
    return metrics


def _ratio(a: float, b: float) -> float | None:
    if not (math.isfinite(a) and math.isfinite(b)) or b <= 0:
        return None
    return round(a / b, 5)


def results_table(accuracy: pd.DataFrame, cost: pd.DataFrame, metric_severity: int) -> pd.DataFrame:
    """Method x metric: mean accuracy per severity, gain over its base, corruptions improved, cost."""
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
        c = cost[cost["method"] == method]
        row["seconds"] = float(c["seconds"].iloc[0]) if len(c) else np.nan
        row["peak_bytes"] = (
            float(c["peak_bytes"].iloc[0]) if len(c) and "peak_bytes" in c else np.nan
        )
        rows.append(row)
    return pd.DataFrame(rows)


def accuracy_plot(accuracy: pd.DataFrame, metric_severity: int) -> Figure:
    """Accuracy per corruption and method at the metric severity."""
    at = accuracy[accuracy["severity"] == metric_severity]
    per = at.pivot(index="corruption", columns="method", values="accuracy")
    methods = method_order(list(per.columns))
    fig = Figure(figsize=(max(8, 1.1 * len(per)), 4.5))
    ax = fig.subplots()
    width = 0.8 / len(methods)
    x = np.arange(len(per))
    for i, m in enumerate(methods):
        ax.bar(x + i * width - 0.4 + width / 2, per[m].to_numpy(), width, label=LABELS.get(m, m))
    ax.set_xticks(x, list(per.index), rotation=35, ha="right")
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"Digits-C accuracy per corruption, severity {metric_severity}")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    return fig


def severity_plot(accuracy: pd.DataFrame) -> Figure:
    """Mean accuracy over corruptions against severity, one line per method."""
    mean = accuracy.pivot_table(
        index="severity", columns="method", values="accuracy", aggfunc="mean"
    )
    fig = Figure(figsize=(7, 4.5))
    ax = fig.subplots()
    for m in method_order(list(mean.columns)):
        style = "--" if "+" in m else "-"
        ax.plot(mean.index, mean[m], style, marker="o", label=LABELS.get(m, m))
    ax.set_xlabel("severity")
    ax.set_ylabel("mean accuracy over corruptions (%)")
    ax.set_xticks(list(mean.index))
    ax.legend(fontsize=7, ncol=2)
    return fig


def cost_plot(cost: pd.DataFrame) -> Figure:
    """Compute time (and, when probed, peak extra tensor memory) per method."""
    methods = method_order(list(cost["method"]))
    c = cost.set_index("method").loc[methods]
    probed = "peak_bytes" in c.columns and c["peak_bytes"].notna().any()
    fig = Figure(figsize=(10 if probed else 6, 4))
    axes = fig.subplots(1, 2 if probed else 1, squeeze=False)[0]
    # "+" rows are the TCA step alone (it runs after its base method's stream).
    labels = [LABELS.get(m, m) + (" [step]" if "+" in m else "") for m in methods]
    axes[0].barh(labels, c["seconds"].to_numpy())
    axes[0].set_xscale("log")
    axes[0].set_xlabel("CPU seconds, all domains at the metric severity (log)")
    if probed:
        mem = c["peak_bytes"].dropna() / 2**10
        names = [LABELS.get(m, m) + (" [step]" if "+" in m else "") for m in mem.index]
        axes[1].barh(names, mem.to_numpy())
        axes[1].set_xlabel("peak extra tensor memory (KiB, one domain)")
    fig.tight_layout()
    return fig
