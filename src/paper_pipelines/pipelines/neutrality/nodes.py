"""Thin node functions of the neutrality pipeline: unpack the validated config, call the method, return data."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.runtime import resolve_device, seed_everything, set_torch_threads
from paper_pipelines.pipelines.neutrality import generators, judges, metrics, prompts, report
from paper_pipelines.pipelines.neutrality.params import LMParams, NeutralityConfig, parse_config
from paper_pipelines.pipelines.neutrality.techniques import LABELS

logger = logging.getLogger(__name__)


def check_parameters(
    data: dict,
    prompt: dict,
    sample: dict,
    generator: dict,
    judge: dict,
    metric: dict,
    runtime: dict,
) -> NeutralityConfig:
    """Validate every parameter block before anything is computed or written."""
    cfg = parse_config(
        dict(
            data=data,
            prompts=prompt,
            sample=sample,
            generator=generator,
            judge=judge,
            metrics=metric,
            runtime=runtime,
        )
    )
    logger.info(
        "neutrality config: judge=%s, lm=%s",
        cfg.judge.type,
        cfg.generator.lm.model_path if cfg.generator.lm.enabled else "off",
    )
    return cfg


def ingest_inputs(
    authored_seeds: Mapping[str, Callable[[], pd.DataFrame]],
    authored_templates: dict,
    gold: pd.DataFrame,
    holdout: pd.DataFrame,
    cfg: NeutralityConfig,
) -> tuple[dict[str, pd.DataFrame], prompts.Templates, dict[str, pd.DataFrame]]:
    """Load and check every raw input (seeds, templates, judge sets) before any artefact is written.

    Seeds come from the authored files, or from the official Data/ folder the user points to.
    """
    if cfg.data.source == "official_dir":
        seeds = prompts.read_official_seeds(Path(cfg.data.official_dir or ""))
    else:
        seeds = prompts.read_authored_seeds(authored_seeds)
    logger.info("seeds (%s): %s", cfg.data.source, {k: len(v) for k, v in seeds.items()})
    judge_sets = {"gold": gold, "holdout": holdout}
    for name, frame in judge_sets.items():
        missing = {"prompt", "response", "label"} - set(frame.columns)
        if missing:
            raise ValueError(f"judge {name} set lacks columns {sorted(missing)}")
        bad = sorted(set(frame["label"]) - set(LABELS))
        if bad:
            raise ValueError(
                f"judge {name} set has unknown labels {bad}; allowed: {', '.join(LABELS)}"
            )
    return seeds, prompts.Templates.from_mapping(authored_templates), judge_sets


def build_prompts(
    seeds: dict[str, pd.DataFrame], templates: prompts.Templates, cfg: NeutralityConfig
) -> pd.DataFrame:
    """Sec. 5: expand the seeds into the evaluation prompts with expected labels."""
    p = cfg.prompts
    return prompts.build_prompt_table(
        seeds, templates, p.task_types, p.implicit, p.explicit, p.viewpoints, p.seed
    )


def sample_prompts(prompt_table: pd.DataFrame, cfg: NeutralityConfig) -> pd.DataFrame:
    """Stratified sample per input type (persona prompts as matched viewpoint pairs)."""
    out = prompts.stratified_sample(prompt_table, cfg.sample.per_task, cfg.sample.seed)
    logger.info("sampled %d of %d prompts", len(out), len(prompt_table))
    return out


def generate_scripted(prompt_sample: pd.DataFrame, cfg: NeutralityConfig) -> pd.DataFrame:
    """Responses of the scripted reference policies (baselines)."""
    s = cfg.generator.scripted
    return generators.scripted_responses(prompt_sample, s.policies, s.asymmetric_refused_viewpoint)


def lm_name(lm: LMParams) -> str:
    """Generator label of the real model in the results."""
    if lm.name:
        return lm.name
    if lm.model_path == "smollm2":
        return "SmolLM2-135M-Instruct"
    return Path(lm.model_path).name or lm.model_path


def generate_lm(prompt_sample: pd.DataFrame, cfg: NeutralityConfig) -> pd.DataFrame:
    """Batched greedy responses of the real instruct model (empty table when disabled)."""
    lm = cfg.generator.lm
    columns = [
        "prompt_id",
        "generator",
        "generator_kind",
        "response",
        "intended_label",
        "n_tokens",
        "seconds",
    ]
    if not lm.enabled:
        return pd.DataFrame(columns=columns)
    seed_everything(cfg.runtime.seed)
    set_torch_threads(cfg.runtime.torch_threads)
    device = resolve_device(cfg.runtime.device)
    model, tok = generators.load_causal_lm(lm.model_path, lm.dtype, device)
    logger.info("generating %d responses with %s on %s", len(prompt_sample), lm.model_path, device)
    outs = generators.generate_batched(
        model,
        tok,
        list(prompt_sample["prompt"]),
        lm.max_new_tokens,
        lm.batch_size,
        lm.use_chat_template,
        lm.system_prompt,
        lm.strip_think,
    )
    frame = pd.DataFrame(outs)
    frame.insert(0, "prompt_id", prompt_sample["prompt_id"].to_numpy())
    frame.insert(1, "generator", lm_name(lm))
    frame.insert(2, "generator_kind", "lm")
    frame.insert(4, "intended_label", None)
    return frame[columns]


def collect_responses(scripted: pd.DataFrame, lm: pd.DataFrame) -> pd.DataFrame:
    """One responses table (versioned: the expensive, model-dependent artefact)."""
    frames = [f for f in (scripted, lm) if len(f)]
    out = pd.concat(frames, ignore_index=True)
    out["intended_label"] = out["intended_label"].astype("string")
    out["n_tokens"] = out["n_tokens"].astype(int)
    out["seconds"] = out["seconds"].astype(float)
    return out


def _judge_types(cfg: NeutralityConfig) -> list[str]:
    return list(dict.fromkeys([cfg.judge.type, *cfg.judge.compare]))


def _llm_completer(cfg: NeutralityConfig) -> Callable[[list[str]], list[str]]:
    j = cfg.judge.llm
    set_torch_threads(cfg.runtime.torch_threads)
    model, tok = generators.load_causal_lm(
        j.model_path or "", j.dtype, resolve_device(cfg.runtime.device)
    )

    def complete(texts: list[str]) -> list[str]:
        outs = generators.generate_batched(
            model, tok, texts, j.max_new_tokens, j.batch_size, True, None, True
        )
        return [o["response"] for o in outs]

    return complete


def fit_judge(
    judge_sets: dict[str, pd.DataFrame], cfg: NeutralityConfig
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Fit the trainable judge on the authored gold set; validate every judge (gold CV and held-out set).

    The rules were written with the gold set in view, so its held-out score is the honest one.
    """
    gold, holdout = judge_sets["gold"], judge_sets["holdout"]
    j = cfg.judge
    fitted: dict[str, Any] = {"primary": j.type, "types": _judge_types(cfg), "features": j.features}
    validation: dict[str, Any] = {}
    if "rules" in fitted["types"]:
        rules = judges.RulesJudge()
        g = judges.macro_f1_report(
            gold["label"], [r["label"] for r in rules.annotate(gold["prompt"], gold["response"])]
        )
        h = judges.macro_f1_report(
            holdout["label"],
            [r["label"] for r in rules.annotate(holdout["prompt"], holdout["response"])],
        )
        validation["rules"] = dict(
            gold_macro_f1=g["macro_f1"],
            holdout_macro_f1=h["macro_f1"],
            gold_protocol="direct (no training)",
            gold=g,
            holdout=h,
        )
    if "embed_lr" in fitted["types"]:
        set_torch_threads(cfg.runtime.torch_threads)
        encode = judges.minilm_encoder(j.embed_batch_size)
        x_gold = judges.judge_features(encode, gold["prompt"], gold["response"], j.features)
        x_hold = judges.judge_features(encode, holdout["prompt"], holdout["response"], j.features)
        cv = judges.cross_validate_embed_lr(
            x_gold, gold["label"], j.cv_folds, j.C, j.flag_threshold, j.seed
        )
        model = judges.EmbedLRJudge.fit(x_gold, gold["label"], j.C, j.flag_threshold, j.seed)
        h = judges.macro_f1_report(
            holdout["label"], [r["label"] for r in model.annotate_features(x_hold)]
        )
        validation["embed_lr"] = dict(
            gold_macro_f1=cv["macro_f1"],
            holdout_macro_f1=h["macro_f1"],
            gold_protocol=f"{j.cv_folds}-fold stratified CV",
            gold=cv,
            holdout=h,
        )
        fitted["embed_lr"] = model
    if "llm" in fitted["types"]:
        fitted["llm"] = {
            "model_path": j.llm.model_path,
            "n_evals": j.llm.n_evals,
            "seed": j.llm.seed,
        }
        if j.llm.validate_on_gold:
            llm = judges.LLMJudge(_llm_completer(cfg), j.llm.n_evals, j.llm.seed)
            recs = llm.annotate(list(gold["prompt"]), list(gold["response"]))
            g = judges.macro_f1_report(gold["label"], [r["label"] for r in recs])
            validation["llm"] = dict(
                gold_macro_f1=g["macro_f1"],
                holdout_macro_f1=None,
                gold_protocol="direct (no training)",
                gold=g,
                malformed=sum(r["n_malformed"] for r in recs),
            )
    for name, v in validation.items():
        logger.info(
            "judge %s: gold macro-F1 %.3f, held-out macro-F1 %s",
            name,
            v["gold_macro_f1"],
            v["holdout_macro_f1"],
        )
    return fitted, validation


