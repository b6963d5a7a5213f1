"""Peak resident memory of the pruning grid, as a multiple of one model's size (Linux only).

How it is measured: before the grid, freed heap is handed back to the system (``gc.collect`` and
glibc's ``malloc_trim``) and the resident set size is read from /proc/self/status (VmRSS): that is the
process with the dense model in it. Before each run the kernel's high-water mark (VmHWM) is reset
(``echo 5 > /proc/self/clear_refs``); after the run VmHWM is its exact peak RSS. A run's figure is
``1 + (peak - rss_before_grid) / model_bytes``: the dense model counts as 1, and everything the run
added (the pruned copy, calibration activations, statistics, logits) is counted in model sizes.
Where /proc is missing (macOS, Windows) the figures are None. Nothing here touches the GPU: on CUDA the
same question is answered by ``torch.cuda.max_memory_allocated``, reported beside it when available.
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
from pathlib import Path

import torch

STATUS = Path("/proc/self/status")
CLEAR_REFS = Path("/proc/self/clear_refs")


def model_bytes(model: torch.nn.Module) -> int:
    """Bytes of a model's parameters and buffers (tied weights counted once)."""
    tensors = {id(t): t for t in [*model.parameters(), *model.buffers()]}
    return sum(t.numel() * t.element_size() for t in tensors.values())


def _status_kb(field: str) -> int | None:
    try:
        for line in STATUS.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def trim_heap() -> None:
    """Collect garbage and return freed heap pages to the system (glibc), so RSS is what is live."""
    gc.collect()
    name = ctypes.util.find_library("c")
    if name:
        with contextlib.suppress(OSError, AttributeError):  # not glibc: nothing to trim
            ctypes.CDLL(name).malloc_trim(0)


def rss_bytes() -> int | None:
    """Resident set size now."""
    kb = _status_kb("VmRSS")
    return None if kb is None else kb * 1024


def reset_peak() -> bool:
    """Reset the kernel's peak-RSS mark to the current RSS; False where that is not possible."""
    try:
        CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def peak_bytes() -> int | None:
    """Peak resident set size since the last :func:`reset_peak` (or since the process started)."""
    kb = _status_kb("VmHWM")
    return None if kb is None else kb * 1024


class PeakProbe:
    """Peak memory of successive runs relative to a baseline taken when the probe is made."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model_bytes = model_bytes(model)
        trim_heap()
        self.baseline = rss_bytes()

    def start(self) -> None:
        trim_heap()
        self.can_reset = reset_peak()
        if torch.cuda.is_available():
            torch.cuda.reset_peak_memory_stats()

    def model_copies(self) -> float | None:
        """1 + (peak RSS of this run - baseline) / model bytes; None where it cannot be measured."""
        peak = peak_bytes()
        if not self.can_reset or peak is None or self.baseline is None:
            return None
        return 1.0 + (peak - self.baseline) / self.model_bytes

    def cuda_model_copies(self) -> float | None:
        """Peak CUDA memory allocated by torch in this run, in model sizes (None without CUDA)."""
        if not torch.cuda.is_available():
            return None
        return torch.cuda.max_memory_allocated() / self.model_bytes
