"""Baselines on the same observed graphs and test pairs: other spaces with the identical likelihood,
DeepWalk, GAE, and the two neighbourhood heuristics. Each ``fit_*`` returns a scoring function of pairs."""

from __future__ import annotations

from collections.abc import Callable

import networkx as nx
import numpy as np
import torch

from .link_model import link_probability, negative_loss, popularity_radius, positive_loss

Scorer = Callable[[np.ndarray], np.ndarray]


# ------------------------------------------------------------------ continuous spaces, same likelihood
def euclidean_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """||x - y||_2 (a small floor keeps the gradient finite at x = y)."""
    return torch.sqrt(((x - y) ** 2).sum(-1) + 1e-12)


def to_poincare_ball(u: torch.Tensor) -> torch.Tensor:
    """Exponential map at the origin of the unit Poincare ball: tanh(|u|) u / |u|."""
    norm = u.norm(dim=-1, keepdim=True).clamp_min(1e-12)
    return torch.tanh(norm).clamp(max=1 - 1e-5) * u / norm


def poincare_distance(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """arcosh(1 + 2 |x - y|^2 / ((1 - |x|^2)(1 - |y|^2))), points inside the unit ball."""
    sq = ((x - y) ** 2).sum(-1)
    denom = (1 - (x**2).sum(-1)) * (1 - (y**2).sum(-1))
    return torch.acosh(1 + 2 * sq / denom.clamp_min(1e-10) + 1e-7)


def fit_same_likelihood(
    train: np.ndarray,
    n_nodes: int,
    space: str,
    dim: int,
    steps: int,
    lr: float,
    alpha: float,
    gamma: float,
    eps: float,
    pos_ratio: float,
    generator: torch.Generator,
    init_scale: float = 0.1,
) -> Scorer:
    """The degree-aware link model of leaf matching, with D from a Euclidean or Poincare embedding.

    Full-batch Adam on every observed edge and as many uniform negatives, redrawn each step. Isolates
    the effect of the space: only the distance differs from leaf matching.
    """
    edges = torch.as_tensor(train, dtype=torch.long)
    degree = torch.bincount(edges.flatten(), minlength=n_nodes)
    weight = torch.nn.Parameter(init_scale * torch.randn(n_nodes, dim, generator=generator))
    optimiser = torch.optim.Adam([weight], lr=lr)

    def distance(pairs: torch.Tensor) -> torch.Tensor:
        x = weight if space == "euclidean" else to_poincare_ball(weight)
        fn = euclidean_distance if space == "euclidean" else poincare_distance
        return fn(x[pairs[:, 0]], x[pairs[:, 1]])

    def prob(pairs: torch.Tensor) -> torch.Tensor:
        radius = popularity_radius(degree[pairs[:, 0]], degree[pairs[:, 1]])
        return link_probability(distance(pairs), radius, alpha, gamma, eps)

    for _ in range(steps):
        negatives = torch.stack(
            [edges[:, 0], torch.randint(0, n_nodes, (len(edges),), generator=generator)], 1
        )
        loss = (
            pos_ratio * positive_loss(prob(edges)).mean()
            + negative_loss(prob(negatives), eps).mean()
        )
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()

    def score(pairs: np.ndarray) -> np.ndarray:
        with torch.no_grad():
            return prob(torch.as_tensor(pairs, dtype=torch.long)).numpy()

    return score


# ------------------------------------------------------------------ DeepWalk (skip-gram on our walks)
def random_walks(
    train: np.ndarray, n_nodes: int, walks_per_node: int, walk_length: int, rng: np.random.Generator
) -> np.ndarray:
    """Uniform random walks (walks_per_node x non-isolated nodes, walk_length) on the observed graph."""
    from .decentralised_search import adjacency

    indptr, indices, degree = (t.numpy() for t in adjacency(train, n_nodes))
    starts = np.repeat(np.flatnonzero(degree > 0), walks_per_node)
    walks = np.empty((len(starts), walk_length), dtype=np.int64)
    walks[:, 0] = starts
    for step in range(1, walk_length):
        cur = walks[:, step - 1]
        walks[:, step] = indices[
            indptr[cur] + (rng.random(len(cur)) * degree[cur]).astype(np.int64)
        ]
    return walks


def skipgram_pairs(walks: np.ndarray, window: int) -> np.ndarray:
    """(centre, context) pairs within ``window`` steps on each walk."""
    pairs = []
    for offset in range(1, window + 1):
        a, b = walks[:, :-offset].ravel(), walks[:, offset:].ravel()
        pairs += [np.stack([a, b], 1), np.stack([b, a], 1)]
    return np.concatenate(pairs)


def fit_deepwalk(
    train: np.ndarray,
    n_nodes: int,
    dim: int,
    walks_per_node: int,
    walk_length: int,
    window: int,
    negatives: int,
    epochs: int,
    lr: float,
    batch_size: int,
    rng: np.random.Generator,
    generator: torch.Generator,
) -> Scorer:
    """DeepWalk: skip-gram with negative sampling (unigram^0.75 noise); score = cosine similarity."""
    pairs = torch.as_tensor(
        skipgram_pairs(random_walks(train, n_nodes, walks_per_node, walk_length, rng), window)
    )
    noise = torch.as_tensor(
        np.bincount(train.ravel(), minlength=n_nodes) ** 0.75, dtype=torch.float
    )
    centre = torch.nn.Embedding(n_nodes, dim, sparse=True)
    context = torch.nn.Embedding(n_nodes, dim, sparse=True)
    torch.nn.init.uniform_(centre.weight, -0.5 / dim, 0.5 / dim, generator=generator)
    torch.nn.init.zeros_(context.weight)
    optimiser = torch.optim.SparseAdam([centre.weight, context.weight], lr=lr)
    for _ in range(epochs):
        order = torch.randperm(len(pairs), generator=generator)
        for lo in range(0, len(order), batch_size):
            batch = pairs[order[lo : lo + batch_size]]
            neg = torch.multinomial(noise, len(batch) * negatives, True, generator=generator)
            u = centre(batch[:, 0])
            pos = (u * context(batch[:, 1])).sum(-1)
            negs = torch.bmm(context(neg).view(len(batch), negatives, dim), u[:, :, None])
            loss = -torch.nn.functional.logsigmoid(pos).mean()
            loss = loss - torch.nn.functional.logsigmoid(-negs).sum(1).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    emb = torch.nn.functional.normalize(centre.weight.detach(), dim=1).numpy()
    return lambda p: (emb[p[:, 0]] * emb[p[:, 1]]).sum(1)


# ------------------------------------------------------------------ GAE (torch-geometric)
def fit_gae(
    train: np.ndarray,
    n_nodes: int,
    hidden: int,
    dim: int,
    epochs: int,
    lr: float,
    generator: torch.Generator,
) -> Scorer:
    """GAE: two GCNConv layers over learnable node features, inner-product decoder (PyG ``GAE``)."""
    import random

    from torch_geometric.nn import GAE, GCNConv
    from torch_geometric.utils import to_undirected

    # PyG draws GAE's negative pairs from torch's global stream and Python's ``random``
    seed = int(torch.randint(0, 2**31, (1,), generator=generator))
    torch.manual_seed(seed)
    random.seed(seed)
    edge_index = to_undirected(torch.as_tensor(train.T, dtype=torch.long), num_nodes=n_nodes)

    class Encoder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.features = torch.nn.Embedding(n_nodes, hidden)
            self.conv1, self.conv2 = GCNConv(hidden, hidden), GCNConv(hidden, dim)

        def forward(self, edges: torch.Tensor) -> torch.Tensor:
            x = torch.relu(self.conv1(self.features.weight, edges))
            return self.conv2(x, edges)

    model = GAE(Encoder())
    optimiser = torch.optim.Adam(model.parameters(), lr=lr)
    model.train()
    for _ in range(epochs):
        optimiser.zero_grad()
        loss = model.recon_loss(model.encode(edge_index), edge_index)
        loss.backward()
        optimiser.step()
    model.eval()
    with torch.no_grad():
        z = model.encode(edge_index)
    return lambda p: model.decode(z, torch.as_tensor(p.T, dtype=torch.long)).detach().numpy()


# ------------------------------------------------------------------ neighbourhood heuristics
def _graph(train: np.ndarray, n_nodes: int) -> nx.Graph:
    graph = nx.Graph()
    graph.add_nodes_from(range(n_nodes))
    graph.add_edges_from(map(tuple, train.tolist()))
    return graph


def fit_preferential_attachment(train: np.ndarray, n_nodes: int) -> Scorer:
    """k_i * k_j in the observed graph."""
    degree = np.bincount(train.ravel(), minlength=n_nodes).astype(float)
    return lambda p: degree[p[:, 0]] * degree[p[:, 1]]


def fit_adamic_adar(train: np.ndarray, n_nodes: int) -> Scorer:
    """sum over common observed neighbours w of 1 / ln k_w (networkx)."""
    graph = _graph(train, n_nodes)
    return lambda p: np.array(
        [s for _, _, s in nx.adamic_adar_index(graph, [tuple(e) for e in p.tolist()])], dtype=float
    )
