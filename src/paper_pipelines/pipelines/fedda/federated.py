"""The federated protocol of the released code (``federated_main.py``, ``utils/fed_utils.py``).

Every client takes part in every round (frac = 1). Round 0: all clients start from the same initial
weights; later rounds: each client starts from its own personalised state. After local training the
server averages, weighted by client data size n_k / sum_j n_j, only the shared keys (FedDDA: the
global context G and the shared adapter A_s); the personal context P, the specific adapter A_p and the
gate never leave the client. Personalised model of client k = {avg G, P_k, avg A_s, A_p_k, gate_k};
it is scored on the client's own test split after every round. A fresh optimiser per client and
round (the released trainer zeroes its momentum buffers after each client).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from .adaptation import dynamic_adaptation, gate, init_vda
from .methods import MethodSpec
from .prompts import PromptBank, build_bank, text_features
from .towers import TextTower

logger = logging.getLogger(__name__)
State = dict[str, torch.Tensor]


@dataclass
class Client:
    """One client's cached frozen image features and labels (train and test)."""

    name: str
    train_x: torch.Tensor
    train_y: torch.Tensor
    test_x: torch.Tensor
    test_y: torch.Tensor


@dataclass(frozen=True)
class LocalTraining:
    """The local optimiser: ``steps`` minibatches, or ``epochs`` passes over the data when steps is None."""

    optimizer: str = "adam"
    lr: float = 5e-3
    momentum: float = 0.9
    weight_decay: float = 5e-4
    batch: int = 64
    steps: int | None = 3
    epochs: int = 1


def fedavg_weights(sizes: Sequence[int]) -> torch.Tensor:
    """FedAvg weights w_k = n_k / sum_j n_j (``average_weights`` with the clients' data numbers)."""
    n = torch.tensor([float(s) for s in sizes])
    return n / n.sum()


def fedavg(tensors: Sequence[torch.Tensor], weights: torch.Tensor) -> torch.Tensor:
    """sum_k w_k x_k."""
    return sum(w * t for w, t in zip(weights, tensors, strict=True))


def aggregate(states: Sequence[State], weights: torch.Tensor, shared: Sequence[str]) -> State:
    """The server step: the weighted average of every shared key (nothing else leaves a client)."""
    return {key: fedavg([s[key] for s in states], weights) for key in shared}


def personalise(local: State, averaged: State) -> State:
    """Client k's personalised model: its own local keys, the server's averages for the shared ones."""
    return {**{k: v.detach().clone() for k, v in local.items()}, **averaged}


def init_state(
    method: MethodSpec, n_ctx: int, width: int, dim: int, reduction: int, std: float, seed: int
) -> State:
    """Initial trainable state: context blocks ~ N(0, std^2) (CoOp's generic context), VDA modules
    with nn.Linear's default init."""
    gen = torch.Generator().manual_seed(seed)
    state = {name: torch.randn(k * n_ctx, width, generator=gen) * std for name, k in method.blocks}
    if method.vda:
        state.update(init_vda(dim, reduction, gen))
    return state


class Model:
    """A method's forward pass on cached image features: prompts through the frozen text tower, the
    image feature through VDA (or raw), logits = scale * cosine."""

    def __init__(
        self,
        method: MethodSpec,
        tower: TextTower,
        class_names: Sequence[str],
        n_ctx: int,
        scale: float,
        link_phrase: str,
        template: str,
    ) -> None:
        self.method, self.tower, self.scale = method, tower, scale
        lengths = {name: k * n_ctx for name, k in method.blocks}
        self.bank: PromptBank = build_bank(
            tower, class_names, method.layout, lengths, link_phrase, template
        )
        device = next(tower.parameters()).device
        for field in ("ids", "mask", "eot"):
            setattr(self.bank, field, getattr(self.bank, field).to(device))
        self.bank.slots = {b: (r.to(device), c.to(device)) for b, (r, c) in self.bank.slots.items()}
        with torch.no_grad():
            self.token_embeds = tower.embed(self.bank.ids)

    def text(self, state: State) -> torch.Tensor:
        return text_features(self.tower, self.bank, self.token_embeds, state)

    def image(self, v: torch.Tensor, state: State) -> torch.Tensor:
        return dynamic_adaptation(v, state) if self.method.vda else F.normalize(v, dim=-1)

    def logits(self, v: torch.Tensor, state: State, text: torch.Tensor | None = None):
        t = self.text(state) if text is None else text
        return self.scale * self.image(v, state) @ t.T


def make_optimizer(params: list[torch.Tensor], local: LocalTraining) -> torch.optim.Optimizer:
    if local.optimizer == "sgd":
        return torch.optim.SGD(
            params, lr=local.lr, momentum=local.momentum, weight_decay=local.weight_decay
        )
    return torch.optim.Adam(params, lr=local.lr)


def batches(n: int, local: LocalTraining, gen: torch.Generator) -> list[torch.Tensor]:
    """Minibatch indices of one local run: ``steps`` random batches, or shuffled epochs."""
    size = min(local.batch, n)
    if local.steps is not None:
        return [torch.randperm(n, generator=gen)[:size] for _ in range(local.steps)]
    out = []
    for _ in range(local.epochs):
        order = torch.randperm(n, generator=gen)
        out += [order[i : i + size] for i in range(0, n, size)]
    return out


def local_update(
    model: Model, state: State, client: Client, local: LocalTraining, gen: torch.Generator
) -> State:
    """Local training: cross-entropy on the client's data, every key of its state trained."""
    params = {k: v.detach().clone().requires_grad_(True) for k, v in state.items()}
    opt = make_optimizer(list(params.values()), local)
    for idx in batches(len(client.train_y), local, gen):
        loss = F.cross_entropy(model.logits(client.train_x[idx], params), client.train_y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
    return {k: v.detach() for k, v in params.items()}


@torch.no_grad()
def evaluate(model: Model, state: State, client: Client) -> dict[str, Any]:
    """Accuracy of a personalised model on its client's test split, and the mean gate weights."""
    pred = model.logits(client.test_x, state).argmax(1)
    result = {"accuracy": float((pred == client.test_y).float().mean())}
    if model.method.vda:
        pi = gate(client.test_x, state["gate.w"]).mean(0)
        result.update(
            {"gate_raw": float(pi[0]), "gate_specific": float(pi[1]), "gate_shared": float(pi[2])}
        )
    return result


def run_federated(
    model: Model,
    clients: Sequence[Client],
    init: State,
    rounds: int,
    local: LocalTraining,
    seed: int,
) -> tuple[list[dict[str, Any]], list[State]]:
    """The round loop: local training on every client, FedAvg of the shared keys, personalisation and
    evaluation. Returns one row per (round, client) and the final personalised states."""
    gen = torch.Generator().manual_seed(seed)
    weights = fedavg_weights([len(c.train_y) for c in clients])
    personal = [{k: v.clone() for k, v in init.items()} for _ in clients]
    rows: list[dict[str, Any]] = []
    for r in range(rounds):
        if model.method.trains:
            trained = [
                local_update(model, personal[k], c, local, gen) for k, c in enumerate(clients)
            ]
            averaged = aggregate(trained, weights, model.method.shared)
            personal = [personalise(s, averaged) for s in trained]
        for k, c in enumerate(clients):
            rows.append({"round": r + 1, "client": c.name, **evaluate(model, personal[k], c)})
    return rows, personal
