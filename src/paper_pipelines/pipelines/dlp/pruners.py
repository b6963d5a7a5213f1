"""Within-layer pruners: Wanda, magnitude and SparseGPT, each at a given sparsity or N:M pattern.

Each function prunes ONE linear layer's weight in place (or returns its mask) and never touches other
layers; the block-by-block walk that feeds them statistics lives in sequential.py.
"""

from __future__ import annotations

import torch

from paper_pipelines.pipelines.dlp.calibration import accumulation_dtype
from paper_pipelines.pipelines.dlp.importance import wanda_importance

# SparseGPT's per-block mask: ours (exactly k) or the released fasterprune's (at least k + 1)
SPARSEGPT_MASK_RULES = ("exact", "released")


def nm_mask(metric: torch.Tensor, n: int, m: int) -> torch.Tensor:
    """N:M mask: in every group of M consecutive input weights of a row, prune the N lowest scores."""
    rows, cols = metric.shape
    if cols % m:
        raise ValueError(f"N:M sparsity needs the input dimension ({cols}) divisible by M={m}")
    groups = metric.float().reshape(rows, cols // m, m)
    lowest = torch.topk(groups, n, dim=-1, largest=False).indices
    mask = torch.zeros_like(groups, dtype=torch.bool).scatter_(-1, lowest, True)
    return mask.reshape(rows, cols)


def row_mask(metric: torch.Tensor, sparsity: float) -> torch.Tensor:
    """Per output row, prune the floor(C_in * s) lowest scores (stable sort: ties go to lower index)."""
    k = int(metric.shape[1] * sparsity)
    mask = torch.zeros_like(metric, dtype=torch.bool)
    if k > 0:
        order = torch.sort(metric, dim=-1, stable=True).indices[:, :k]
        mask.scatter_(1, order, True)
    return mask


def wanda_variant_mask(metric: torch.Tensor, sparsity: float, tol: float = 1e-3) -> torch.Tensor:
    """Wanda's variant: per row, prune the weights whose cumulative score is below a fraction a of the row
    total, with a found by bisection on [0, 0.8] so that the layer sparsity is within `tol` of target."""
    values, _ = torch.sort(metric, dim=-1, stable=True)
    cumulative = torch.cumsum(values, dim=1)
    row_sum = metric.sum(dim=1, keepdim=True)

    def mask_for(a: float) -> tuple[torch.Tensor, float]:
        below = cumulative <= row_sum * a
        idx = (below.sum(dim=1, keepdim=True) - 1).clamp(min=0)
        threshold = torch.gather(values, 1, idx)
        threshold = torch.where(below.any(dim=1, keepdim=True), threshold, values[:, :1] - 1)
        mask = metric <= threshold
        return mask, float(mask.float().mean())

    lo, hi, a = 0.0, 0.8, 0.4
    mask, current = mask_for(a)
    while abs(current - sparsity) > tol and hi - lo >= tol:
        if current > sparsity:
            hi, a = a, (a + lo) / 2
        else:
            lo, a = a, (a + hi) / 2
        mask, current = mask_for(a)
    return mask


def prune_wanda(
    layer: torch.nn.Linear,
    scaler_row: torch.Tensor,
    sparsity: float,
    nm: tuple[int, int] | None = None,
    use_variant: bool = False,
) -> torch.Tensor:
    """Wanda (Sun et al. 2024): zero the lowest |W|*||x|| weights of each output row. Returns the mask."""
    metric = wanda_importance(layer.weight.data, scaler_row)
    if nm is not None:
        mask = nm_mask(metric, *nm)
    elif use_variant:
        mask = wanda_variant_mask(metric, sparsity)
    else:
        mask = row_mask(metric, sparsity)
    # masked_fill_ instead of boolean indexing: no host sync on a GPU, and dtype and device kept
    layer.weight.data.masked_fill_(mask, 0)
    return mask


def prune_magnitude(
    layer: torch.nn.Linear, sparsity: float, nm: tuple[int, int] | None = None
) -> torch.Tensor:
    """Magnitude pruning: zero the floor(numel * s) smallest |W| of the whole matrix. Returns the mask.

    The released code thresholds with `|W| <= sorted[k]`, which over-prunes when weights tie (as in
    quantised checkpoints); a stable sort keeps the count exact.
    """
    metric = layer.weight.data.abs().float()
    if nm is not None:
        mask = nm_mask(metric, *nm)
    else:
        k = int(metric.numel() * sparsity)
        mask = torch.zeros(metric.numel(), dtype=torch.bool, device=metric.device)
        if k > 0:
            mask[torch.sort(metric.flatten(), stable=True).indices[:k]] = True
        mask = mask.reshape(metric.shape)
    layer.weight.data.masked_fill_(mask, 0)
    return mask


def block_mask(saliency: torch.Tensor, sparsity: float, mask_rule: str = "exact") -> torch.Tensor:
    """SparseGPT's mask of one column block: the lowest saliencies over all its rows and columns.

    k = floor(s * n) for the n entries. "exact": the k lowest (stable sort). "released": every entry
    <= the (k+1)-th lowest value (``sort(...)[k]``), so k + 1 at least, plus every tie of it.
    """
    flat = saliency.flatten()
    k = int(flat.numel() * sparsity)
    if mask_rule == "released":
        threshold = torch.sort(flat).values[min(k, flat.numel() - 1)]
        return saliency <= threshold
    mask = torch.zeros(flat.numel(), dtype=torch.bool, device=flat.device)
    if k > 0:
        mask[torch.sort(flat, stable=True).indices[:k]] = True
    return mask.reshape(saliency.shape)


def prune_sparsegpt(
    layer: torch.nn.Linear,
    hessian: torch.Tensor,
    sparsity: float,
    nm: tuple[int, int] | None = None,
    blocksize: int = 128,
    percdamp: float = 0.01,
    mask_rule: str = "exact",
) -> torch.Tensor:
    """SparseGPT (Frantar & Alistarh 2023): OBS pruning with error compensation, block by block.

    hessian: H = (2/n) sum x x^T over the calibration inputs, shape (C_in, C_in), on the layer's
    device. In each block of `blocksize` columns, the weights with the smallest w^2 / [H^-1]_jj^2 are
    masked; each pruned column's error is spread over the not-yet-processed columns through the
    Cholesky factor of H^-1. The arithmetic is float32 (float64 for float64 weights), whatever the
    weight's dtype, as in the released code; the result is cast back to the weight's dtype.

    mask_rule: "exact" masks floor(s * n) of the n weights of a column block (stable sort, ties to the
    lower index); "released" is the released ``fasterprune`` rule, every weight whose saliency is
    <= the value at sorted position floor(s * n), i.e. at least floor(s * n) + 1 (more when tied).
    """
    if hessian.device != layer.weight.device:
        raise ValueError(
            f"SparseGPT Hessian on {hessian.device} but the weight on {layer.weight.device}: "
            "collect it on the layer's device (InputStatistics.for_linear)"
        )
    if mask_rule not in SPARSEGPT_MASK_RULES:
        raise ValueError(f"mask_rule must be one of {SPARSEGPT_MASK_RULES}, got {mask_rule!r}")
    dtype = accumulation_dtype(layer.weight.dtype)
    weight = layer.weight.data.clone().to(dtype)
    h = hessian.clone().to(dtype)
    cols = weight.shape[1]
    dead = torch.diag(h) == 0
    h.diagonal().masked_fill_(dead, 1)
    weight.masked_fill_(dead.unsqueeze(0), 0)
    damp = percdamp * torch.mean(torch.diag(h))
    h += torch.eye(cols, dtype=h.dtype, device=h.device) * damp
    hinv = torch.linalg.cholesky(torch.cholesky_inverse(torch.linalg.cholesky(h)), upper=True)

    full_mask = torch.zeros_like(weight, dtype=torch.bool)
    for i1 in range(0, cols, blocksize):
        i2 = min(i1 + blocksize, cols)
        w1 = weight[:, i1:i2].clone()
        q1 = torch.zeros_like(w1)
        err1 = torch.zeros_like(w1)
        hinv1 = hinv[i1:i2, i1:i2]
        diag = torch.diag(hinv1)
        if nm is None:
            saliency = w1**2 / diag.reshape(1, -1) ** 2
            mask1 = block_mask(saliency, sparsity, mask_rule)
        else:
            mask1 = torch.zeros_like(w1, dtype=torch.bool)
        for i in range(i2 - i1):
            w = w1[:, i]
            d = hinv1[i, i]
            if nm is not None and i % nm[1] == 0:
                n, m = nm
                sal = w1[:, i : i + m] ** 2 / diag[i : i + m].reshape(1, -1) ** 2
                mask1.scatter_(1, i + torch.topk(sal, n, dim=1, largest=False).indices, True)
            q = w.clone().masked_fill_(mask1[:, i], 0)
            q1[:, i] = q
            err = (w - q) / d
            w1[:, i:] -= err.unsqueeze(1).matmul(hinv1[i, i:].unsqueeze(0))
            err1[:, i] = err
        weight[:, i1:i2] = q1
        full_mask[:, i1:i2] = mask1
        weight[:, i2:] -= err1.matmul(hinv[i1:i2, i2:])
    layer.weight.data = weight.to(layer.weight.dtype)
    return full_mask


def parse_sparsity_type(sparsity_type: str) -> tuple[int, int] | None:
    """'unstructured' -> None; 'N:M' -> (N, M) with 0 < N < M."""
    if sparsity_type == "unstructured":
        return None
    try:
        n, m = (int(x) for x in sparsity_type.split(":"))
    except ValueError:
        raise ValueError(
            f"sparsity_type must be 'unstructured' or 'N:M' such as '2:4', got {sparsity_type!r}"
        ) from None
    if not 0 < n < m:
        raise ValueError(f"sparsity_type {sparsity_type!r} needs 0 < N < M")
    return n, m


def nm_sparsity(nm: tuple[int, int]) -> float:
    """Fraction of weights an N:M pattern removes."""
    return nm[0] / nm[1]
