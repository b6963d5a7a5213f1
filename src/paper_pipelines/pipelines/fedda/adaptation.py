"""Visual Dynamic Adaptation (VDA): a per-sample gate mixes the raw image feature with two adapters.

Released code (``trainers/FEDDDA.py``: ``Adpater``, ``Gate``, ``CustomCLIP.forward``):

    A(x) = ReLU(W_2 ReLU(W_1 x)),  W_1 in R^{d/r x d}, W_2 in R^{d x d/r}, no biases (r = 4)
    pi = softmax(W_g v),           W_g in R^{3 x d}, no bias
    v' = pi_0 v + pi_1 A_p(v) + pi_2 A_s(v), then v' / ||v'||

A_s (shared) is averaged by the server; A_p (specific) and the gate stay on the client. Parameters are
plain tensors in a client's state dict (keys below) so that aggregation is a dict operation.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

ADAPTER_KEYS = (
    "shared_adapter.w1",
    "shared_adapter.w2",
    "specific_adapter.w1",
    "specific_adapter.w2",
)
GATE_KEY = "gate.w"


def adapter(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
    """Bottleneck adapter A(x) = ReLU(W_2 ReLU(W_1 x)) on rows of x (N, d)."""
    return F.relu(F.relu(x @ w1.T) @ w2.T)


def gate(v: torch.Tensor, wg: torch.Tensor) -> torch.Tensor:
    """Mixing weights pi = softmax(W_g v) over {raw, specific, shared}, (N, 3)."""
    return torch.softmax(v @ wg.T, dim=1)


def dynamic_adaptation(v: torch.Tensor, state: dict[str, torch.Tensor]) -> torch.Tensor:
    """v' = pi_0 v + pi_1 A_p(v) + pi_2 A_s(v), L2-normalised (N, d)."""
    pi = gate(v, state[GATE_KEY])
    specific = adapter(v, state["specific_adapter.w1"], state["specific_adapter.w2"])
    shared = adapter(v, state["shared_adapter.w1"], state["shared_adapter.w2"])
    mixed = pi[:, 0:1] * v + pi[:, 1:2] * specific + pi[:, 2:3] * shared
    return F.normalize(mixed, dim=-1)


def linear_init(out_dim: int, in_dim: int, generator: torch.Generator) -> torch.Tensor:
    """torch.nn.Linear's default weight init (Kaiming-uniform, a = sqrt 5): U(-1/sqrt(in), 1/sqrt(in)),
    as the released modules are built."""
    bound = 1.0 / math.sqrt(in_dim)
    return (torch.rand(out_dim, in_dim, generator=generator) * 2 - 1) * bound


def init_vda(dim: int, reduction: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
    """Both adapters and the gate with nn.Linear's default initialisation."""
    hidden = max(1, dim // reduction)
    state = {}
    for name in ("shared_adapter", "specific_adapter"):
        state[f"{name}.w1"] = linear_init(hidden, dim, generator)
        state[f"{name}.w2"] = linear_init(dim, hidden, generator)
    state[GATE_KEY] = linear_init(3, dim, generator)
    return state
