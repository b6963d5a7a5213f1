"""dlp nodes: typed parameter blocks in, the method modules called, data out (no I/O, no plotting)."""

from __future__ import annotations

import logging
from typing import Any

import pandas as pd
import torch
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.lm import CausalLM
from paper_pipelines.common.runtime import apply_runtime, seed_everything
from paper_pipelines.pipelines.dlp import data as corpus
from paper_pipelines.pipelines.dlp import figures, report
from paper_pipelines.pipelines.dlp.grid import allocate, allocation_key, prune_grid
from paper_pipelines.pipelines.dlp.lm import encode, train_tiny_llama
from paper_pipelines.pipelines.dlp.metrics import perplexity, zero_shot_accuracy
from paper_pipelines.pipelines.dlp.parameters import (
    AllocationParams,
    DataParams,
    EvaluationParams,
    ModelParams,
    PrunerParams,
    RecoveryParams,
    RuntimeParams,
    Seed,
    TinyParams,
)
from paper_pipelines.pipelines.dlp.recovery import lora_recovery
from paper_pipelines.pipelines.dlp.sequential import score_blocks

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_corpus(c4_train: Any, wikitext2_test: Any, data: DataParams, seed: Seed) -> dict[str, str]:
    """Training and test text, split by document so that no test text is seen in calibration."""
    return corpus.load_text(data.source, data.train_frac, seed, c4_train, wikitext2_test)


def load_base_model(
    pretrained_lm: CausalLM,
    text: dict[str, str],
    model: ModelParams,
    tiny: TinyParams,
    runtime: RuntimeParams,
    seed: Seed,
) -> CausalLM:
    """The dense causal LM to prune: the catalog's pretrained LM, or a tiny LLaMA trained on the text."""
    device = apply_runtime(runtime)
    seed_everything(seed)
    if model.source == "tiny_scratch":
        loaded = train_tiny_llama(text["train"], **tiny.model_dump(), seed=seed)
    else:
        loaded = pretrained_lm
    dtype = None if model.dtype is None else getattr(torch, model.dtype)
    loaded.model.to(device=device, dtype=dtype).eval()
    n_params = sum(p.numel() for p in loaded.model.parameters())
    logger.info(
        "base model %s: %.1fM parameters, %s, on %s",
        loaded.name, n_params / 1e6, next(loaded.model.parameters()).dtype, device,
    )  # fmt: skip
    return loaded


