"""The paper's comparison grid: every allocation (uniform, OWL, DLP) x base pruner x target sparsity,
each pruned from the dense weights and measured (the README table of the official code)."""

from __future__ import annotations

import copy
import itertools
import logging
import time
from typing import Any

import numpy as np
import pandas as pd
import torch

from paper_pipelines.common.lm import CausalLM
from paper_pipelines.common.progress import progress
from paper_pipelines.pipelines.dlp.allocation import dlp_sparsities
from paper_pipelines.pipelines.dlp.baselines import owl_sparsities, uniform_sparsities
from paper_pipelines.pipelines.dlp.memory import PeakProbe
from paper_pipelines.pipelines.dlp.metrics import perplexity, prunable_sparsity
from paper_pipelines.pipelines.dlp.parameters import AllocationParams, PrunerParams
from paper_pipelines.pipelines.dlp.pruners import nm_sparsity, parse_sparsity_type
from paper_pipelines.pipelines.dlp.sequential import prune_sequentially

logger = logging.getLogger(__name__)


def allocation_key(method: str, target: float) -> str:
    """Key of one allocation in the layer-sparsities JSON, e.g. ``dlp@0.7`` (the released ratios/*.json)."""
    return f"{method}@{target:g}"


def allocate(
    method: str, layer_scores: pd.DataFrame, target: float, allocation: AllocationParams
) -> np.ndarray:
    """Per-block sparsities of one allocation method at one target sparsity."""
    if method == "uniform":
        return uniform_sparsities(len(layer_scores), target)
    if method == "owl":
        return owl_sparsities(
            layer_scores["outlier_ratio"], target, allocation.owl.lam, allocation.min_layer_sparsity
        )
    stat = "mean" if method == "dlp_mean" else allocation.dlp.score_stat
    return dlp_sparsities(
        layer_scores[f"{stat}_score"],
        target,
        allocation.dlp.alpha,
        allocation.min_layer_sparsity,
    )


def pack_masks(masks: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The versioned mask artefact: names, shapes and the bits of every mask (sequential.pack_mask)."""
    return {
        "names": list(masks),
        "shapes": [m["shape"] for m in masks.values()],
        **{f"mask.{n}": m["bits"] for n, m in masks.items()},
    }


def restore_dense(working: torch.nn.Module, dense: torch.nn.Module) -> None:
    """Copy the dense weights back into the working copy, in place (no new model is allocated)."""
    with torch.no_grad():
        for (name, w), (dense_name, d) in zip(
            working.state_dict(keep_vars=True).items(),
            dense.state_dict(keep_vars=True).items(),
            strict=True,
        ):
            if name != dense_name or w.shape != d.shape:
                raise ValueError(f"working copy and dense model differ at {name} / {dense_name}")
            w.data.copy_(d.data)


def run_order(grid: list[tuple[float, str, str]], default: tuple[float, str, str]) -> list[int]:
    """Indices of `grid` in the order they run: the default configuration last, so its pruned model
    is the working copy at the end and no second pruned copy is ever kept."""
    first = [i for i, cell in enumerate(grid) if cell != default]
    return first + [i for i, cell in enumerate(grid) if cell == default]


def prune_grid(
    base_model: CausalLM,
    calibration_ids: torch.Tensor,
    evaluation_ids: torch.Tensor,
    layer_sparsities: dict[str, Any],
    pruner: PrunerParams,
    allocation: AllocationParams,
    calibration_batch: int,
    evaluation_batch: int,
) -> tuple[pd.DataFrame, dict[str, Any], CausalLM]:
    """Prune the dense model for every (sparsity, base pruner, allocation) and measure its actual
    sparsity and perplexity. Returns one row per run (in grid order), the packed masks of the default
    configuration (``pruner.default_method``, the first base, the target sparsity) and its pruned model.

    Memory: the dense model plus ONE working copy at any time. The copy is made once; before each
    later run the dense weights are copied back into it (:func:`restore_dense`); the default
    configuration runs last and its working copy is returned. Each row records the run's peak
    memory in model sizes (``peak_memory_model_copies``, see memory.py)."""
    nm = parse_sparsity_type(pruner.sparsity_type)
    default = (allocation.target_sparsity, pruner.bases[0], pruner.default_method)
    grid = list(itertools.product(allocation.sparsities, pruner.bases, allocation.methods))
    probe = PeakProbe(base_model.model)
    working = copy.deepcopy(base_model.model)
    rows: dict[int, dict[str, Any]] = {}
    default_masks: dict[str, Any] = {}
    order = run_order(grid, default)
    for step, index in enumerate(progress(order, desc="pruning grid")):
        target, base, method = grid[index]
        block_s = layer_sparsities[allocation_key(method, target)]
        if nm is not None:
            # The released unstructured DLP path ignores block ratios under N:M.
            block_s = [nm_sparsity(nm)] * len(block_s)
        probe.start()
        if step > 0:
            restore_dense(working, base_model.model)
        is_default = grid[index] == default
        started = time.perf_counter()
        masks = prune_sequentially(
            working,
            calibration_ids,
            block_s,
            base,
            nm=nm,
            use_variant=pruner.use_variant,
            blocksize=pruner.sparsegpt.blocksize,
            percdamp=pruner.sparsegpt.percdamp,
            batch_size=calibration_batch,
            mask_rule=pruner.sparsegpt.mask_rule,
            keep_masks=is_default,
        )
        prune_seconds = time.perf_counter() - started
        ppl = perplexity(working, evaluation_ids, evaluation_batch)
        actual = prunable_sparsity(working)
        copies = probe.model_copies()
        logger.info(
            "%s + %s @ %.2f: actual sparsity %.4f, perplexity %.2f, peak memory %s model copies",
            method, base, target, actual, ppl, "n/a" if copies is None else f"{copies:.2f}",
        )  # fmt: skip
        rows[index] = {
            "model": base_model.name,
            "dtype": str(next(working.parameters()).dtype).removeprefix("torch."),
            "allocation": method,
            "base": base,
            "target_sparsity": target,
            "actual_sparsity": actual,
            "perplexity": ppl,
            "prune_seconds": prune_seconds,
            "peak_memory_model_copies": copies,
            "cuda_peak_model_copies": probe.cuda_model_copies(),
        }
        if is_default:
            default_masks = pack_masks(masks)
    runs = pd.DataFrame([rows[i] for i in range(len(grid))])
    return runs, default_masks, CausalLM(working, base_model.tokenizer, base_model.name)
