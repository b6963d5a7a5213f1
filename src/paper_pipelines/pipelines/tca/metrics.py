"""The paper's measures: top-1 accuracy on a target domain, compute cost (peak extra tensor memory, the
efficiency axis of Fig. 1b) and, for "no forgetting", a fingerprint of the model's weights."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import numpy as np
import torch


@torch.no_grad()
def accuracy_of_logits(logits: torch.Tensor, labels: np.ndarray) -> float:
    """Top-1 accuracy in percent."""
    return 100.0 * float((logits.argmax(1).cpu() == torch.as_tensor(labels)).float().mean())


def state_fingerprint(model: torch.nn.Module) -> str:
    """sha256 of every parameter and buffer: proves that TCA leaves the weights bit-identical."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def peak_tensor_bytes(fn: Callable[[], Any], device: str) -> tuple[Any, int]:
    """Run ``fn`` and return (its result, peak bytes of tensors allocated above the starting level).

    CUDA: ``torch.cuda.max_memory_allocated`` (the paper's peak GPU memory). CPU: the profiler's
    per-operator allocation/free events replayed in time order (tracemalloc does not see torch's
    allocator), counting only allocations made while ``fn`` runs.
    """
    if device.startswith("cuda"):
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
        result = fn()
        torch.cuda.synchronize()
        return result, int(torch.cuda.max_memory_allocated() - base)
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        result = fn()
    events = sorted(prof.events(), key=lambda e: e.time_range.start)
    current = peak = 0
    for event in events:
        current += int(event.self_cpu_memory_usage)
        peak = max(peak, current)
    return result, int(peak)