def annotate(
    responses: pd.DataFrame,
    prompt_sample: pd.DataFrame,
    fitted: dict[str, Any],
    cfg: NeutralityConfig,
) -> pd.DataFrame:
    """Sec. 5: label every response with each judge (six flags, final label, stance for the extension)."""
    merged = responses.merge(prompt_sample, on="prompt_id", how="left", validate="many_to_one")
    if merged["prompt"].isna().any():
        raise ValueError("responses refer to prompt ids that are not in the prompt sample")
    inputs, outputs = list(merged["prompt"]), list(merged["response"])
    frames = []
    for kind in fitted["types"]:
        if kind == "rules":
            records = judges.RulesJudge().annotate(inputs, outputs)
        elif kind == "embed_lr":
            set_torch_threads(cfg.runtime.torch_threads)
            encode = judges.minilm_encoder(cfg.judge.embed_batch_size)
            feats = judges.judge_features(encode, inputs, outputs, fitted["features"])
            records = fitted["embed_lr"].annotate_features(feats)
        else:
            llm = judges.LLMJudge(_llm_completer(cfg), cfg.judge.llm.n_evals, cfg.judge.llm.seed)
            records = llm.annotate(inputs, outputs)
        block = merged[
            [
                "prompt_id",
                "generator",
                "generator_kind",
                "task_type",
                "expected_label",
                "subset",
                "seed_id",
                "format_id",
                "viewpoint",
            ]
        ].copy()
        block.insert(2, "judge", kind)
        block["label"] = [r["label"] for r in records]
        for lab in LABELS:
            block[f"flag_{lab}"] = [bool(r["flags"][lab]) for r in records]
        block["n_valid"] = [int(r["n_valid"]) for r in records]
        block["n_malformed"] = [int(r["n_malformed"]) for r in records]
        block["agreement"] = [float(r["agreement"]) for r in records]
        block["stance"] = [
            judges.stance_of(o, r["label"]) for o, r in zip(outputs, records, strict=True)
        ]
        frames.append(block)
        logger.info("annotated %d responses with the %s judge", len(block), kind)
    return pd.concat(frames, ignore_index=True)


