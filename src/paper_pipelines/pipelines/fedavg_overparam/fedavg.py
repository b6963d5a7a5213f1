"""FedAvg with (full-batch) gradient descent and its centralised twin, as the paper analyses them.

M clients, all taking part in every round. Round t: the server broadcasts theta_t; client i runs tau local
epochs from it, theta_{t,k+1}^i = theta_{t,k}^i - eta * grad L_i(theta_{t,k}^i) (one step per epoch with
full-batch GD, ceil(N_i / B) steps with SGD of batch B); the server aggregates
theta_{t+1} = sum_i (N_i / N) theta_{t,tau}^i. The centralised twin runs the same local update on the pooled
data, so FedAvg round t is compared with its step t * tau (the official fedavg11 comparison).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from .ntk import flat_parameters, load_flat_parameters


@dataclass(frozen=True)
class Schedule:
    """Local training settings shared by every client and by the centralised twin."""

    lr: float
    tau: int
    loss: str = "mse"  # mse | ce
    optimizer: str = "gd"  # gd (one full batch per epoch) | sgd (shuffled mini-batches)
    batch_size: int = 64
    weight_decay: float = 0.0
    weighted: bool = True  # aggregate by sample counts N_i / N (the official code) or uniformly


def loss_value(out: torch.Tensor, y: torch.Tensor, loss: str) -> torch.Tensor:
    """L(f, y), mean over samples: mse = 1/2 sum_k (f_k - y_k)^2 with one-hot y_k for K > 1 outputs;
    ce = cross-entropy over K classes, or the logistic loss of one logit for K = 1."""
    k = out.shape[1]
    if loss == "mse":
        target = y.to(out.dtype)[:, None] if k == 1 else F.one_hot(y, k).to(out.dtype)
        return 0.5 * ((out - target) ** 2).sum(1).mean()
    if loss == "ce":
        if k == 1:
            return F.binary_cross_entropy_with_logits(out[:, 0], y.to(out.dtype))
        return F.cross_entropy(out, y)
    raise ValueError(f"unknown loss {loss!r}; choose mse or ce")


def predicted_labels(out: torch.Tensor, loss: str) -> torch.Tensor:
    """Class predictions: argmax for K > 1; for one output, f > 1/2 (squared loss on 0/1 targets, as the
    official MSE runs threshold) or logit > 0 (logistic loss)."""
    if out.shape[1] > 1:
        return out.argmax(1)
    return (out[:, 0] > (0.5 if loss == "mse" else 0.0)).long()


def epoch_batches(
    n: int, schedule: Schedule, generator: torch.Generator | None
) -> list[torch.Tensor]:
    """Index batches of one local epoch: all n samples at once for GD, a shuffled split for SGD."""
    if schedule.optimizer == "gd":
        return [torch.arange(n)]
    order = torch.randperm(n, generator=generator)
    return list(order.split(schedule.batch_size))


def local_update(
    model: nn.Module,
    theta: torch.Tensor,
    x: torch.Tensor,
    y: torch.Tensor,
    schedule: Schedule,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """tau local epochs from ``theta``: theta <- theta - eta (grad L_i(theta) + lambda theta) per batch."""
    load_flat_parameters(model, theta.clone())
    params = list(model.parameters())
    for _ in range(schedule.tau):
        for idx in epoch_batches(len(x), schedule, generator):
            loss = loss_value(model(x[idx]), y[idx], schedule.loss)
            grads = torch.autograd.grad(loss, params)
            with torch.no_grad():
                for p, g in zip(params, grads, strict=True):
                    if schedule.weight_decay:
                        g = g + schedule.weight_decay * p
                    p.sub_(schedule.lr * g)
    return flat_parameters(model)


def aggregation_weights(sizes: Sequence[int], weighted: bool = True) -> torch.Tensor:
    """p_i = N_i / N (the official code's sample-count weights), or 1 / M."""
    sizes_t = torch.as_tensor(list(sizes), dtype=torch.float64)
    if not weighted:
        sizes_t = torch.ones_like(sizes_t)
    return sizes_t / sizes_t.sum()


def aggregate(
    thetas: Sequence[torch.Tensor], sizes: Sequence[int], weighted: bool = True
) -> torch.Tensor:
    """theta_{t+1} = sum_i p_i theta_{t,tau}^i (server step)."""
    weights = aggregation_weights(sizes, weighted).to(thetas[0])  # dtype and device
    return torch.einsum("i,ip->p", weights, torch.stack(list(thetas)))


def fedavg_round(
    model: nn.Module,
    theta: torch.Tensor,
    clients: Sequence[tuple[torch.Tensor, torch.Tensor]],
    schedule: Schedule,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """One round: every client's tau local epochs from the broadcast theta_t, then aggregation.

    Returns theta_{t+1} and the local iterates theta_{t,tau}^i (for the local NTK, the local
    linearisation error and the model divergence).
    """
    local = [local_update(model, theta, x, y, schedule, generator) for x, y in clients]
    return aggregate(local, [len(x) for x, _ in clients], schedule.weighted), local


def model_divergence(
    local: Sequence[torch.Tensor], theta: torch.Tensor, sizes: Sequence[int], weighted: bool = True
) -> float:
    """sum_i p_i ||theta_{t,tau}^i - theta_{t+1}||_2: how far the clients drift from their average."""
    weights = aggregation_weights(sizes, weighted)
    return float(
        sum(
            float(w) * float(torch.linalg.norm(t - theta))
            for w, t in zip(weights, local, strict=True)
        )
    )
