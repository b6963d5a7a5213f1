"""The experiment grid: every method on every rendered setting (repeats, label skew), one protocol.

Wiring only (the method is in prompts / adaptation / federated): excluded from mutation testing.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
import torch

from paper_pipelines.common.progress import progress
from paper_pipelines.common.runtime import substream_seed

from .federated import Client, LocalTraining, Model, init_state, run_federated
from .methods import spec
from .towers import TextTower

logger = logging.getLogger(__name__)


def clients_of(setting: dict[str, dict[str, Any]], device: str) -> list[Client]:
    """The cached features of one setting as Client objects (float32 on ``device``)."""

    def t(x: Any, dtype=torch.float32) -> torch.Tensor:
        return torch.as_tensor(np.asarray(x)).to(device=device, dtype=dtype)

    return [
        Client(
            name,
            t(d["train_x"]),
            t(d["train_y"], torch.long),
            t(d["test_x"]),
            t(d["test_y"], torch.long),
        )
        for name, d in setting.items()
    ]


def run_grid(
    jobs: Sequence[tuple[str, str, str, int]],
    features: dict[str, dict[str, dict[str, Any]]],
    tower: TextTower,
    class_names: Sequence[str],
    prompt: Any,
    reduction: int,
    local: LocalTraining,
    rounds: int,
    scale: float,
    seed: int,
    label: str,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Run (method, setting, data key, repeat) jobs: one row per (job, round, client), final states.

    ``setting`` labels the rows (main, label_skew, official_sgd); ``data key`` picks the rendered
    clients in ``features``.

    The initial state of repeat r is the same for every method of that repeat (the same draw), so
    methods differ only in what the method changes.
    """
    device = str(next(tower.parameters()).device)
    rows: list[dict[str, Any]] = []
    states: dict[str, Any] = {}
    for method_name, setting, data_key, repeat in progress(jobs, f"fedda: {label}", logger=logger):
        method = spec(method_name)
        model = Model(
            method, tower, class_names, prompt.n_ctx, scale, prompt.link_phrase,
            prompt.zero_shot_template,
        )  # fmt: skip
        clients = clients_of(features[data_key], device)
        init = init_state(
            method,
            prompt.n_ctx,
            tower.width,
            clients[0].train_x.shape[1],
            reduction,
            prompt.init_std,
            substream_seed(seed, "init", repeat),
        )
        init = {k: v.to(device) for k, v in init.items()}
        history, final = run_federated(
            model, clients, init, rounds, local, substream_seed(seed, "batches", data_key)
        )
        job = f"{method_name}@{setting}_{repeat}"
        for row in history:
            rows.append({"method": method_name, "setting": setting, "repeat": repeat, **row})
        states[job] = {
            c.name: {k: v.cpu() for k, v in s.items()} for c, s in zip(clients, final, strict=True)
        }
        logger.info("fedda: %s final client-mean accuracy %.3f", job, _final_mean(history))
    return pd.DataFrame(rows), states


def _final_mean(history: list[dict[str, Any]]) -> float:
    last = max(r["round"] for r in history)
    return float(np.mean([r["accuracy"] for r in history if r["round"] == last]))
