"""Seeding, device choice and thread count: the run-time knobs every torch paper exposes as parameters."""

from __future__ import annotations

import logging
import os
import random
import sys

import numpy as np

logger = logging.getLogger(__name__)


def seed_everything(seed: int) -> np.random.Generator:
    """Seed Python, NumPy and torch and return a NumPy generator for explicit use.

    torch is seeded only when the calling paper has already imported it: importing it here would
    cost NumPy-only papers seconds of start-up.
    """
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.manual_seed(seed)
    return np.random.default_rng(seed)


def resolve_device(device: str = "auto") -> str:
    """'auto' means CUDA when a GPU is visible, else CPU; an explicit CUDA request without a GPU fails."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(
            f"device={device!r} was requested but no CUDA GPU is visible; use 'auto' or 'cpu'."
        )
    if device != "cpu" and not device.startswith(("cuda", "mps")):
        raise ValueError(f"device must be 'auto', 'cpu', 'cuda' or 'cuda:N', got {device!r}.")
    return device


def set_torch_threads(n: int | None) -> None:
    """Set torch's intra-op threads (1 is fastest for small models on 2 cores); None keeps the default."""
    if n is None:
        return
    import torch

    if n < 1:
        raise ValueError(f"torch_threads must be >= 1, got {n}")
    torch.set_num_threads(n)
    os.environ.setdefault("OMP_NUM_THREADS", str(n))
