"""Weight-activation importance and the per-block statistics that DLP and OWL allocate from."""

from __future__ import annotations

import numpy as np
import torch


def wanda_importance(weight: torch.Tensor, scaler_row: torch.Tensor) -> torch.Tensor:
    """Wanda score A_ij = |W_ij| * sqrt(s_j), s_j the mean squared input norm of channel j.

    Shapes: weight (C_out, C_in), scaler_row (C_in,) -> (C_out, C_in).
    """
    return weight.abs().float() * torch.sqrt(scaler_row.float()).reshape(1, -1)


def block_score(scores: torch.Tensor, stat: str = "median") -> float:
    """DLP's block "unimportance" U_l: the median (paper) or mean (released code) of all A in a block."""
    flat = scores.flatten().float()
    if stat == "median":
        return float(np.median(flat.cpu().numpy()))
    if stat == "mean":
        return float(flat.mean().abs())
    raise ValueError(f"score_stat must be 'median' or 'mean', got {stat!r}")


def outlier_ratio(scores: torch.Tensor, m: float) -> float:
    """OWL's layerwise outlier distribution LOD_l: percentage of scores above M times their mean."""
    flat = scores.flatten().float()
    return float((flat > flat.mean() * m).sum()) / flat.numel() * 100.0
