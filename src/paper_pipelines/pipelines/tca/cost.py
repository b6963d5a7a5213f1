"""Compute cost of a method: peak extra tensor memory while it runs (the paper's Fig. 1b efficiency axis)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch


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
