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


def set_blas_threads(n: int | None) -> None:
    """Cap BLAS / OpenMP threads of NumPy and SciPy (threadpoolctl); None keeps the library default."""
    if n is None:
        return
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n)


def apply_runtime(runtime) -> str:
    """Apply a paper's `runtime` block (common.params.RuntimeParams): threads, then the device to use.

    Torch is touched only when the paper already imported it, so NumPy-only papers stay light.
    """
    set_blas_threads(runtime.blas_threads)
    if "torch" not in sys.modules:
        return "cpu" if runtime.device == "auto" else runtime.device
    set_torch_threads(runtime.torch_threads)
    return resolve_device(runtime.device)


def substream(seed: int, *stream: int | str) -> np.random.Generator:
    """An independent NumPy generator for one named part of a paper, derived from its one ``seed``.

    ``substream(seed, "data")`` and ``substream(seed, "model")`` never share a stream; names are
    hashed with CRC32 so the derivation is stable across Python runs.
    """
    return np.random.default_rng(substream_seed(seed, *stream))


def substream_seed(seed: int, *stream: int | str) -> int:
    """The integer seed of :func:`substream` (for torch generators and libraries that want an int)."""
    import zlib

    words = [seed, *(s if isinstance(s, int) else zlib.crc32(s.encode()) for s in stream)]
    return int(np.random.SeedSequence(words).generate_state(1)[0])
