"""A small LinearTCA problem shared by the tca tests: correlated embeddings and a linear head."""

from __future__ import annotations

import torch


def linear_head_problem(
    n: int,
    d: int,
    c: int,
    seed: int = 0,
    shift: float = 1.0,
    dtype: torch.dtype = torch.float32,
    random_bias: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.nn.Linear]:
    """n embeddings z = N(0, I) A + shift in d dims (float32 draws, then `dtype`), a random linear head
    to c classes (bias zero, or drawn after the weight) and its logits; every draw from `seed`."""
    g = torch.Generator().manual_seed(seed)
    z = (torch.randn(n, d, generator=g) @ torch.randn(d, d, generator=g) + shift).to(dtype)
    head = torch.nn.Linear(d, c).to(dtype)
    with torch.no_grad():
        head.weight.copy_(torch.randn(c, d, generator=g))
        if random_bias:
            head.bias.copy_(torch.randn(c, generator=g))
        else:
            head.bias.zero_()
        logits = head(z)
    return z, logits, head
