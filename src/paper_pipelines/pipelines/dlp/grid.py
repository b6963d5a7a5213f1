"""The paper's comparison grid: every allocation (uniform, OWL, DLP) x base pruner x target sparsity,
each pruned from a fresh copy of the dense model and measured (the README table of the official code)."""

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


def pack_masks(masks: dict[str, torch.Tensor]) -> dict[str, Any]:
    """Bit-pack boolean masks (8x smaller) with their shapes, for the versioned mask artefact."""
    return {
        "names": list(masks),
        "shapes": [list(m.shape) for m in masks.values()],
        **{f"mask.{n}": torch.from_numpy(np.packbits(m.numpy().ravel())) for n, m in masks.items()},
    }


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
    """Prune a fresh copy of the dense model for every (sparsity, base pruner, allocation) and measure
    its actual sparsity and perplexity. Returns one row per run, the packed masks of the default
    configuration (``pruner.default_method``, the first base, the target sparsity) and its pruned model."""
    nm = parse_sparsity_type(pruner.sparsity_type)
    default = (pruner.default_method, pruner.bases[0], allocation.target_sparsity)
    runs, default_masks, default_model = [], {}, None
    grid = list(itertools.product(allocation.sparsities, pruner.bases, allocation.methods))
    for target, base, method in progress(grid, desc="pruning grid"):
        block_s = layer_sparsities[allocation_key(method, target)]
        if nm is not None:
            # The released unstructured DLP path ignores block ratios under N:M.
            block_s = [nm_sparsity(nm)] * len(block_s)
        model = copy.deepcopy(base_model.model)
        started = time.perf_counter()
        masks = prune_sequentially(
            model,
            calibration_ids,
            block_s,
            base,
            nm=nm,
            use_variant=pruner.use_variant,
            blocksize=pruner.sparsegpt.blocksize,
            percdamp=pruner.sparsegpt.percdamp,
            batch_size=calibration_batch,
        )
        prune_seconds = time.perf_counter() - started
        ppl = perplexity(model, evaluation_ids, evaluation_batch)
        actual = prunable_sparsity(model)
        logger.info(
            "%s + %s @ %.2f: actual sparsity %.4f, perplexity %.2f",
            method, base, target, actual, ppl,
        )  # fmt: skip
        runs.append(
            {
                "model": base_model.name,
                "allocation": method,
                "base": base,
                "target_sparsity": target,
                "actual_sparsity": actual,
                "perplexity": ppl,
                "prune_seconds": prune_seconds,
            }
        )
        if (method, base, target) == default:
            default_masks = pack_masks(masks)
            default_model = CausalLM(model, base_model.tokenizer, base_model.name)
        else:
            del model
    return pd.DataFrame(runs), default_masks, default_model