def output_level_metrics(annotations: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sec. 5: technique distribution per input type and alignment with the expected technique."""
    return metrics.technique_distribution(annotations), metrics.alignment_table(annotations)


def system_level_metrics(annotations: pd.DataFrame, cfg: NeutralityConfig) -> pd.DataFrame:
    """EXTENSION: uniform and reflective neutrality, and template robustness, per generator and judge."""
    out = metrics.uniform_neutrality(annotations)
    for extra in (
        metrics.reflective_neutrality(annotations, cfg.metrics.reference_stance),
        metrics.template_robustness(annotations),
    ):
        out = out.merge(extra, on=metrics.GROUP, how="outer") if len(out) else extra
    return out


def report_results(
    distribution: pd.DataFrame,
    alignment: pd.DataFrame,
    system: pd.DataFrame,
    validation: dict[str, Any],
    responses: pd.DataFrame,
    annotations: pd.DataFrame,
    prompt_table: pd.DataFrame,
    cfg: NeutralityConfig,
) -> tuple[dict[str, Any], pd.DataFrame, Figure, Figure]:
    """Metrics (the issue's contract), the results table (generator x judge x metric) and two figures."""
    results = alignment.merge(system, on=metrics.GROUP, how="left") if len(system) else alignment
    name = lm_name(cfg.generator.lm) if cfg.generator.lm.enabled else None
    headline = report.headline_metrics(
        results, validation, responses, annotations, cfg.judge.type, name, len(prompt_table)
    )
    primary = cfg.judge.type
    return (
        headline,
        results,
        report.distribution_figure(distribution, primary),
        report.symmetry_figure(annotations, system, primary),
    )
