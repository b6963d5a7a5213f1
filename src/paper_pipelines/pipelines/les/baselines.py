"""The OOD scores and optimisation penalties LES is compared with (official les/utils/les.py,
les/analysis/ood.py, les/utils/uncertainty.py): higher = more in distribution, like LES."""

from __future__ import annotations

import numpy as np
import torch
from sklearn.neighbors import NearestNeighbors
from torch import nn


def likelihood(decoder: nn.Module, z: torch.Tensor) -> torch.Tensor:
    """sum_t log max_v s_tv: the log-probability of the argmax decoding (decoder confidence)."""
    return torch.log_softmax(decoder(z), dim=-1).max(dim=-1).values.sum(dim=-1)


def prior(z: torch.Tensor) -> torch.Tensor:
    """-||z||^2: the official Prior penalty with mu = 0, Sigma = I (twice the Gaussian log-density)."""
    return -(z * z).sum(dim=-1)


def train_distance(z: np.ndarray, encoded: np.ndarray, k: int = 3) -> np.ndarray:
    """Minus the mean Euclidean distance to the k nearest encoded training points."""
    neighbours = NearestNeighbors(n_neighbors=min(k, len(encoded))).fit(encoded)
    distances, _ = neighbours.kneighbors(z)
    return -distances.mean(axis=1)


def entropy(p: torch.Tensor) -> torch.Tensor:
    """Shannon entropy over the last axis (0 log 0 = 0)."""
    return -torch.xlogy(p, p).sum(dim=-1)


@torch.no_grad()
def decoder_uncertainty(decoder: nn.Module, z: torch.Tensor, n_models: int = 10) -> torch.Tensor:
    """Epistemic uncertainty of the decoder by MC dropout: sum over positions of the mutual
    information H(mean_m p_m) - mean_m H(p_m) over ``n_models`` dropout masks (a per-token reading of
    Notin et al. 2021; the official code importance-samples whole sequences instead)."""
    was_training = decoder.training
    decoder.train()
    probs = torch.stack([torch.softmax(decoder(z), dim=-1) for _ in range(n_models)])
    decoder.train(was_training)
    return (entropy(probs.mean(0)) - entropy(probs).mean(0)).sum(dim=-1)
