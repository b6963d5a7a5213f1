"""The static baseline: a graph auto-encoder (GCN encoder + inner-product decoder, PyG's GAE) fitted on
the union of the training snapshots, scoring every test snapshot from that one static embedding."""

from __future__ import annotations

import logging
import random

import numpy as np
import torch
from torch import nn
from torch_geometric.nn import GAE, GCNConv

from paper_pipelines.common.parallel import run_parallel

logger = logging.getLogger(__name__)
EDGE_SETS = ("pos", "neg", "new_pos", "new_neg")


class GCNEncoder(nn.Module):
    """Two GCN layers over learnable node features (as the dynamic models use)."""

    def __init__(self, n_nodes: int, dim: int):
        super().__init__()
        self.features = nn.Parameter(0.1 * torch.randn(n_nodes, dim))
        self.conv1, self.conv2 = GCNConv(dim, 2 * dim), GCNConv(2 * dim, dim)

    def forward(self, edge_index: torch.Tensor) -> torch.Tensor:
        return self.conv2(torch.relu(self.conv1(self.features, edge_index)), edge_index)


def union_edge_index(edges: list[np.ndarray]) -> torch.Tensor:
    """Both directions of every edge seen in any of the given snapshots, [2, 2E]."""
    union = np.unique(np.concatenate(edges), axis=0)
    e = torch.as_tensor(union.T, dtype=torch.long)
    return torch.cat([e, e.flip(0)], 1)


def train_static_gae(
    train_edges: list[np.ndarray],
    n_nodes: int,
    dim: int,
    epochs: int,
    lr: float,
    seed: int,
    device: str = "cpu",
) -> GAE:
    """Fit GAE's reconstruction loss (positive edges vs PyG's sampled negatives) on the union graph."""
    torch.manual_seed(seed)
    # PyG's negative_sampling draws from Python's global `random`, which torch.manual_seed leaves
    # alone: seed it for the fit (so a run is reproducible) and give the caller's state back after
    outer = random.getstate()
    random.seed(seed)
    try:
        edge_index = union_edge_index(train_edges).to(device)
        model = GAE(GCNEncoder(n_nodes, dim)).to(device)
        optimiser = torch.optim.Adam(model.parameters(), lr=lr)
        for _ in range(epochs):
            optimiser.zero_grad()
            loss = model.recon_loss(model.encode(edge_index), edge_index)
            loss.backward()
            optimiser.step()
    finally:
        random.setstate(outer)
    model.train_edge_index = edge_index
    return model


@torch.no_grad()
def gae_probabilities(model: GAE, pairs: np.ndarray) -> np.ndarray:
    """sigmoid(z_u . z_v) for node pairs [E, 2] from the union-graph embedding."""
    if len(pairs) == 0:
        return np.zeros(0)
    z = model.encode(model.train_edge_index)
    index = torch.as_tensor(pairs.T, dtype=torch.long, device=z.device)
    return model.decode(z, index, sigmoid=True).cpu().numpy().astype(float)


def fit_and_score_gae(
    graphs: dict,
    tests: dict,
    runs: list[tuple[str, int, int]],
    dim: int,
    epochs: int,
    lr: float,
    test_length: int,
    device: str = "cpu",
    n_jobs: int = 1,
) -> tuple[dict, list]:
    """One GAE per (source, seed index, seed): state dicts and the scored evaluation edges (runs on
    ``n_jobs`` CPU workers, one at a time on a GPU; each seeds itself, so the results are the same)."""
    args = [
        (source, k, seed, graphs[source], tests[source], dim, epochs, lr, test_length, device)
        for source, k, seed in runs
    ]
    workers = n_jobs if device == "cpu" else 1
    states, scored = {}, []
    for state, entry in run_parallel(_fit_one, args, workers, "static GAE", logger, min_jobs=2):
        states.update(state)
        scored.append(entry)
    return states, scored


def _fit_one(source, k, seed, g, tests, dim, epochs, lr, test_length, device) -> tuple[dict, dict]:
    train_edges = g["edges"][: len(g["edges"]) - test_length]
    gae = train_static_gae(train_edges, g["num_nodes"], dim, epochs, lr, seed, device)
    state = {f"{source}.seed{k}.{n}": v.cpu() for n, v in gae.state_dict().items()}
    probs = [{"t": e["t"], **{x: gae_probabilities(gae, e[x]) for x in EDGE_SETS}} for e in tests]
    return state, {"method": "static_gae", "source": source, "seed": k, "tests": probs}
