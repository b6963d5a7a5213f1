"""Baselines of the paper's experiments: FTA (oracle allocation), GTA (greedy asynchronous), UTA (uniform)."""

from __future__ import annotations

import heapq

import numpy as np

from paper_pipelines.pipelines.ata.allocation import water_filling

UTA_MODES = ("random", "even")


def fta_allocation(mu: np.ndarray, B: int) -> np.ndarray:
    """FTA: the proxy minimiser a* = argmin_a max_i a_i mu_i with the true means, played every round."""
    return water_filling(mu, B, tie_break="index")


def uta_allocations(
    n: int, B: int, n_rounds: int, rng: np.random.Generator, mode: str = "random"
) -> np.ndarray:
    """UTA allocations, shape (n_rounds, n), ignoring speeds.

    ``random`` (default): each of the B tasks goes to a worker drawn uniformly at random.
    ``even``: B spread as evenly as possible over all n; the B mod n extra tasks go to a random subset
    drawn once (so no worker-id order is favoured).
    """
    if mode not in UTA_MODES:
        raise ValueError(f"unknown uta_mode {mode!r}; allowed: {', '.join(UTA_MODES)}")
    if mode == "random":
        return rng.multinomial(B, np.full(n, 1.0 / n), size=n_rounds)
    a = np.full(n, B // n, dtype=np.int64)
    a[rng.permutation(n)[: B % n]] += 1
    return np.tile(a, (n_rounds, 1))


def gta_round_times(task_times: np.ndarray, B: int) -> np.ndarray:
    """GTA round times for a block of rounds, task_times shape (rounds, n, >= B).

    All n workers start at the round's beginning and restart at once when they finish; the round ends at
    the B-th completion overall, i.e. the B-th smallest of the cumulative sums of each worker's task times
    (a worker completes at most B tasks before that). In-flight work is discarded.
    """
    cum = np.cumsum(task_times[:, :, :B], axis=2).reshape(task_times.shape[0], -1)
    return np.partition(cum, B - 1, axis=1)[:, B - 1]


def gta_round_time_event_loop(task_times: np.ndarray, B: int) -> float:
    """Naive discrete-event simulation of one GTA round (heap of worker finish events), task_times (n, >= B)."""
    heap = [(float(task_times[i, 0]), i, 0) for i in range(task_times.shape[0])]
    heapq.heapify(heap)
    done = 0
    while True:
        finish, i, u = heapq.heappop(heap)
        done += 1
        if done == B:
            return finish
        heapq.heappush(heap, (finish + float(task_times[i, u + 1]), i, u + 1))
