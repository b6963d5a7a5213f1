"""Graphs to torch-geometric Data, one training run with OOD-validation model selection, predictions."""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import torch
from torch import Tensor

from . import baselines, framework

logger = logging.getLogger(__name__)
EXTRACTOR_METHODS = ("gsat_lite", "nego_r", "nego_r_no_np", "nego_r_no_ee", "nego_r_no_inv")


def to_data(row, base_index: dict[str, int]):
    """One table row as ``Data``: all-ones node features (GOOD-Motif) or the row's flattened
    ``node_features`` (molecules), both edge directions sorted by (source, target) as torch-geometric
    coalesces them, ``edge_gt`` the true motif edges, ``env`` the environment index (base type or
    molecule size), ``y`` the (noisy) label."""
    from torch_geometric.data import Data

    n = int(row.num_nodes)
    feats = getattr(row, "node_features", None)
    if isinstance(feats, list | np.ndarray) and len(feats):
        x = torch.as_tensor(np.asarray(feats, dtype=np.float32)).view(n, -1)
    else:  # a motif row (NaN or None in a table that also holds molecules)
        x = torch.ones(n, 1)
    src, dst = np.asarray(row.edge_src), np.asarray(row.edge_dst)
    gt = np.asarray(row.edge_motif, dtype=np.float32)
    both_src, both_dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    order = np.argsort(both_src * n + both_dst, kind="stable")
    return Data(
        x=x,
        edge_index=torch.as_tensor(np.stack([both_src[order], both_dst[order]]), dtype=torch.long),
        edge_gt=torch.as_tensor(np.concatenate([gt, gt])[order]),
        y=torch.tensor([int(row.y)]),
        env=torch.tensor([base_index[row.base]]),
        num_nodes=n,
    )


def to_dataset(graphs: pd.DataFrame, ids: Sequence[int], bases: Sequence[str]) -> list:
    base_index = {b: i for i, b in enumerate(bases)}
    return [to_data(row, base_index) for row in graphs.loc[list(ids)].itertuples()]


@dataclass
class RunConfig:
    """Everything one run needs, resolved from the parameter blocks."""

    method: str
    num_classes: int
    hidden: int
    layers: int
    pool: str
    dropout: float
    epochs: int
    batch_size: int
    lr: float
    weight_decay: float
    eval_every: int
    patience: int | None
    select_on: str
    norm: str | None = "batch_norm"
    head: str = "mlp"
    num_prompts: int = 8
    residual: bool = False
    encoder: str = "separate"
    condition: str = "concat"
    sampling: str = "concrete"
    temperature: float = 1.0
    symmetric: bool = True
    weights: framework.LossWeights = field(default_factory=framework.LossWeights)
    lambda_vrex_oracle: float = 1.0
    in_dim: int = 1  # node feature width: 1 (all-ones, GOOD-Motif) or the molecules' atom features


def build_model(cfg: RunConfig) -> torch.nn.Module:
    """ERM / V-REx-oracle: a GIN classifier; every extractor method: NeGo-R with its switches."""
    if cfg.method in ("erm", "vrex_oracle"):
        return baselines.GINClassifier(
            cfg.in_dim,
            cfg.num_classes,
            cfg.hidden,
            cfg.layers,
            cfg.pool,
            cfg.dropout,
            cfg.norm,
            cfg.head,
        )
    return framework.NeGoR(
        cfg.in_dim,
        cfg.num_classes,
        cfg.hidden,
        cfg.layers,
        framework.variant_of(cfg.method, cfg.condition),
        num_prompts=cfg.num_prompts,
        residual=cfg.residual,
        encoder=cfg.encoder,
        pool_kind=cfg.pool,
        dropout=cfg.dropout,
        sampling=cfg.sampling,
        temperature=cfg.temperature,
        symmetric=cfg.symmetric,
        norm=cfg.norm,
        head_kind=cfg.head,
    )


