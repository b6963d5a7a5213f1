"""The proxy loss l(a, s) = max_i a_i s_i and its exact minimiser over {a in N^n : sum a = B} (Sec. 3).

Water-filling: hand out the B tasks one by one, each to the worker j with the smallest next value
(a_j + 1) s_j. This picks the B smallest entries of the table {u * s_j : u >= 1}, and any allocation's proxy
is at least the B-th smallest entry, so the greedy is exact. ``water_filling`` computes the same thing in one
sort of that table; ``water_filling_heap`` is the one-task-at-a-time reference.

Tie-breaking (our choice; the paper does not state one). Workers with s_j = 0 (never observed by ATA) all
have next value 0, so without a rule the first of them would get all B tasks. ``"spread"`` (default) breaks a
tie by (1) the fewest tasks already given to the worker in this round, (2) the fewest observations so far,
(3) a random rank re-drawn every round; this spreads exploration over unexplored workers and gives no
hidden advantage to low worker ids. ``"index"`` breaks ties by the lowest worker index (plain argmin).
"""

from __future__ import annotations

import heapq

import numpy as np

TIE_BREAKS = ("spread", "index")


def proxy_loss(a: np.ndarray, s: np.ndarray) -> float:
    """Proxy loss l(a, s) = max_i a_i * s_i (Sec. 3); 0 for the empty allocation."""
    return float(np.max(np.asarray(a) * np.asarray(s), initial=0.0))


def _tie_keys(
    n: int, tie_break: str, n_obs: np.ndarray | None, tie_rank: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    if tie_break not in TIE_BREAKS:
        raise ValueError(f"unknown tie_break {tie_break!r}; allowed: {', '.join(TIE_BREAKS)}")
    obs = np.zeros(n) if n_obs is None else np.asarray(n_obs, float)
    rank = np.arange(n) if tie_rank is None else np.asarray(tie_rank)
    return obs, rank


def water_filling(
    s: np.ndarray,
    B: int,
    tie_break: str = "spread",
    n_obs: np.ndarray | None = None,
    tie_rank: np.ndarray | None = None,
) -> np.ndarray:
    """argmin_{a in N^n, sum a = B} max_i a_i s_i by the greedy, in one lexicographic sort.

    Entry (j, u) of the table is the value u * s_j of giving worker j its u-th task; the greedy takes the
    B smallest by (value, u, n_obs_j, tie_rank_j) for ``"spread"`` or (value, j, u) for ``"index"``.
    Returns the integer allocation a (shape (n,)).
    """
    s = np.asarray(s, dtype=float)
    n = s.size
    if B < 1:
        raise ValueError(f"the number of tasks per round B must be >= 1, got {B}")
    if n < 1 or np.any(s < 0) or np.any(~np.isfinite(s)):
        raise ValueError(
            f"worker scores s must be a non-empty vector of finite values >= 0, got {s}"
        )
    obs, rank = _tie_keys(n, tie_break, n_obs, tie_rank)
    u = np.arange(1, B + 1)
    values = (u[None, :] * s[:, None]).ravel()
    workers = np.repeat(np.arange(n), B)
    u_flat = np.tile(u, n)
    if tie_break == "spread":
        # np.lexsort sorts by the last key first.
        order = np.lexsort((rank[workers], obs[workers], u_flat, values))
    else:
        order = np.lexsort((u_flat, workers, values))
    return np.bincount(workers[order[:B]], minlength=n)


def water_filling_heap(
    s: np.ndarray,
    B: int,
    tie_break: str = "spread",
    n_obs: np.ndarray | None = None,
    tie_rank: np.ndarray | None = None,
) -> np.ndarray:
    """Reference greedy: give the B tasks one at a time to argmin_j (a_j + 1) s_j (O(B log n) with a heap)."""
    s = np.asarray(s, dtype=float)
    n = s.size
    obs, rank = _tie_keys(n, tie_break, n_obs, tie_rank)
    a = np.zeros(n, dtype=int)

    def key(j: int) -> tuple:
        value = (a[j] + 1) * s[j]
        if tie_break == "spread":
            return (value, a[j], obs[j], rank[j], j)
        return (value, j)

    heap = [key(j) for j in range(n)]
    heapq.heapify(heap)
    for _ in range(B):
        j = heapq.heappop(heap)[-1]
        a[j] += 1
        heapq.heappush(heap, key(j))
    return a


def water_level(s: np.ndarray, B: int) -> float:
    """Optimal proxy value in closed form: the smallest level L with sum_i floor(L / s_i) >= B.

    L is the B-th smallest entry of {u * s_i : u = 1..B}; workers with s_i = 0 make it 0.
    """
    s = np.asarray(s, dtype=float)
    values = np.sort((np.arange(1, B + 1)[None, :] * s[:, None]).ravel())
    return float(values[B - 1])
