"""Baselines on the same graphs and selection protocol: ERM (a GIN classifier) and V-REx with the true
base type as the environment (an oracle: it is given what NeGo-R has to infer). GSAT-lite is NeGo-R
with -NP -INV (framework.variant_of)."""

from __future__ import annotations

import torch.nn.functional as F
from torch import Tensor, nn

from .framework import gin, head, pool
from .invariance import vrex_penalty


class GINClassifier(nn.Module):
    """ERM: y_hat = g(pool(GIN(G)))."""

    def __init__(
        self,
        in_dim: int,
        num_classes: int,
        hidden: int,
        layers: int,
        pool_kind: str = "mean",
        dropout: float = 0.0,
        norm: str | None = None,
        head_kind: str = "mlp",
    ) -> None:
        super().__init__()
        self.encoder = gin(in_dim, hidden, layers, dropout, norm)
        self.head = head(hidden, num_classes, head_kind)
        self.pool_kind = pool_kind

    def forward(self, data, generator=None) -> dict[str, Tensor]:
        h = self.encoder(data.x, data.edge_index)
        return {"logits": self.head(pool(h, data.batch, self.pool_kind, int(data.num_graphs)))}


def erm_loss(model: GINClassifier, data) -> tuple[Tensor, dict[str, float]]:
    """Empirical risk: mean cross-entropy."""
    loss = F.cross_entropy(model(data)["logits"], data.y)
    return loss, {"ce": float(loss.detach())}


def vrex_oracle_loss(model: GINClassifier, data, weight: float) -> tuple[Tensor, dict[str, float]]:
    """CE + weight * Var_e(R_e) over the true base types in the batch (V-REx with given environments)."""
    per_sample = F.cross_entropy(model(data)["logits"], data.y, reduction="none")
    penalty = vrex_penalty(per_sample, data.env)
    loss = per_sample.mean() + weight * penalty
    return loss, {"ce": float(per_sample.mean().detach()), "vrex": float(penalty.detach())}
