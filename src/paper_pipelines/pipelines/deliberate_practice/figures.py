"""One function per figure, each returning a matplotlib Figure (saved by MatplotlibDataset)."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import NullFormatter, ScalarFormatter

from paper_pipelines.common.figures import PALETTE, method_colour, new_figure

from .report import final_rows, static_means


def scaling_figure(curves: pd.DataFrame, omega: float) -> Figure:
    """Real-test accuracy against generated samples (left) and against training iterations (right)."""
    fig, (left, right) = new_figure(1, 2, figsize=(10, 3.8))
    final = final_rows(curves)
    replicates = curves.replicate.nunique()
    static = static_means(final, replicates)
    left.plot(
        static.index,
        static.test_acc,
        "o-",
        color=method_colour("static"),
        label="static (unguided)",
    )
    # the omega sweep is one method: the run's omega in DP blue, the others lighter, by marker
    others = iter(("^", "v", "D", "P", "X"))
    for w, sub in final[final.strategy == "dp"].groupby("omega"):
        chosen = w == omega
        left.scatter(
            sub.generated.mean(), sub.test_acc.mean(), s=60, zorder=3,
            marker="o" if chosen else next(others, "*"),
            color=method_colour("dp", ours="dp") if chosen else PALETTE[5],
            label=f"DP (omega={w:g})" if chosen else f"DP omega={w:g}",
        )  # fmt: skip
    prune = final[final.strategy == "prune"]
    if len(prune):
        left.scatter(prune.generated.mean(), prune.test_acc.mean(), marker="s", s=50,
                     color=PALETTE[2], label="generate-then-prune")  # fmt: skip
    real = final[final.strategy == "real"]
    if len(real):
        for ax in (left, right):
            ax.axhline(real.test_acc.mean(), ls=":", color="grey", label="real split (reference)")
    left.set(xscale="log", xlabel="generated samples", ylabel="real test accuracy",
             title="accuracy vs generated samples")  # fmt: skip
    # label the static budgets only: the log axis' minor labels (2x10^2, 3x10^2, ...) overlap
    budgets = sorted(int(n) for n in static.index)
    if budgets:
        left.set_xticks(budgets)
        left.xaxis.set_major_formatter(ScalarFormatter())
        left.xaxis.set_minor_formatter(NullFormatter())
        left.tick_params(axis="x", labelsize=7)
    left.legend(fontsize=7)
    dp = curves[(curves.strategy == "dp") & (curves.omega == omega)]
    mean = dp.groupby("iteration").test_acc.mean()
    right.plot(mean.index, mean.values, color=method_colour("dp", ours="dp"), label="DP")
    if len(static):
        best_n = int(static.test_acc.idxmax())
        for n, style in ((best_n, "-"), (int(static.index.min()), "--")):
            sub = curves[(curves.strategy == "static") & (curves.n == n)]
            curve = sub.groupby("iteration").test_acc.mean()
            right.plot(
                curve.index,
                curve.values,
                style,
                color=method_colour("static"),
                label=f"static N={n}",
            )
    rounds = dp[dp.generation_round > 0].groupby("generation_round").iteration.mean()
    for it in rounds.values:
        right.axvline(it, color=method_colour("dp", ours="dp"), alpha=0.2, lw=0.8)
    right.set(xlabel="training iteration", ylabel="real test accuracy",
              title="accuracy vs iterations (DP rounds shaded)")  # fmt: skip
    right.legend(fontsize=7)
    return fig


def guidance_figure(diagnostics: pd.DataFrame) -> Figure:
    """Learner entropy and reference label agreement of samples from the same noise, per omega."""
    fig, (left, right) = new_figure(1, 2, figsize=(9, 3.4))
    stats = diagnostics.groupby("omega").agg(["mean", "std"])
    labels = [f"{w:g}" for w in stats.index]
    colour = method_colour("dp", ours="dp")
    left.bar(labels, stats["mean_entropy"]["mean"], yerr=stats["mean_entropy"]["std"], color=colour)
    left.set(xlabel="omega (0 = unguided)", ylabel="mean learner entropy (nats)", title="entropy")
    right.bar(
        labels, stats["ref_agreement"]["mean"], yerr=stats["ref_agreement"]["std"], color=colour
    )
    right.set(xlabel="omega (0 = unguided)", ylabel="reference agrees with label",
              title="label agreement", ylim=(0, 1.05))  # fmt: skip
    return fig
