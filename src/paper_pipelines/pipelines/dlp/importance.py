"""Weight-activation importance and the per-block statistics that DLP and OWL allocate from.

Everything is computed on the device of its inputs (the layer's), in float32 for float16/bfloat16
weights (float64 stays float64); only the final scalars leave the device.
"""

from __future__ import annotations

import numpy as np
import torch

from paper_pipelines.pipelines.dlp.calibration import accumulation_dtype


def wanda_importance(weight: torch.Tensor, scaler_row: torch.Tensor) -> torch.Tensor:
    """Wanda score A_ij = |W_ij| * sqrt(s_j), s_j the mean squared input norm of channel j.

    Shapes: weight (C_out, C_in), scaler_row (C_in,) -> (C_out, C_in), on the weight's device.
    A statistic on another device is an error, not a silent copy (it would cost a transfer per layer).
    """
    if scaler_row.device != weight.device:
        raise ValueError(
            f"activation statistics on {scaler_row.device} but the weight on {weight.device}: "
            "collect them on the layer's device (InputStatistics.for_linear)"
        )
    dtype = accumulation_dtype(weight.dtype)
    return weight.abs().to(dtype) * torch.sqrt(scaler_row.to(dtype)).reshape(1, -1)


def median(values: torch.Tensor) -> float:
    """numpy's median (mean of the two middle values when the count is even), on the tensor's device."""
    flat = values.flatten()
    n = flat.numel()
    if n == 0:
        raise ValueError("median of an empty score vector")
    upper = flat.kthvalue(n // 2 + 1).values
    if n % 2:
        return float(upper)
    lower = flat.kthvalue(n // 2).values
    # the halving in the tensor's dtype, as numpy does, so that allocations match it bit for bit
    return float((lower + upper) / 2)


def block_score(scores: torch.Tensor, stat: str = "median") -> float:
    """DLP's block "unimportance" U_l: the median (paper) or mean (released code) of all A in a block."""
    flat = scores.flatten()
    if stat == "median":
        # numpy is 3x faster than two kthvalue calls on a CPU; elsewhere the scores stay on the device
        if flat.device.type == "cpu":
            return float(np.median(flat.to(accumulation_dtype(flat.dtype)).numpy()))
        return median(flat)
    if stat == "mean":
        return float(flat.mean(dtype=accumulation_dtype(flat.dtype)).abs())
    raise ValueError(f"score_stat must be 'median' or 'mean', got {stat!r}")


def outlier_ratio(scores: torch.Tensor, m: float) -> float:
    """OWL's layerwise outlier distribution LOD_l: percentage of scores above M times their mean."""
    flat = scores.flatten()
    flat = flat.to(accumulation_dtype(flat.dtype))
    return float((flat > flat.mean() * m).sum()) / flat.numel() * 100.0
