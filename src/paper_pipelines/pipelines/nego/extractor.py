"""Environment-enhanced invariant subgraph extraction (spec step 3) and the subgraph bottleneck (step 5).

Edge scores are conditioned on the environment embedding, m_uv = sigmoid(MLP([h_u; h_v; e_G])); the
classifier GIN's messages are multiplied by m_uv through torch-geometric's edge-mask mechanism
(``explain.algorithm.utils.set_masks``), and a GSAT-style bottleneck pulls m towards Bernoulli(r).
"""

from __future__ import annotations

import torch
from torch import Tensor, nn

EPS = 1e-6


class EdgeScorer(nn.Module):
    """Edge logits from node embeddings and the graph's environment embedding.

    ``concat``: MLP([h_u; h_v; e_G]); ``film``: h -> h * (1 + gamma(e_G)) + beta(e_G), then MLP([h_u; h_v]);
    ``none``: MLP([h_u; h_v]) (the environment is ignored: GSAT's extractor).
    """

    def __init__(self, dim: int, condition: str = "concat") -> None:
        super().__init__()
        if condition not in ("concat", "film", "none"):
            raise ValueError(f"condition must be concat, film or none, got {condition!r}")
        self.condition = condition
        width = 3 * dim if condition == "concat" else 2 * dim
        self.mlp = nn.Sequential(nn.Linear(width, dim), nn.ReLU(), nn.Linear(dim, 1))
        self.film = nn.Linear(dim, 2 * dim) if condition == "film" else None

    def forward(self, h: Tensor, edge_index: Tensor, env_per_node: Tensor) -> Tensor:
        src, dst = edge_index
        if self.condition == "film":
            gamma, beta = self.film(env_per_node).chunk(2, dim=-1)
            h = h * (1 + gamma) + beta
        parts = [h[src], h[dst]]
        if self.condition == "concat":
            parts.append(env_per_node[src])
        return self.mlp(torch.cat(parts, dim=-1)).squeeze(-1)


def concrete_sample(
    logits: Tensor, temperature: float, generator: torch.Generator | None = None
) -> Tensor:
    """Binary concrete relaxation (GSAT): sigmoid((l + log u - log(1 - u)) / T), u ~ U(0, 1)."""
    u = torch.rand(logits.shape, generator=generator, device=logits.device).clamp(EPS, 1 - EPS)
    return torch.sigmoid((logits + torch.log(u) - torch.log1p(-u)) / temperature)


def reverse_edges(edge_index: Tensor) -> Tensor:
    """Index ``rev`` with edge_index[:, rev] == edge_index.flip(0), for graphs holding both directions."""
    n = int(edge_index.max()) + 1 if edge_index.numel() else 1
    key = edge_index[0] * n + edge_index[1]
    order = torch.argsort(key)
    return order[torch.searchsorted(key[order], edge_index[1] * n + edge_index[0])]


def symmetrise(edge_index: Tensor, mask: Tensor) -> Tensor:
    """m_uv = m_vu = (m_uv + m_vu) / 2 for an undirected graph stored with both directions."""
    return (mask + mask[reverse_edges(edge_index)]) / 2


def bernoulli_kl(mask: Tensor, r: float) -> Tensor:
    """L_ib = mean_uv KL(Bern(m_uv) || Bern(r)) = m log(m / r) + (1 - m) log((1 - m) / (1 - r))."""
    m = mask.clamp(EPS, 1 - EPS)
    return (m * torch.log(m / r) + (1 - m) * torch.log((1 - m) / (1 - r))).mean()


def masked_forward(gnn: nn.Module, x: Tensor, edge_index: Tensor, mask: Tensor) -> Tensor:
    """Run ``gnn`` with every message j -> i multiplied by mask_ji (the causal subgraph G_c)."""
    from torch_geometric.explain.algorithm.utils import clear_masks, set_masks

    set_masks(gnn, mask, edge_index, apply_sigmoid=False)
    try:
        return gnn(x, edge_index)
    finally:
        clear_masks(gnn)
