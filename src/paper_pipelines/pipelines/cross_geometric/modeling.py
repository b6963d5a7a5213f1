"""Dynamic Geometric Modeling: a Euclidean GCN branch, an HGCN branch on the Poincare ball, and the
per-node geometry gate that aligns each node's embedding space with its local structure.

At snapshot t: z^E = GCN(x), z^H = HGCN(exp_0(x)) on the ball, and
alpha_v = sigmoid(w^T [z^E_v ; log_0(z^H_v) ; phi(delta_v^t)] + b)   (alpha -> 1: hyperbolic),
u_v = alpha_v log_0(z^H_v) + (1 - alpha_v) z^E_v                      (fusion in the tangent space).
The optional GIL-style interaction feeds lambda log_0(z^H) into each Euclidean layer and
exp_0(lambda z^E) by Mobius addition into each hyperbolic one.
"""

from __future__ import annotations

import geoopt
import torch
from torch import nn
from torch_geometric.nn import GCNConv, SimpleConv

from . import poincare


class HyperbolicGraphConv(nn.Module):
    """One HGCN layer: Mobius mat-vec, hyperbolic bias, aggregation in the tangent space at the origin,
    non-linearity in the tangent space, exp_0 back to the ball."""

    def __init__(self, d_in: int, d_out: int, ball: geoopt.PoincareBall, eps: float, act: bool):
        super().__init__()
        self.eps, self.act = eps, act
        self.weight = nn.Parameter(torch.empty(d_out, d_in))
        nn.init.xavier_uniform_(self.weight, gain=2**0.5)
        self.bias = geoopt.ManifoldParameter(torch.zeros(d_out), manifold=ball)
        self.aggregate = SimpleConv(aggr="sum")

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor, edge_weight: torch.Tensor, c):
        h = poincare.mobius_matvec(self.weight, x, c, self.eps)
        h = poincare.mobius_add(h, self.bias.unsqueeze(0), c, self.eps)
        t = self.aggregate(poincare.logmap0(h, c), edge_index, edge_weight)
        if self.act:
            t = torch.relu(t)
        return poincare.expmap0(t, c, self.eps)


def tree_feature(score: torch.Tensor) -> torch.Tensor:
    """The gate's view of the local score: asinh keeps delta in [0, 0.5] nearly as is and brings
    Forman curvatures (tens to hundreds on hubs) to a usable range; absent nodes (NaN) read 0."""
    return torch.asinh(torch.nan_to_num(score, nan=0.0)).unsqueeze(-1)


class GeometryGate(nn.Module):
    """alpha_v = sigmoid(w^T [z^E_v ; log_0 z^H_v ; phi(delta_v)] + b), phi a small MLP."""

    def __init__(self, dim: int, hidden: int, use_tree_score: bool):
        super().__init__()
        self.use_tree_score = use_tree_score
        self.phi = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(), nn.Linear(hidden, hidden))
        self.score = nn.Linear(2 * dim + (hidden if use_tree_score else 0), 1)

    def forward(self, z_e: torch.Tensor, t_h: torch.Tensor, tree: torch.Tensor) -> torch.Tensor:
        parts = [z_e, t_h]
        if self.use_tree_score:
            parts.append(self.phi(tree_feature(tree)))
        return torch.sigmoid(self.score(torch.cat(parts, -1))).squeeze(-1)


def fuse(alpha: torch.Tensor, t_h: torch.Tensor, z_e: torch.Tensor) -> torch.Tensor:
    """u_v = alpha_v log_0(z^H_v) + (1 - alpha_v) z^E_v (the fusion in the tangent space)."""
    a = alpha.unsqueeze(-1)
    return a * t_h + (1 - a) * z_e


class DynamicGeometricModeling(nn.Module):
    """Both branches and the gate for one snapshot; `mode` picks which views run:
    euclid (alpha = 0), hyperbolic (alpha = 1), hybrid_const (alpha = const) or hybrid_gate."""

    def __init__(
        self,
        dim: int,
        mode: str,
        ball: geoopt.PoincareBall,
        eps: float,
        gate_hidden: int = 8,
        use_tree_score: bool = True,
        const_gate: float = 0.5,
        interaction: bool = False,
        interaction_weight: float = 0.2,
        layers: int = 2,
        d_in: int | None = None,
    ):
        super().__init__()
        d_in = d_in or dim  # HTGN feeds [x ; s^{t-1}]: 2 * dim into the first layer
        self.mode, self.eps, self.const_gate = mode, eps, const_gate
        self.interaction = interaction and mode in ("hybrid_const", "hybrid_gate")
        self.lam = interaction_weight
        uses_e, uses_h = mode != "hyperbolic", mode != "euclid"
        self.euclid = (
            nn.ModuleList(
                GCNConv(d_in if i == 0 else dim, dim, normalize=False) for i in range(layers)
            )
            if uses_e
            else None
        )
        self.hyper = (
            nn.ModuleList(
                HyperbolicGraphConv(d_in if i == 0 else dim, dim, ball, eps, act=i < layers - 1)
                for i in range(layers)
            )
            if uses_h
            else None
        )
        self.gate = (
            GeometryGate(dim, gate_hidden, use_tree_score) if mode == "hybrid_gate" else None
        )

    def forward(
        self,
        x: torch.Tensor,
        edge_index: torch.Tensor,
        edge_weight: torch.Tensor,
        tree: torch.Tensor,
        c: poincare.Curv,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The fused tangent representation u [N, d] and the gate alpha [N] (c: the curvature)."""
        n = x.shape[0]
        z_e = x if self.euclid is not None else None
        z_h = poincare.expmap0(x, c, self.eps) if self.hyper is not None else None
        for i in range(len(self.euclid if self.euclid is not None else self.hyper)):
            if self.interaction:
                e_in = z_e + self.lam * poincare.logmap0(z_h, c)
                h_in = poincare.mobius_add(
                    z_h, poincare.expmap0(self.lam * z_e, c, self.eps), c, self.eps
                )
                z_e, z_h = e_in, h_in
            if self.euclid is not None:
                z_e = self.euclid[i](z_e, edge_index, edge_weight)
                if i < len(self.euclid) - 1:
                    z_e = torch.relu(z_e)
            if self.hyper is not None:
                z_h = self.hyper[i](z_h, edge_index, edge_weight, c)
        if self.mode == "euclid":
            return z_e, x.new_zeros(n)
        t_h = poincare.logmap0(z_h, c)
        if self.mode == "hyperbolic":
            return t_h, x.new_ones(n)
        if self.mode == "hybrid_const":
            alpha = x.new_full((n,), self.const_gate)
        else:
            alpha = self.gate(z_e, t_h, tree)
        return fuse(alpha, t_h, z_e), alpha
