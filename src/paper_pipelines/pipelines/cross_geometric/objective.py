"""The evolution-driven objective, summed over the training steps t:

L = BCE(p on E_{t+1} vs sampled non-edges)                    (relational dynamics)
  + lambda_node mean_v D(s_v^t, s_v^{t-1})                     (nodal smoothness, HTGN's HTC)
  + lambda_chg BCE(p on edges new at t+1 vs persisting non-edges)  (the change term),
with D the decoder's gate-weighted squared distance.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def link_bce(logit_pos: torch.Tensor, logit_neg: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of links (label 1) against non-links (label 0), mean over both."""
    logits = torch.cat([logit_pos, logit_neg])
    labels = torch.cat([torch.ones_like(logit_pos), torch.zeros_like(logit_neg)])
    return F.binary_cross_entropy_with_logits(logits, labels)


def nodal_smoothness(sq_distances: torch.Tensor) -> torch.Tensor:
    """mean_v D(s_v^t, s_v^{t-1}): how far the states move between consecutive snapshots."""
    return sq_distances.mean()


def evolution_loss(
    bce: torch.Tensor,
    smoothness: torch.Tensor,
    change: torch.Tensor,
    lambda_node: float,
    lambda_chg: float,
) -> torch.Tensor:
    """One step's objective: BCE + lambda_node smoothness + lambda_chg change."""
    return bce + lambda_node * smoothness + lambda_chg * change
