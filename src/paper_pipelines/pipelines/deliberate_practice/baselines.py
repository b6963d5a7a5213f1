"""Baselines on the same generator and learner: static sets, generate-then-prune, the real split."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch


def train_and_evaluate(
    trainer,
    x: np.ndarray,
    y: np.ndarray,
    max_iters: int,
    eval_every: int,
    evaluate: Callable[[object], dict[str, float]],
) -> list[dict]:
    """Train on a fixed set for the iteration budget, evaluating every ``eval_every`` iterations."""
    px, py = torch.from_numpy(x), torch.from_numpy(y)
    records = []
    while trainer.iterations < max_iters:
        trainer.train_steps(px, py, min(eval_every, max_iters - trainer.iterations))
        records.append({"iteration": trainer.iterations, "pool_size": len(y), **evaluate(trainer)})
    return records


def static_subset(pool_x: np.ndarray, pool_y: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The static set of size n: the first n samples of the class-balanced unguided pool."""
    if n > len(pool_y):
        raise ValueError(f"static set of {n} samples asked from a pool of {len(pool_y)}")
    return pool_x[:n], pool_y[:n]


def top_entropy(entropy: np.ndarray, keep: int) -> np.ndarray:
    """Indices of the ``keep`` samples the scorer is least sure about (highest entropy), best first."""
    order = np.argsort(-np.asarray(entropy), kind="stable")
    return order[:keep]