# ---------------------------------------------------------------- preprocess
def make_windows(
    text: dict[str, str], base_model: CausalLM, data: DataParams, seed: Seed
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Tokenise both splits: N random calibration windows (plus the whole training split, for LoRA)
    and consecutive evaluation windows."""
    train_ids = encode(base_model.tokenizer, text["train"])
    test_ids = encode(base_model.tokenizer, text["test"])
    if "train_documents" in text:  # C4: the released per-document sampling
        calib = corpus.document_windows(
            text["train_documents"],
            lambda doc: encode(base_model.tokenizer, doc, special_tokens=True),
            data.nsamples,
            data.seqlen,
            seed,
        )
    else:
        calib = corpus.calibration_windows(train_ids, data.nsamples, data.seqlen, seed)
    evaluation_ids = corpus.evaluation_windows(test_ids, data.seqlen, data.eval_windows)
    logger.info(
        "tokens: train %d, test %d; calibration %s, evaluation %s",
        train_ids.numel(), test_ids.numel(), tuple(calib.shape), tuple(evaluation_ids.shape),
    )  # fmt: skip
    return {"input_ids": calib, "train_ids": train_ids}, {"input_ids": evaluation_ids}


# ---------------------------------------------------------------- prune
def score_layers(
    base_model: CausalLM,
    calibration: dict[str, torch.Tensor],
    allocation: AllocationParams,
    data: DataParams,
) -> pd.DataFrame:
    """One dense calibration pass: per block the median and mean Wanda score and OWL's outlier ratio."""
    return score_blocks(
        base_model.model, calibration["input_ids"], allocation.owl.m, data.batch_size
    )


def allocate_sparsity(layer_scores: pd.DataFrame, allocation: AllocationParams) -> dict[str, Any]:
    """Per-block sparsities for every allocation method and sparsity (the released ratios/*.json)."""
    return {
        allocation_key(method, target): [
            float(x) for x in allocate(method, layer_scores, target, allocation)
        ]
        for target in allocation.sparsities
        for method in allocation.methods
    }


def prune_and_measure(
    base_model: CausalLM,
    calibration: dict[str, torch.Tensor],
    evaluation_windows: dict[str, torch.Tensor],
    layer_sparsities: dict[str, Any],
    pruner: PrunerParams,
    allocation: AllocationParams,
    data: DataParams,
    evaluation: EvaluationParams,
) -> tuple[pd.DataFrame, dict[str, Any], CausalLM]:
    """Every (allocation, base pruner, sparsity) pruned and measured: the run table, the default
    configuration's masks and its pruned model."""
    return prune_grid(
        base_model,
        calibration["input_ids"],
        evaluation_windows["input_ids"],
        layer_sparsities,
        pruner,
        allocation,
        data.batch_size,
        evaluation.batch_size,
    )


def recover_with_lora(
    pruned_model: CausalLM,
    calibration: dict[str, torch.Tensor],
    evaluation_windows: dict[str, torch.Tensor],
    recovery: RecoveryParams,
    evaluation: EvaluationParams,
    seed: Seed,
) -> dict[str, Any]:
    """Optional PEFT stage: LoRA-fine-tune the default pruned model and re-measure perplexity."""
    if not recovery.enabled:
        return {"enabled": False}
    return lora_recovery(
        pruned_model.model,
        calibration["train_ids"],
        evaluation_windows["input_ids"],
        evaluation.batch_size,
        seed,
        **recovery.model_dump(exclude={"enabled"}),
    )


# ---------------------------------------------------------------- evaluate
def dense_perplexity(
    base_model: CausalLM, evaluation_windows: dict[str, torch.Tensor], evaluation: EvaluationParams
) -> float:
    """Perplexity of the unpruned model on the evaluation windows."""
    ppl = perplexity(base_model.model, evaluation_windows["input_ids"], evaluation.batch_size)
    logger.info("dense perplexity %.2f", ppl)
    return ppl


def zero_shot(pruned_model: CausalLM, evaluation: EvaluationParams) -> dict[str, Any]:
    """Zero-shot accuracy of the default pruned model, where lm-evaluation-harness and data exist."""
    return zero_shot_accuracy(
        pruned_model.model, pruned_model.tokenizer, evaluation.zero_shot_tasks
    )


def summarise(
    pruning_runs: pd.DataFrame,
    dense_ppl: float,
    layer_sparsities: dict[str, Any],
    recovery_result: dict[str, Any],
    zero_shot_result: dict[str, Any],
    allocation: AllocationParams,
    pruner: PrunerParams,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The headline metrics and the results table (one row per allocation method)."""
    metrics = report.build_metrics(
        pruning_runs,
        dense_ppl,
        layer_sparsities,
        recovery_result,
        zero_shot_result,
        allocation,
        pruner,
    )
    results = report.build_results(pruning_runs, dense_ppl, layer_sparsities, allocation, pruner)
    return metrics, results


def check_claims(metrics: dict[str, Any]) -> pd.DataFrame:
    """Each claim of the paper with our value, the paper's, and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "dlp")


def plot_allocations(layer_sparsities: dict[str, Any], allocation: AllocationParams) -> Figure:
    """Sparsity per block for each allocation at the target sparsity."""
    return figures.allocation_figure(
        layer_sparsities, allocation.methods, allocation.target_sparsity
    )


def plot_perplexity(pruning_runs: pd.DataFrame, dense_ppl: float) -> Figure:
    """Perplexity against target sparsity, one line per allocation and base pruner."""
    return figures.perplexity_figure(pruning_runs, dense_ppl)
