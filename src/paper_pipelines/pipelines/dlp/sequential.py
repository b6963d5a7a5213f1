"""The block-by-block walks: a dense scoring pass (for DLP/OWL) and sequential pruning."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import pandas as pd
import torch

from paper_pipelines.common.progress import progress
from paper_pipelines.pipelines.dlp.calibration import (
    capture_block_inputs,
    collect_statistics,
    decoder_blocks,
    find_linears,
    run_block,
)
from paper_pipelines.pipelines.dlp.importance import block_score, outlier_ratio, wanda_importance
from paper_pipelines.pipelines.dlp.pruners import prune_magnitude, prune_sparsegpt, prune_wanda

logger = logging.getLogger(__name__)

BASE_PRUNERS = ("wanda", "sparsegpt", "magnitude")


@torch.no_grad()
def score_blocks(
    model: torch.nn.Module, calibration_ids: torch.Tensor, owl_m: float, batch_size: int
) -> pd.DataFrame:
    """DLP steps 1-3 on the DENSE model: per block, the Wanda scores of all its linears, summarised as
    median and mean (DLP's U_l) and OWL's outlier ratio at threshold M. Dense outputs feed the next block."""
    inputs = capture_block_inputs(model, calibration_ids, batch_size)
    rows = []
    blocks = decoder_blocks(model)
    for index, block in enumerate(progress(blocks, desc="dense scoring pass")):
        stats, outputs = collect_statistics(block, inputs)
        scores = torch.cat(
            [
                wanda_importance(lin.weight.data, stats[name].scaler_row).flatten()
                for name, lin in find_linears(block).items()
            ]
        )
        rows.append(
            {
                "block": index,
                "median_score": block_score(scores, "median"),
                "mean_score": block_score(scores, "mean"),
                "outlier_ratio": outlier_ratio(scores, owl_m),
                "n_weights": scores.numel(),
            }
        )
        inputs = outputs
        logger.debug(
            "scored block %d/%d: median %.4g", index + 1, len(blocks), rows[-1]["median_score"]
        )
    return pd.DataFrame(rows)


@torch.no_grad()
def prune_sequentially(
    model: torch.nn.Module,
    calibration_ids: torch.Tensor | None,
    block_sparsities: Sequence[float],
    base: str,
    nm: tuple[int, int] | None = None,
    use_variant: bool = False,
    blocksize: int = 128,
    percdamp: float = 0.01,
    batch_size: int = 16,
) -> dict[str, torch.Tensor]:
    """DLP step 6: prune block l at sparsity s_l with the base pruner, in order, feeding the PRUNED
    outputs of blocks 0..l-1 into block l (statistics are re-collected per block). Mutates `model`
    and returns the boolean mask (True = pruned) of every linear, keyed by its full name."""
    if base not in BASE_PRUNERS:
        raise ValueError(f"unknown base pruner {base!r}; choose one of {BASE_PRUNERS}")
    blocks = decoder_blocks(model)
    if len(block_sparsities) != len(blocks):
        raise ValueError(f"got {len(block_sparsities)} block sparsities for {len(blocks)} blocks")
    masks: dict[str, torch.Tensor] = {}
    needs_data = base != "magnitude"
    inputs = capture_block_inputs(model, calibration_ids, batch_size) if needs_data else None
    started = time.perf_counter()
    walk = progress(zip(blocks, block_sparsities, strict=True), f"pruning with {base}", len(blocks))
    for index, (block, sparsity) in enumerate(walk):
        linears = find_linears(block)
        if needs_data:
            stats, _ = collect_statistics(block, inputs, with_hessian=base == "sparsegpt")
        for name, lin in linears.items():
            if base == "wanda":
                mask = prune_wanda(lin, stats[name].scaler_row, sparsity, nm, use_variant)
            elif base == "sparsegpt":
                mask = prune_sparsegpt(lin, stats[name].hessian, sparsity, nm, blocksize, percdamp)
            else:
                mask = prune_magnitude(lin, sparsity, nm)
            masks[f"block{index}.{name}"] = mask.cpu()
        if needs_data:
            inputs = run_block(block, inputs)
    logger.info(
        "pruned %d blocks with %s in %.1f s", len(blocks), base, time.perf_counter() - started
    )
    return masks
