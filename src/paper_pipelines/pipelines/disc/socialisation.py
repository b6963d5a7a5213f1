"""The socialisation stage: the collaboration modules of a CentralModel trained on the main task with both
specialists frozen; ConfidNets on PDF's rule (spec: "ConfidNet training (reconstructed)")."""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from paper_pipelines.common.progress import progress

from .collaboration import CentralModel, lambda_at, tcp_loss, true_class_probability
from .experts import box_loss, minibatches


def make_heads(central: CentralModel, task: str) -> nn.ModuleDict:
    """Task heads, initialised from the specialists' own heads so training starts at the expert."""
    main, aux = central.main, central.aux
    if task == "box":
        return nn.ModuleDict(
            {"cls": copy.deepcopy(main.head_cls), "box": copy.deepcopy(main.head_box)}
        )
    heads = {"main": copy.deepcopy(main.head_cls)}
    if central.selective != "none":
        heads["aux"] = copy.deepcopy(aux.head_cls)
        if central.selective == "feature":
            heads["fused"] = copy.deepcopy(main.head_cls)
    return nn.ModuleDict(heads)


def branch_losses(
    heads: nn.ModuleDict, out: dict[str, torch.Tensor], labels: torch.Tensor
) -> torch.Tensor:
    """PDF: sum_m CE(branch m) + sum_m L1(ConfidNet_m, TCP_m) with TCP_m detached."""
    z_main, z_aux = heads["main"](out["p_main"]), heads["aux"](out["p_aux"])
    ce = F.cross_entropy(z_main, labels) + F.cross_entropy(z_aux, labels)
    tcp = tcp_loss(out["c_main"], true_class_probability(z_main, labels)) + tcp_loss(
        out["c_aux"], true_class_probability(z_aux, labels)
    )
    return ce + tcp


def fused_logits(
    heads: nn.ModuleDict, out: dict[str, torch.Tensor], selective: str
) -> torch.Tensor:
    """Logits of the fused prediction: a head on the fused feature, or PDF's weighted branch logits."""
    w_main, w_aux = out["w_main"].detach()[:, None], out["w_aux"].detach()[:, None]
    if selective == "feature":
        fused = w_main * out["p_main"].detach() + w_aux * out["p_aux"].detach()
        return heads["fused"](fused)
    return w_main * heads["main"](out["p_main"]) + w_aux * heads["aux"](out["p_aux"])


def collaboration_loss(
    central: CentralModel,
    heads: nn.ModuleDict,
    out: dict[str, torch.Tensor],
    labels: torch.Tensor,
    boxes: torch.Tensor,
    task: str,
    cls_weight: float,
    beta: float,
) -> torch.Tensor:
    """The main task's loss; with the selective module, CE(fused) plus PDF's branch and TCP losses."""
    if task == "box":
        ce = F.cross_entropy(heads["cls"](out["p_main"]), labels)
        return box_loss(heads["box"](out["p_main"]), boxes, beta) + cls_weight * ce
    if central.selective == "none":
        return F.cross_entropy(heads["main"](out["p_main"]), labels)
    fused = F.cross_entropy(fused_logits(heads, out, central.selective), labels)
    return fused + branch_losses(heads, out, labels)


def train_central(
    central: CentralModel,
    pool: dict[str, np.ndarray],
    task: str,
    variant: Any,
    epochs: int,
    lr: float,
    batch: int,
    cls_weight: float,
    beta: float,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Adam on the transfer blocks, ConfidNets and heads; lambda set per iteration (constant or |sin|).

    Returns the trained heads and the lambda used at test time (the value at the last iteration).
    """
    torch.manual_seed(int(rng.integers(2**31)))
    device = next(central.parameters()).device
    heads = make_heads(central, task).to(device).requires_grad_(True)
    trainable = [p for p in central.parameters() if p.requires_grad] + list(heads.parameters())
    optimiser = torch.optim.Adam(trainable, lr=lr, foreach=False)  # no torch._dynamo import
    x = torch.as_tensor(pool["images"], device=device)
    y = torch.as_tensor(pool["labels"], device=device)
    b = torch.as_tensor(pool["boxes"], device=device)
    central.train()
    step = 0
    schedule = (variant.lam, variant.lambda_schedule, variant.lambda_T)
    bounds = (variant.lambda_max, variant.lambda_min)
    for _ in progress(range(epochs), "socialisation"):
        for idx in minibatches(len(y), batch, rng):
            central.lam = lambda_at(step, *schedule, *bounds)
            ix = torch.as_tensor(idx, device=device)
            out = central.branches(x[ix])
            loss = collaboration_loss(central, heads, out, y[ix], b[ix], task, cls_weight, beta)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            step += 1
    central.lam = lambda_at(step, *schedule, *bounds)
    central.eval()
    return {"heads": heads, "lam": central.lam, "steps": step}


@torch.no_grad()
def selective_weight_values(
    central: CentralModel, images: np.ndarray, batch: int = 512
) -> np.ndarray:
    """w_main per canvas (empty without the selective module)."""
    if central.selective == "none":
        return np.zeros(0)
    central.eval()
    device = next(central.parameters()).device
    x = torch.as_tensor(images)
    outs = [
        central.branches(x[i : i + batch].to(device))["w_main"].cpu()
        for i in range(0, len(x), batch)
    ]
    return torch.cat(outs).numpy()
