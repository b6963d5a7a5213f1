"""Thin node functions of the neutrality pipeline: typed blocks in, the method called, data out."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

import pandas as pd

from paper_pipelines.common import generation
from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.lm import CausalLM
from paper_pipelines.common.runtime import apply_runtime, seed_everything, substream_seed
from paper_pipelines.pipelines.neutrality import figures, generators, judges, metrics, report
from paper_pipelines.pipelines.neutrality.baselines import scripted_responses
from paper_pipelines.pipelines.neutrality.data import check_judge_set, read_seeds
from paper_pipelines.pipelines.neutrality.parameters import (
    DataParams,
    EvaluationParams,
    GeneratorParams,
    JudgeParams,
    PromptParams,
    RuntimeParams,
    SampleParams,
    Seed,
)
from paper_pipelines.pipelines.neutrality.prompts import (
    Templates,
    build_prompt_table,
    stratified_sample,
)

logger = logging.getLogger(__name__)


# ----------------------------------------------------------------------------------------- ingest
def ingest_seeds(
    seed_files: Mapping[str, Callable[[], pd.DataFrame]],
    authored_templates: dict,
    data: DataParams,
) -> tuple[dict[str, pd.DataFrame], Templates]:
    """Load and check the seed files (authored, or the official Data/ CSVs) and the templates."""
    seeds = read_seeds(seed_files, data.source)
    logger.info("seeds (%s): %s", data.source, {k: len(v) for k, v in seeds.items()})
    return seeds, Templates.from_mapping(authored_templates)


def ingest_judge_sets(
    judge_gold: pd.DataFrame,
    judge_holdout: pd.DataFrame,
    judge_holdout_lm: pd.DataFrame,
    judge_lm: CausalLM | None,
    judge: JudgeParams,
) -> dict[str, pd.DataFrame]:
    """Check the judge's labelled answer sets, and that an LLM judge has its model, before any write."""
    if "llm" in judge.types and judge_lm is None:
        raise ValueError(
            "neutrality.judge uses the 'llm' judge, but the catalog entry neutrality.judge_lm holds no "
            "model: point it at an instruct model folder (type paper_pipelines.datasets.CausalLMDataset, "
            "source hf_folder, path ...; see conf/paper/catalog/neutrality.yml), or use the rules or "
            "embed_lr judge"
        )
    return {
        "gold": check_judge_set("gold", judge_gold),
        "holdout": check_judge_set("holdout", judge_holdout),
        # real model answers no judge was built with, labelled by hand afterwards
        "holdout_lm": check_judge_set("holdout_lm", judge_holdout_lm),
    }


# ------------------------------------------------------------------------------------- preprocess
def build_prompts(
    seeds: dict[str, pd.DataFrame], templates: Templates, prompts: PromptParams
) -> pd.DataFrame:
    """Sec. 5: expand the seeds into the evaluation prompts with expected labels."""
    return build_prompt_table(
        seeds, templates, prompts.task_types, prompts.implicit, prompts.explicit, prompts.viewpoints
    )


def sample_prompts(prompts_table: pd.DataFrame, sample: SampleParams, seed: Seed) -> pd.DataFrame:
    """Stratified sample per input type (persona prompts as matched viewpoint pairs)."""
    out = stratified_sample(prompts_table, sample.per_task, substream_seed(seed, "sample"))
    logger.info("sampled %d of %d prompts", len(out), len(prompts_table))
    return out


# --------------------------------------------------------------------------- generate and annotate
def generate_scripted(prompt_sample: pd.DataFrame, generator: GeneratorParams) -> pd.DataFrame:
    """Responses of the scripted reference policies (baselines)."""
    s = generator.scripted
    return scripted_responses(prompt_sample, s.policies, s.asymmetric_refused_viewpoint)