def step_loss(
    model, data, cfg: RunConfig, generator: torch.Generator, seed: int
) -> tuple[Tensor, dict]:
    if cfg.method == "erm":
        return baselines.erm_loss(model, data)
    if cfg.method == "vrex_oracle":
        return baselines.vrex_oracle_loss(model, data, cfg.lambda_vrex_oracle)
    return framework.total_loss(model, data, cfg.weights, generator, seed)


@torch.no_grad()
def predict(model, dataset: list, batch_size: int, device: str) -> dict[str, np.ndarray]:
    """Logits-argmax per graph, and (extractor methods) edge masks with their ground truth and e_G."""
    from torch_geometric.loader import DataLoader

    model.eval()
    preds, masks, gts, envs, mask_graph = [], [], [], [], []
    offset = 0
    for data in DataLoader(dataset, batch_size=batch_size, shuffle=False):
        data = data.to(device)
        out = model(data)
        preds.append(out["logits"].argmax(-1).cpu())
        if "mask" in out:
            masks.append(out["mask"].cpu())
            gts.append(data.edge_gt.cpu())
            envs.append(out["env"].cpu())
            mask_graph.append(data.batch[data.edge_index[0]].cpu() + offset)
        offset += int(data.num_graphs)
    result = {"pred": torch.cat(preds).numpy()}
    if masks:
        result.update(
            mask=torch.cat(masks).numpy(),
            edge_gt=torch.cat(gts).numpy(),
            env=torch.cat(envs).numpy(),
            mask_graph=torch.cat(mask_graph).numpy(),
        )
    return result


def labels_of(dataset: list) -> np.ndarray:
    return np.array([int(d.y) for d in dataset])


def accuracy(model, dataset: list, batch_size: int, device: str) -> float:
    return float(np.mean(predict(model, dataset, batch_size, device)["pred"] == labels_of(dataset)))


def fit(
    cfg: RunConfig,
    train: list,
    val: dict[str, list],
    seed: int,
    device: str = "cpu",
) -> dict:
    """Train one method; keep the state with the best ``cfg.select_on`` accuracy (ties: the earlier).

    Returns the selected state dict, the selected epoch, the log (one row per evaluation) and seconds.
    """
    from torch_geometric.loader import DataLoader

    torch.manual_seed(seed)
    model = build_model(cfg).to(device)
    optimiser = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    loader_gen = torch.Generator().manual_seed(seed)
    # the masks' sampling noise: its own stream, on the device that draws it
    noise_gen = torch.Generator(device=device).manual_seed(seed + 1)
    loader = DataLoader(
        train,
        batch_size=cfg.batch_size,
        shuffle=True,
        generator=loader_gen,
        drop_last=len(train) > cfg.batch_size,
    )
    best = {"score": -1.0, "epoch": 0, "state": copy.deepcopy(model.state_dict())}
    log, stale, started = [], 0, time.perf_counter()
    for epoch in range(1, cfg.epochs + 1):
        model.train()
        sums: dict[str, float] = {}
        batches = 0
        for data in loader:
            data = data.to(device)
            loss, terms = step_loss(model, data, cfg, noise_gen, seed)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            batches += 1
            for k, v in terms.items():
                sums[k] = sums.get(k, 0.0) + v
        if epoch % cfg.eval_every and epoch != cfg.epochs:
            continue
        row = {"epoch": epoch, **{f"loss_{k}": v / max(batches, 1) for k, v in sums.items()}}
        for part, dataset in val.items():
            row[f"acc_{part}"] = accuracy(model, dataset, 256, device)
        log.append(row)
        score = row[f"acc_{cfg.select_on}"]
        if score > best["score"]:
            best = {"score": score, "epoch": epoch, "state": copy.deepcopy(model.state_dict())}
            stale = 0
        else:
            stale += 1
            if cfg.patience is not None and stale >= cfg.patience:
                break
    model.load_state_dict(best["state"])
    return {
        "model": model,
        "epoch": best["epoch"],
        "log": pd.DataFrame(log),
        "seconds": time.perf_counter() - started,
    }
