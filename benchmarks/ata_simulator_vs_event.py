"""ata benchmark (c): the vectorised round simulator against a naive discrete-event simulation.

On the same task times (the paper's instance, n = 51, B = 23), compares per-round times of
- GTA: B-th order statistic of cumulative completion times vs a heap of worker finish events;
- an allocation policy (FTA's a* and random UTA allocations): max of assigned cumulative times vs an
  event loop that runs every worker's tasks one after the other;
and reports the largest difference and the speed ratio.

    .venv/bin/python benchmarks/ata_simulator_vs_event.py [--rounds 2000]
"""

from __future__ import annotations

import argparse
import heapq
import logging
import time

import numpy as np

from paper_pipelines.pipelines.ata.baselines import (
    fta_allocation,
    gta_round_time_event_loop,
    gta_round_times,
    uta_allocations,
)
from paper_pipelines.pipelines.ata.cost_model import mean_task_times, sample_task_times, split_mean
from paper_pipelines.pipelines.ata.simulator import _allocation_block

logger = logging.getLogger("ata.bench.sim")


def allocation_round_event_loop(times: np.ndarray, a: np.ndarray) -> tuple[float, float]:
    """Naive events: each assigned worker runs its a_i tasks in turn; the round ends at the last finish."""
    heap = [(float(times[i, 0]), i, 1) for i in range(a.size) if a[i] > 0]
    heapq.heapify(heap)
    busy, end = 0.0, 0.0
    while heap:
        finish, i, done = heapq.heappop(heap)
        end = finish
        if done == a[i]:
            busy += finish
        else:
            heapq.heappush(heap, (finish + float(times[i, done]), i, done + 1))
    return end, busy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--n", type=int, default=51)
    parser.add_argument("--B", type=int, default=23)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    rng = np.random.default_rng(0)
    shift, spread = split_mean(mean_task_times(args.n, 1.0, 1.0), 1.0)
    X = sample_task_times(shift, spread, "shifted_exponential", args.rounds, args.B, rng)
    allocations = {
        "FTA": np.tile(fta_allocation(shift + spread, args.B), (args.rounds, 1)),
        "UTA": uta_allocations(args.n, args.B, args.rounds, rng, "random"),
    }
    logger.info("ata simulator benchmark: n=%d, B=%d, %d rounds", args.n, args.B, args.rounds)

    start = time.perf_counter()
    fast = gta_round_times(X, args.B)
    t_fast = time.perf_counter() - start
    start = time.perf_counter()
    naive = np.array([gta_round_time_event_loop(X[r], args.B) for r in range(args.rounds)])
    t_naive = time.perf_counter() - start
    diff = np.abs(fast - naive).max()
    assert diff < 1e-9, diff
    logger.info(
        "  GTA : max |diff| %.1e, vectorised %.4f s, event loop %.3f s, speed ratio %.0fx",
        diff,
        t_fast,
        t_naive,
        t_naive / t_fast,
    )
    cum = np.cumsum(X, axis=2)
    for name, alloc in allocations.items():
        start = time.perf_counter()
        rt, wt = _allocation_block(cum, alloc)
        t_fast = time.perf_counter() - start
        start = time.perf_counter()
        ev = np.array([allocation_round_event_loop(X[r], alloc[r]) for r in range(args.rounds)])
        t_naive = time.perf_counter() - start
        diff = max(np.abs(rt - ev[:, 0]).max(), np.abs(wt - ev[:, 1]).max() / args.B)
        assert diff < 1e-9, diff
        logger.info(
            "  %s : max |diff| %.1e, vectorised %.4f s, event loop %.3f s, speed ratio %.0fx",
            name,
            diff,
            t_fast,
            t_naive,
            t_naive / t_fast,
        )


if __name__ == "__main__":
    main()