def generate_lm(
    prompt_sample: pd.DataFrame,
    generator_lm: CausalLM | None,
    generator: GeneratorParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    """Batched greedy responses of the evaluated model (an empty table when the catalog names none)."""
    if generator_lm is None:
        return generators.empty_responses()
    device = apply_runtime(runtime)
    seed_everything(substream_seed(seed, "generator"))
    return generators.lm_responses(generator_lm, prompt_sample, generator.lm, device)


def collect_responses(scripted: pd.DataFrame, lm: pd.DataFrame) -> pd.DataFrame:
    """One responses table (versioned: the expensive, model-dependent artefact)."""
    frames = [f for f in (scripted, lm) if len(f)]
    out = pd.concat(frames, ignore_index=True)
    out["intended_label"] = out["intended_label"].astype("string")
    out["n_tokens"] = out["n_tokens"].astype(int)
    out["seconds"] = out["seconds"].astype(float)
    return out


def _encoder(judge: JudgeParams, runtime: RuntimeParams, types: list[str]) -> Any:
    if "embed_lr" not in types:
        return None
    encode = judges.minilm_encoder(judge.embed_batch_size)  # imports torch first
    apply_runtime(runtime)
    return encode


def _llm_judge(
    judge_lm: CausalLM | None, judge: JudgeParams, runtime: RuntimeParams
) -> judges.LLMJudge | None:
    if judge_lm is None:
        return None
    j = judge.llm
    complete = generation.completer(
        judge_lm, j.max_new_tokens, j.batch_size, apply_runtime(runtime)
    )
    return judges.LLMJudge(complete, j.n_evals)


def fit_judge(
    judge_sets: dict[str, pd.DataFrame],
    judge_lm: CausalLM | None,
    judge: JudgeParams,
    seed: Seed,
    runtime: RuntimeParams,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Fit the trainable judge on the authored gold set; validate every judge (gold CV, held-out set)."""
    validate_llm = "llm" in judge.types and judge.llm.validate_on_gold
    llm = _llm_judge(judge_lm, judge, runtime) if validate_llm else None
    return judges.fit_and_validate(
        judge_sets["gold"],
        judge_sets["holdout"],
        judge,
        substream_seed(seed, "judge"),
        _encoder(judge, runtime, judge.types),
        llm,
        holdout_lm=judge_sets.get("holdout_lm"),
    )


def annotate(
    responses: pd.DataFrame,
    prompt_sample: pd.DataFrame,
    fitted_judge: dict[str, Any],
    judge_lm: CausalLM | None,
    judge: JudgeParams,
    runtime: RuntimeParams,
) -> pd.DataFrame:
    """Sec. 5: label every response with each judge (six flags, final label, stance)."""
    types = fitted_judge["types"]
    llm = _llm_judge(judge_lm, judge, runtime) if "llm" in types else None
    encode = _encoder(judge, runtime, types)
    return judges.annotate_responses(responses, prompt_sample, fitted_judge, encode, llm)


# --------------------------------------------------------------------------------------- evaluate
def output_level_metrics(annotations: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sec. 5: technique distribution per input type and alignment with the expected technique."""
    return metrics.technique_distribution(annotations), metrics.alignment_table(annotations)


def system_level_metrics(annotations: pd.DataFrame, evaluation: EvaluationParams) -> pd.DataFrame:
    """EXTENSION: uniform and reflective neutrality, and template robustness, per generator and judge."""
    reference = evaluation.reference_stance.model_dump()
    out = metrics.uniform_neutrality(annotations)
    for extra in (
        metrics.reflective_neutrality(annotations, reference),
        metrics.template_robustness(annotations),
    ):
        out = out.merge(extra, on=metrics.GROUP, how="outer") if len(out) else extra
    return out


def score_generators(alignment: pd.DataFrame, system: pd.DataFrame) -> pd.DataFrame:
    """Every generator under every judge: alignment and system-level metrics in one table."""
    return report.scores_table(alignment, system)


def report_metrics(
    scores: pd.DataFrame,
    validation: dict[str, Any],
    responses: pd.DataFrame,
    annotations: pd.DataFrame,
    prompts_table: pd.DataFrame,
    judge: JudgeParams,
) -> dict[str, Any]:
    """The headline metrics (the contract in report.METRICS)."""
    return report.headline_metrics(
        scores,
        validation,
        responses,
        annotations,
        judge.type,
        report.lm_label(responses),
        len(prompts_table),
    )


def report_results(
    scores: pd.DataFrame, responses: pd.DataFrame, judge: JudgeParams
) -> pd.DataFrame:
    """One row per method (scripted policy or model) under the primary judge."""
    return report.results_by_method(scores, responses, judge.type)


def distribution_plot(distribution: pd.DataFrame, judge: JudgeParams) -> figures.Figure:
    """Technique shares per input type and generator (primary judge)."""
    return figures.distribution_figure(distribution, judge.type)


def symmetry_plot(
    annotations: pd.DataFrame, system: pd.DataFrame, judge: JudgeParams
) -> figures.Figure:
    """Uniform neutrality across the partisan personas (primary judge)."""
    return figures.symmetry_figure(annotations, system, judge.type)


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim (report.CLAIMS) with our value and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "neutrality")
