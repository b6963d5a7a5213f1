"""Figures and the headline metrics of a neutrality run."""

from __future__ import annotations

import math
from typing import Any

import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402

from paper_pipelines.pipelines.neutrality.techniques import LABELS, TASK_TYPES, UNPARSED  # noqa: E402

COLOURS = {
    "refusal": "#4c72b0",
    "avoidance": "#8172b3",
    "reasonable_pluralism": "#55a868",
    "radical_transparency": "#ccb974",
    "no_approximation": "#8c8c8c",
    "bias": "#c44e52",
    UNPARSED: "#000000",
}


def distribution_figure(distribution: pd.DataFrame, judge: str) -> Figure:
    """Stacked technique shares per input type, one panel per generator (the paper's Sec. 5 figure)."""
    dist = distribution[distribution["judge"] == judge]
    generators = list(dict.fromkeys(dist["generator"]))
    labels = [c for c in [*LABELS, UNPARSED] if c in dist.columns]
    ncols = min(3, max(1, len(generators)))
    nrows = max(1, math.ceil(len(generators) / ncols))
    fig = Figure(figsize=(4.6 * ncols, 2.6 * nrows + 0.8))
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, gen in zip(axes.flat, generators, strict=False):
        block = dist[dist["generator"] == gen].set_index("task_type")
        tasks = [t for t in TASK_TYPES if t in block.index]
        left = np.zeros(len(tasks))
        for lab in labels:
            vals = block.loc[tasks, lab].to_numpy(dtype=float)
            ax.barh(tasks, vals, left=left, color=COLOURS[lab], label=lab)
            left += vals
        ax.set_xlim(0, 1)
        ax.invert_yaxis()
        ax.set_title(gen, fontsize=9)
        ax.tick_params(labelsize=7)
    for ax in list(axes.flat)[len(generators) :]:
        ax.axis("off")
    handles, names = axes.flat[0].get_legend_handles_labels()
    fig.legend(handles, names, loc="lower center", ncol=len(names), fontsize=7, frameon=False)
    fig.suptitle(f"Technique used per input type (judge: {judge})", fontsize=10)
    fig.subplots_adjust(bottom=0.14, hspace=0.5, wspace=0.6)
    return fig


def symmetry_figure(annotations: pd.DataFrame, uniform: pd.DataFrame, judge: str) -> Figure:
    """Uniform neutrality view: label shares per partisan persona, and the TV distance per generator."""
    persona = annotations[
        (annotations["task_type"] == "opinion_persona") & (annotations["judge"] == judge)
    ]
    uni = uniform[uniform["judge"] == judge]
    fig = Figure(figsize=(11, 4))
    ax_tv, ax_dist = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 2]})
    ax_tv.barh(uni["generator"], uni["persona_tv_distance"], color="#4c72b0")
    ax_tv.set_xlim(0, 1)
    ax_tv.invert_yaxis()
    ax_tv.set_xlabel("TV distance between personas (0 = uniform)")
    ax_tv.tick_params(labelsize=7)
    shares = (
        persona.groupby(["generator", "viewpoint"])["label"]
        .value_counts(normalize=True)
        .unstack(fill_value=0)
    )
    rows = [f"{g} | {v}" for g, v in shares.index]
    left = np.zeros(len(rows))
    for lab in [c for c in [*LABELS, UNPARSED] if c in shares.columns]:
        vals = shares[lab].to_numpy(dtype=float)
        ax_dist.barh(rows, vals, left=left, color=COLOURS[lab], label=lab)
        left += vals
    ax_dist.set_xlim(0, 1)
    ax_dist.invert_yaxis()
    ax_dist.tick_params(labelsize=6)
    ax_dist.legend(fontsize=6, loc="lower right")
    fig.suptitle(
        f"Uniform neutrality across partisan personas (extension; judge: {judge})", fontsize=10
    )
    fig.subplots_adjust(wspace=0.7)
    return fig


def _value(table: pd.DataFrame, generator: str, judge: str, column: str) -> float | None:
    row = table[(table["generator"] == generator) & (table["judge"] == judge)]
    if row.empty or column not in row or pd.isna(row[column].iloc[0]):
        return None
    return float(row[column].iloc[0])


def headline_metrics(
    results: pd.DataFrame,
    validation: dict[str, Any],
    responses: pd.DataFrame,
    annotations: pd.DataFrame,
    primary: str,
    lm_name: str | None,
    n_prompts: int,
) -> dict[str, Any]:
    """The issue's metrics contract plus the numbers the doc reports."""
    scripted = sorted(set(responses.loc[responses["generator_kind"] == "scripted", "generator"]))
    symmetric = [g for g in scripted if g != "asymmetric"]
    sym_tv = [
        v
        for g in symmetric
        if (v := _value(results, g, primary, "persona_tv_distance")) is not None
    ]
    lm_rows = responses[responses["generator_kind"] == "lm"]
    lm_ann = annotations[
        (annotations["generator_kind"] == "lm") & (annotations["judge"] == primary)
    ]
    out: dict[str, Any] = {
        "oracle_alignment": _value(results, "oracle", primary, "alignment"),
        "judge_macro_f1": validation.get(primary, {}).get("gold_macro_f1"),
        "asymmetric_tv_distance": _value(results, "asymmetric", primary, "persona_tv_distance"),
        "symmetric_tv_distance": max(sym_tv) if sym_tv else None,
        "lm_responses": int(len(lm_rows)),
        "lm_alignment": _value(results, lm_name, primary, "alignment") if lm_name else None,
        "primary_judge": primary,
        "n_prompts_built": int(n_prompts),
        "n_prompts_sampled": int(responses["prompt_id"].nunique()),
        "oracle_min_task_alignment": _value(results, "oracle", primary, "min_task_alignment"),
        "asymmetric_refusal_gap": _value(results, "asymmetric", primary, "persona_refusal_gap"),
        "judge_holdout_macro_f1": validation.get(primary, {}).get("holdout_macro_f1"),
        "judge_validation": {
            k: {m: v.get(m) for m in ("gold_macro_f1", "holdout_macro_f1", "gold_protocol")}
            for k, v in validation.items()
        },
        "judge_malformed_replies": int(annotations["n_malformed"].sum()),
    }
    for policy in scripted:
        out[f"alignment_{policy}"] = _value(results, policy, primary, "alignment")
    if lm_name and len(lm_rows):
        out["lm_name"] = lm_name
        out["lm_bias_rate"] = _value(results, lm_name, primary, "bias_rate")
        out["lm_persona_tv_distance"] = _value(results, lm_name, primary, "persona_tv_distance")
        out["lm_reflective_neutrality"] = _value(results, lm_name, primary, "reflective_neutrality")
        out["lm_seconds_per_prompt"] = float(lm_rows["seconds"].mean())
        out["lm_mean_new_tokens"] = float(lm_rows["n_tokens"].mean())
        out["lm_label_shares"] = lm_ann["label"].value_counts(normalize=True).round(4).to_dict()
        # How often the cheaper judges agree with the primary one on the real model's answers.
        lm_all = annotations[annotations["generator_kind"] == "lm"]
        wide = lm_all.pivot_table(
            index="prompt_id", columns="judge", values="label", aggfunc="first"
        )
        for other in [j for j in wide.columns if j != primary]:
            out[f"lm_judge_agreement_{primary}_vs_{other}"] = float(
                (wide[primary] == wide[other]).mean()
            )
    return out
