"""Metrics contract, the results table and the figures of the evaluate stage."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from .parameters import CoreParams, ExtensionParams  # noqa: E402
from .study import extrapolate_full_seconds  # noqa: E402


def mean_errors(core_weights: pd.DataFrame) -> pd.DataFrame:
    """Mean / std of the relative weight error per (algorithm, method, s) over seeds."""
    return (
        core_weights.groupby(["algorithm", "method", "s"])
        .agg(
            rel_error=("rel_error", "mean"),
            rel_error_std=("rel_error", "std"),
            linf_error=("linf_error", "mean"),
            seconds=("seconds", "mean"),
        )
        .reset_index()
    )


def loglog_slope(errors: pd.DataFrame, algorithm: str, method: str) -> float:
    """Slope of log(mean error) against log(s) (the spec expects <= -0.3 for sampling)."""
    sub = errors[
        (errors.algorithm == algorithm) & (errors.method == method) & (errors.rel_error > 0)
    ]
    if len(sub) < 2:
        return float("nan")
    return float(np.polyfit(np.log(sub.s), np.log(sub.rel_error), 1)[0])


def _error_at(errors: pd.DataFrame, algorithm: str, method: str, s: int) -> float:
    sub = errors[(errors.algorithm == algorithm) & (errors.method == method) & (errors.s == s)]
    return float(sub.rel_error.iloc[0]) if len(sub) else float("nan")


def build_metrics(
    full_weights: dict,
    core_weights: pd.DataFrame,
    clustering_scores: pd.DataFrame,
    timing: pd.DataFrame,
    core: CoreParams,
    extension: ExtensionParams,
) -> dict:
    """The issue's contract keys plus the numbers behind the spec's acceptance checks."""
    errors = mean_errors(core_weights)
    s = core.default_s
    metrics: dict = {"default_s": s}
    for algorithm in ("mkkm", "simplemkkm", "latefusion"):
        metrics[f"weight_rel_error_{algorithm}"] = _error_at(errors, algorithm, "projection", s)
    metrics["uniform_weight_rel_error_simplemkkm"] = _error_at(errors, "simplemkkm", "uniform", s)
    metrics["leverage_weight_rel_error_simplemkkm"] = _error_at(errors, "simplemkkm", "leverage", s)
    for row in errors.itertuples():
        metrics[f"error_{row.algorithm}_{row.method}_s{row.s}"] = float(row.rel_error)
    for algorithm in errors.algorithm.unique():
        for method in errors.method.unique():
            slope = loglog_slope(errors, algorithm, method)
            if np.isfinite(slope):
                metrics[f"loglog_slope_{algorithm}_{method}"] = slope

    scores = clustering_scores.set_index("method")
    full_name = f"full_{extension.algorithm}"
    core_name = f"core_projection_s{s}"
    metrics["acc_full"] = float(scores.acc.get(full_name, np.nan))
    metrics["acc_core"] = float(scores.acc.get(core_name, np.nan))
    for name, row in scores.iterrows():
        metrics[f"clustering_{name}"] = {k: float(row[k]) for k in ("acc", "nmi", "purity", "ari")}

    sub = timing[timing.algorithm == "simplemkkm"].sort_values("n")
    if len(sub):
        largest = sub.iloc[-1]
        full_seconds = largest.full_seconds
        extrapolated = not np.isfinite(full_seconds)
        exponent = float("nan")
        if extrapolated:
            full_seconds, exponent = extrapolate_full_seconds(timing, "simplemkkm", int(largest.n))
        metrics["speedup_simplemkkm_largest_n"] = float(full_seconds / largest.core_seconds)
        metrics["speedup_largest_n"] = int(largest.n)
        metrics["speedup_is_extrapolated"] = bool(extrapolated)
        metrics["full_seconds_exponent"] = exponent
        metrics["core_seconds_largest_n"] = float(largest.core_seconds)
        metrics["acc_core_largest_n"] = float(largest.acc_core)
        for row in sub.itertuples():
            full_n = row.full_seconds
            if not np.isfinite(full_n):
                full_n, _ = extrapolate_full_seconds(timing, "simplemkkm", int(row.n))
            metrics[f"speedup_simplemkkm_n{int(row.n)}"] = float(full_n / row.core_seconds)
        measured = sub[sub.full_seconds.notna()]
        if len(measured):
            last = measured.iloc[-1]
            metrics["speedup_simplemkkm_largest_measured_n"] = float(
                last.full_seconds / last.core_seconds
            )
            metrics["largest_measured_n"] = int(last.n)
            metrics["scaling_rel_error_largest_measured_n"] = float(last.rel_error)
    metrics["full_seconds"] = {
        a: v["seconds"] for a, v in full_weights.items() if isinstance(v, dict)
    }
    return metrics


def build_results(
    core_weights: pd.DataFrame, clustering_scores: pd.DataFrame, timing: pd.DataFrame
) -> pd.DataFrame:
    """One row per method (weight approximation, clustering or scaling), one column per metric."""
    errors = mean_errors(core_weights)
    errors.insert(
        0, "method_name", errors.algorithm + "/" + errors.method + "/s=" + errors.s.astype(str)
    )
    weight_rows = errors.drop(columns=["algorithm", "method", "s"])
    cluster_rows = clustering_scores.rename(columns={"method": "method_name"})
    cluster_rows = cluster_rows[["method_name", "acc", "nmi", "purity", "ari", "seconds"]]
    scale_rows = timing.assign(
        method_name="scaling/" + timing.algorithm + "/n=" + timing.n.astype(str)
    )
    scale_rows = scale_rows.rename(columns={"core_seconds": "seconds", "acc_core": "acc"})[
        ["method_name", "seconds", "full_seconds", "rel_error", "acc", "acc_full"]
    ]
    return pd.concat([weight_rows, cluster_rows, scale_rows], ignore_index=True)


def weight_error_figure(core_weights: pd.DataFrame) -> Figure:
    """Relative weight error vs core size s, one panel per algorithm, one line per construction."""
    errors = mean_errors(core_weights)
    algorithms = list(errors.algorithm.unique())
    fig = Figure(figsize=(4.2 * len(algorithms), 3.6))
    axes = fig.subplots(1, len(algorithms), squeeze=False)[0]
    for ax, algorithm in zip(axes, algorithms, strict=True):
        for method, sub in errors[errors.algorithm == algorithm].groupby("method"):
            ax.errorbar(
                sub.s,
                sub.rel_error.clip(lower=1e-8),
                yerr=sub.rel_error_std.fillna(0),
                marker="o",
                label=method,
                capsize=2,
            )
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="core size s",
            ylabel="relative weight error",
            title=algorithm,
        )
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def timing_figure(timing: pd.DataFrame) -> Figure:
    """Wall time against n: full MKC (measured) vs core kernel + extension."""
    fig = Figure(figsize=(5, 3.8))
    ax = fig.subplots()
    for algorithm, sub in timing.groupby("algorithm"):
        sub = sub.sort_values("n")
        ax.plot(sub.n, sub.core_seconds, marker="o", label=f"core {algorithm}")
        full = sub[sub.full_seconds.notna()]
        ax.plot(full.n, full.full_seconds, marker="s", label=f"full {algorithm}")
    ax.set(xscale="log", yscale="log", xlabel="n", ylabel="seconds", title="full vs core MKC")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def clustering_figure(clustering_scores: pd.DataFrame) -> Figure:
    """ACC / NMI / purity / ARI of every clustering of all n points."""
    fig = Figure(figsize=(8, 3.8))
    ax = fig.subplots()
    metrics = ["acc", "nmi", "purity", "ari"]
    width = 0.8 / len(clustering_scores)
    for i, row in enumerate(clustering_scores.itertuples()):
        ax.bar(
            np.arange(4) + i * width, [getattr(row, m) for m in metrics], width, label=row.method
        )
    ax.set_xticks(np.arange(4) + 0.4 - width / 2, metrics)
    ax.set(ylim=(0, 1), title="clustering quality, full vs core")
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig
