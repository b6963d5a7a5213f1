"""Stage 1 (supervised warm-up) and Stage 2 (alternate label propagation and training) of CPL-IQA.

Stage 1 trains on the labelled set with the cross-entropy to the vector labels, -sum_k v_k log p_k(x).
Stage 2 repeats T rounds of: embeddings of labelled + unlabelled images -> label propagation ->
pseudo labels z_j and confidences omega_j -> epochs of mixed batches (B_L labelled, B_U unlabelled)
with the loss mean_{B_L} CE(v_i, p(x_i)) + mean_{B_U} omega_j CE(z_j, p(x_j)). The supervised-only
control is the same schedule with no unlabelled term; full supervision feeds the true labels of the
unlabelled images with weight 1.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np
import torch
from scipy.stats import spearmanr
from torch import nn

from .labels import expected_score
from .propagation import Propagation, propagate_labels

logger = logging.getLogger(__name__)


def vector_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-sample CE(v, p(x)) = -sum_k v_k log softmax(logits)_k (Stage 1 loss)."""
    return -(targets * torch.log_softmax(logits, dim=1)).sum(dim=1)


def cpl_loss(
    logits_l: torch.Tensor,
    targets_l: torch.Tensor,
    logits_u: torch.Tensor | None,
    targets_u: torch.Tensor | None,
    weights_u: torch.Tensor | None,
) -> torch.Tensor:
    """Stage-2 loss: mean_L CE(v_i, p_i) + mean_U omega_j CE(z_j, p_j) (labelled weight 1)."""
    loss = vector_cross_entropy(logits_l, targets_l).mean()
    if logits_u is not None and logits_u.shape[0] > 0:
        loss = loss + (weights_u * vector_cross_entropy(logits_u, targets_u)).mean()
    return loss


@torch.no_grad()
def predict_distribution(model: nn.Module, x: torch.Tensor, device: str, batch: int = 256):
    """Softmax p(x) over the bins for every row of ``x``, as a NumPy array (eval mode)."""
    model.eval()
    out = [
        torch.softmax(model(x[i : i + batch].to(device)), 1).cpu() for i in range(0, len(x), batch)
    ]
    return torch.cat(out).double().numpy()


@torch.no_grad()
def embed(model: nn.Module, x: torch.Tensor, device: str, batch: int = 256) -> np.ndarray:
    """Embeddings e(x) (eval mode), as a NumPy array."""
    model.eval()
    out = [model.embed(x[i : i + batch].to(device)).cpu() for i in range(0, len(x), batch)]
    return torch.cat(out).double().numpy()


def train_supervised(
    model: nn.Module,
    x: torch.Tensor,
    targets: torch.Tensor,
    epochs: int,
    lr: float,
    weight_decay: float,
    batch_size: int,
    generator: torch.Generator,
    device: str,
) -> nn.Module:
    """Stage 1: Adam on shuffled mini-batches of the labelled set, loss = mean CE to the vector labels."""
    model.to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    n = len(x)
    for _ in range(epochs):
        model.train()
        order = torch.randperm(n, generator=generator)
        for start in range(0, n, batch_size):
            idx = order[start : start + batch_size]
            if len(idx) < 2 and n >= 2:
                continue  # batch norm needs two samples; the dropped one is back next epoch
            logits = model(x[idx].to(device))
            loss = vector_cross_entropy(logits, targets[idx].to(device)).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return model


def labeled_batches(
    n: int, batch: int, steps: int, generator: torch.Generator
) -> list[torch.Tensor]:
    """``steps`` batches of labelled indices, cycling through fresh permutations of the n images."""
    order = torch.randperm(n, generator=generator)
    out, pos = [], 0
    for _ in range(steps):
        if pos + batch > n:
            order, pos = torch.randperm(n, generator=generator), 0
        out.append(order[pos : pos + batch])
        pos += batch
    return out


def train_mixed_epoch(
    model: nn.Module,
    optimiser: torch.optim.Optimizer,
    x_l: torch.Tensor,
    v_l: torch.Tensor,
    x_u: torch.Tensor | None,
    z_u: torch.Tensor | None,
    w_u: torch.Tensor | None,
    batch_l: int,
    batch_u: int,
    steps: int,
    generator: torch.Generator,
    device: str,
) -> float:
    """One epoch of ``steps`` mixed batches; with no unlabelled part only the labelled term is trained."""
    model.train()
    lab = labeled_batches(len(x_l), min(batch_l, len(x_l)), steps, generator)
    unl = torch.randperm(len(x_u), generator=generator) if x_u is not None else None
    total = 0.0
    for step in range(steps):
        idx_l = lab[step]
        if x_u is not None:
            idx_u = unl[(step * batch_u) % len(x_u) :][:batch_u]
            xb = torch.cat([x_l[idx_l], x_u[idx_u]]).to(device)
            logits = model(xb)
            loss = cpl_loss(
                logits[: len(idx_l)],
                v_l[idx_l].to(device),
                logits[len(idx_l) :],
                z_u[idx_u].to(device),
                w_u[idx_u].to(device),
            )
        else:
            loss = cpl_loss(model(x_l[idx_l].to(device)), v_l[idx_l].to(device), None, None, None)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        total += float(loss.detach())
    return total / max(steps, 1)


@dataclass(frozen=True)
class Stage2Setting:
    """What Stage 2 does with the unlabelled images: propagate (CPL), nothing, or their true labels."""

    mode: str  # "cpl" | "supervised" | "oracle"
    gamma: float
    confidence: str  # "entropy" | "none"


def srcc(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rank correlation (0 when either side is constant)."""
    if np.ptp(a) == 0 or np.ptp(b) == 0:
        return 0.0
    return float(spearmanr(a, b).statistic)


def run_stage2(
    model: nn.Module,
    x_l: torch.Tensor,
    v_l: np.ndarray,
    x_u: torch.Tensor,
    setting: Stage2Setting,
    stage2,
    bins: int,
    hidden_mos_u: np.ndarray,
    generator: torch.Generator,
    device: str,
    oracle_u: np.ndarray | None = None,
    graph_extra: np.ndarray | None = None,
) -> tuple[nn.Module, list[dict]]:
    """T rounds of label optimisation and model training; one log row per round.

    ``hidden_mos_u`` (on [1, K]) is used only to log pseudo-label quality, never for training.
    ``graph_extra`` (rows: labelled then unlabelled) replaces or extends the embeddings for the graph
    (stage2.graph_features = nss / concat).
    """
    model.to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=stage2.lr, weight_decay=stage2.weight_decay)
    n_u = len(x_u)
    steps = max(1, math.ceil(n_u / stage2.batch_unlabeled)) if n_u else 1
    v_l_t = torch.as_tensor(v_l, dtype=torch.float32)
    log = []
    for round_index in range(1, stage2.rounds + 1):
        row: dict = {"round": round_index}
        started = time.perf_counter()
        probs_u = predict_distribution(model, x_u, device) if n_u else np.zeros((0, bins))
        row["model_srcc_unlabeled"] = (
            srcc(expected_score(probs_u, bins), hidden_mos_u) if n_u else 0.0
        )
        z_t = w_t = None
        xu = x_u if n_u else None
        if setting.mode == "cpl" and n_u:
            prop = _propagate(model, x_l, x_u, v_l, stage2, setting.gamma, device, graph_extra)
            weights = prop.weights if setting.confidence == "entropy" else np.ones(n_u)
            z_t = torch.as_tensor(prop.labels, dtype=torch.float32)
            w_t = torch.as_tensor(weights, dtype=torch.float32)
            row.update(_pseudo_label_quality(prop, bins, hidden_mos_u))
        elif setting.mode == "oracle" and n_u:
            z_t = torch.as_tensor(oracle_u, dtype=torch.float32)
            w_t = torch.ones(n_u)
        else:
            xu = None
        row["lp_seconds"] = time.perf_counter() - started
        started = time.perf_counter()
        for _ in range(stage2.epochs_per_round):
            row["loss"] = train_mixed_epoch(
                model, optimiser, x_l, v_l_t, xu, z_t, w_t,
                stage2.batch_labeled, stage2.batch_unlabeled, steps, generator, device,
            )  # fmt: skip
        row["train_seconds"] = time.perf_counter() - started
        log.append(row)
    return model, log


def _propagate(model, x_l, x_u, v_l, stage2, gamma, device, graph_extra) -> Propagation:
    feats = np.concatenate([embed(model, x_l, device), embed(model, x_u, device)])
    if stage2.graph_features == "nss":
        feats = graph_extra
    elif stage2.graph_features == "concat":
        from .propagation import l2_normalise

        feats = np.concatenate([l2_normalise(feats), l2_normalise(graph_extra)], axis=1)
    return propagate_labels(
        feats, v_l, len(x_l), stage2.knn_k, gamma, stage2.affinity_power,
        stage2.cg_iters, stage2.cg_tol,
    )  # fmt: skip


def _pseudo_label_quality(prop: Propagation, bins: int, hidden_mos_u: np.ndarray) -> dict:
    """Pseudo-MOS SRCC and MAE against the hidden MOS, mean confidence, SRCC(confidence, -|error|)."""
    pseudo = expected_score(prop.labels, bins)
    reached = prop.labels.sum(axis=1) > 0
    error = np.abs(pseudo - hidden_mos_u)
    return {
        "pseudo_srcc": srcc(pseudo[reached], hidden_mos_u[reached]) if reached.any() else 0.0,
        "pseudo_mae": float(error[reached].mean()) if reached.any() else float("nan"),
        "mean_confidence": float(prop.weights.mean()),
        "mean_raw_confidence": float(prop.raw_confidence.mean()),
        "confidence_error_srcc": srcc(prop.weights[reached], -error[reached])
        if reached.sum() > 1
        else 0.0,
        "isolated": prop.isolated,
    }
