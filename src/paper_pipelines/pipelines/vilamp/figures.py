"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.figures import method_colour, new_figure


def _colour(method: str) -> str:
    return method_colour(method, ours="vilamp")


def accuracy_figure(accuracy: pd.DataFrame) -> Figure:
    """Accuracy per method, one panel per task, one group of bars per N (OOM cells left empty)."""
    ok = accuracy[accuracy.status == "ok"]
    tasks = list(dict.fromkeys(accuracy.task))
    fig, axes = new_figure(1, len(tasks), figsize=(4.6 * len(tasks), 3.6))
    for ax, task in zip(np.atleast_1d(axes), tasks, strict=True):
        sub = ok[ok.task == task]
        frames = sorted(sub.n_frames.unique())
        methods = list(dict.fromkeys(accuracy[accuracy.task == task].method))
        width = 0.8 / max(1, len(methods))
        for i, method in enumerate(methods):
            values = [
                sub[(sub.n_frames == n) & (sub.method == method)].accuracy.mean() for n in frames
            ]
            ax.bar(
                np.arange(len(frames)) + i * width,
                values,
                width,
                label=method,
                color=_colour(method),
            )
        ax.set_xticks(np.arange(len(frames)) + 0.4 - width / 2, [f"N={n}" for n in frames])
        ax.set(ylim=(0, 1), title=task, ylabel="accuracy")
    np.atleast_1d(axes)[-1].legend(fontsize=7, loc="upper right")
    return fig


def scaling_figure(scaling_table: pd.DataFrame) -> Figure:
    """Visual tokens and measured peak RSS / seconds of the whole path vs N (dense OOM marked)."""
    fig, axes = new_figure(1, 3, figsize=(13, 3.6))
    for method, sub in scaling_table.groupby("method"):
        sub = sub.sort_values("n_frames")
        ok = sub[sub.status == "ok"]
        colour = _colour(method)
        axes[0].plot(sub.n_frames, sub.visual_tokens, marker="o", label=method, color=colour)
        axes[1].plot(ok.n_frames, ok.peak_rss_gb, marker="o", label=method, color=colour)
        axes[2].plot(ok.n_frames, ok.seconds, marker="o", label=method, color=colour)
        oom = sub[sub.status != "ok"]
        if len(oom):
            axes[0].scatter(
                oom.n_frames,
                oom.visual_tokens,
                marker="x",
                s=60,
                color="red",
                label=f"{method} OOM (predicted)",
            )
            if "seconds_extrapolated" in oom:
                axes[2].plot(
                    oom.n_frames,
                    oom.seconds_extrapolated,
                    ls="--",
                    marker="x",
                    color=colour,
                    label=f"{method} (extrapolated)",
                )
    axes[0].set(
        xscale="log",
        yscale="log",
        xlabel="frames N",
        ylabel="visual tokens",
        title="reader input length",
    )
    axes[1].set(
        xscale="log", xlabel="frames N", ylabel="peak RSS (GB)", title="whole path, measured"
    )
    axes[2].set(
        xscale="log",
        yscale="log",
        xlabel="frames N",
        ylabel="seconds / video",
        title="whole path, measured",
    )
    for ax in axes:
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    return fig


def llm_memory_figure(llm_memory: pd.DataFrame, gpu_gb: float) -> Figure:
    """Projected KV-cache memory of a 7B LLM vs frames: dense input vs ViLAMP, the GPU's memory line."""
    fig, ax = new_figure(figsize=(5.6, 3.8))
    for method, sub in llm_memory.groupby("method"):
        ax.plot(sub.n_frames, sub.gb, label=method, color=_colour(method), lw=2)
    ax.axhline(gpu_gb, color="red", ls="--", lw=1, label=f"{gpu_gb:g} GB GPU")
    ax.set(
        xlabel="frames",
        ylabel="KV cache (GB, projected)",
        yscale="log",
        title="Qwen2-7B-sized LLM, bf16",
    )
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    return fig
