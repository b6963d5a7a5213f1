"""Complete-tree (CT) space: the leaves of a complete binary tree of height h and their ultrametric.

A leaf is an h-bit integer (bit l = the branch taken at depth h - l). Two leaves meet at the lowest common
ancestor whose height is the bit length of their XOR, so the distance is read from one lookup table of
size 2^h indexed by ``x ^ y`` (official code: ``generate_distance_lookup_table``). A node is embedded as T
independent leaves, a point of the product space L^T, and node distance is the mean of the T leaf distances.
"""

from __future__ import annotations

import numpy as np
import torch

# Leaves are stored as int64 tensors, but the lookup table has 2^h int8 entries: h = 24 is a 16 MB table
# (the paper's largest height is 19, ogbl-ppa), so larger heights are refused rather than allocated.
MAX_HEIGHT = 24


def check_height(height: int) -> int:
    """Fail clearly for heights the leaf encoding and its lookup table cannot hold."""
    if not 1 <= int(height) <= MAX_HEIGHT:
        raise ValueError(
            f"tree height h must be in [1, {MAX_HEIGHT}] (2^h leaves in one int8 lookup table), "
            f"got {height}"
        )
    return int(height)


def distance_table(height: int, device: str | torch.device = "cpu") -> torch.Tensor:
    """Leaf distance d(x, y) = 0 if x = y else floor(log2(x XOR y)) + 1, tabulated over x XOR y."""
    check_height(height)
    xor = np.arange(2**height, dtype=np.int64)
    # bit length without floating point: log2 of 2^k - 1 rounds up in float32 for large k
    lengths = np.zeros(xor.shape, dtype=np.int8)
    rest = xor.copy()
    while rest.any():
        lengths += (rest > 0).astype(np.int8)
        rest >>= 1
    return torch.as_tensor(lengths, device=device)


def leaf_distance(x: torch.Tensor, y: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """d(x, y): height of the lowest common ancestor of leaves x and y (elementwise, int8)."""
    return table[torch.bitwise_xor(x, y)]


def node_distance(z_i: torch.Tensor, z_j: torch.Tensor, table: torch.Tensor) -> torch.Tensor:
    """D(i, j) = (1/T) sum_t d(z_i[t], z_j[t]) over the last axis (T leaves per node), float32."""
    return leaf_distance(z_i, z_j, table).to(torch.float32).mean(dim=-1)


def uniform_leaves(
    n_nodes: int, trees: int, height: int, generator: torch.Generator, device: str = "cpu"
) -> torch.Tensor:
    """Initial embedding: T i.i.d. uniform leaves per node, shape (n_nodes, T), int64."""
    check_height(height)
    return torch.randint(0, 2**height, (n_nodes, trees), generator=generator).to(device)
