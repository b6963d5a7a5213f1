"""The block-by-block walks: a dense scoring pass (for DLP/OWL) and sequential pruning."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
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


def packed_size(numel: int) -> int:
    """Bytes of a packed mask of `numel` weights."""
    return (numel + 7) // 8


def pack_mask(mask: torch.Tensor, out: torch.Tensor | None = None) -> dict[str, Any]:
    """A boolean mask as bits on the CPU (numpy.packbits of the flattened mask) with its shape.

    With `out` (a uint8 view of packed_size bytes) the bits are written there: masks of a whole model
    then share one buffer allocated up front, instead of hundreds of small long-lived allocations
    that fragment the heap between the large temporary ones (measured: one model size more peak RSS
    on SmolLM2 when each mask had its own allocation).
    """
    bits = torch.from_numpy(np.packbits(mask.cpu().numpy().ravel()))
    if out is not None:
        out.copy_(bits)
        bits = out
    return {"shape": list(mask.shape), "bits": bits}


def unpack_mask(packed: dict[str, Any]) -> torch.Tensor:
    """The boolean mask of :func:`pack_mask`."""
    n = int(np.prod(packed["shape"]))
    bits = np.unpackbits(packed["bits"].numpy())[:n]
    return torch.from_numpy(bits.astype(bool)).reshape(packed["shape"])


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
    mask_rule: str = "exact",
    keep_masks: bool = True,
) -> dict[str, dict[str, Any]]:
    """DLP step 6: prune block l at sparsity s_l with the base pruner, in order, feeding the PRUNED
    outputs of blocks 0..l-1 into block l (statistics are re-collected per block). Mutates `model`
    and returns the boolean mask (True = pruned) of every linear, keyed by its full name, bit-packed
    on the CPU (:func:`unpack_mask`; an 8th of a byte per weight); none when `keep_masks` is False."""
    if base not in BASE_PRUNERS:
        raise ValueError(f"unknown base pruner {base!r}; choose one of {BASE_PRUNERS}")
    blocks = decoder_blocks(model)
    if len(block_sparsities) != len(blocks):
        raise ValueError(f"got {len(block_sparsities)} block sparsities for {len(blocks)} blocks")
    masks: dict[str, dict[str, Any]] = {}
    if keep_masks:
        sizes = [
            packed_size(lin.weight.numel()) for b in blocks for lin in find_linears(b).values()
        ]
        buffer = torch.empty(sum(sizes), dtype=torch.uint8)
        offset = 0
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
                mask = prune_sparsegpt(
                    lin, stats[name].hessian, sparsity, nm, blocksize, percdamp, mask_rule
                )
            else:
                mask = prune_magnitude(lin, sparsity, nm)
            if keep_masks:
                size = packed_size(mask.numel())
                masks[f"block{index}.{name}"] = pack_mask(mask, buffer[offset : offset + size])
                offset += size
        if needs_data:
            del stats  # the Hessians (C_in^2 floats per linear) go before the next block's
            inputs = run_block(block, inputs)
    logger.info(
        "pruned %d blocks with %s in %.1f s", len(blocks), base, time.perf_counter() - started
    )
    return masks
