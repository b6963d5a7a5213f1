"""ata benchmark: how much of ATA's result comes from the tie-break rather than the confidence bounds.

With the paper's alpha (78 on the default instance), ATA's lower bounds s_i stay at 0 for every worker
it uses for thousands of rounds, and any split of the B tasks over zero-bound workers is a minimiser of
max_j a_j s_j. The split then comes from the tie-break alone. This runs ATA and ATA-Empirical with both
rules of ``ata.sim.tie_break`` on the default instance (n = 51, B = 23, X_i ~ i + Exp(i), seed 0 streams
as in the pipeline) and, for ``index``, with the worker ids in three orders: the pipeline's shuffle,
fastest first and slowest first. Printed: runtime and worker time over FTA's, and the share of rounds in
which every worker used had s_i = 0.

    .venv/bin/python benchmarks/ata_tie_break.py [--K 3000 20000]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from paper_pipelines.common.runtime import substream, substream_seed
from paper_pipelines.pipelines.ata.cost_model import (
    mean_task_times,
    split_mean,
    sub_exponential_norms,
)
from paper_pipelines.pipelines.ata.metrics import policy_summary
from paper_pipelines.pipelines.ata.simulator import simulate_policies

N, B, SEED = 51, 23, 0


def instance(order: str) -> tuple[np.ndarray, np.ndarray, float, float]:
    """Shift, spread, alpha, eta of the default instance with worker ids in the given order."""
    mu = mean_task_times(N, 1.0, 1.0)  # fastest first
    if order == "shuffled":
        mu = mu[substream(SEED, "workers").permutation(N)]  # the pipeline's shuffle
    elif order == "slowest_first":
        mu = mu[::-1].copy()
    shift, spread = split_mean(mu, 1.0)
    alpha = sub_exponential_norms(spread, "shifted_exponential")
    return shift, spread, float(alpha.max()), float((alpha / mu).max())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--K", type=int, nargs="+", default=[3000, 20000])
    args = parser.parse_args()
    cases = [
        ("spread", "shuffled"),
        ("index", "shuffled"),
        ("index", "fastest_first"),
        ("index", "slowest_first"),
    ]
    header = (
        f"{'K':>6} {'tie_break':>9} {'worker ids':>14} | {'ATA rt':>7} {'ATA wt':>7} "
        f"{'ATA s=0':>7} | {'EMP rt':>7} {'EMP wt':>7} {'EMP s=0':>7} | sec"
    )
    print(header)
    for K in args.K:
        for tie_break, order in cases:
            shift, spread, alpha, eta = instance(order)
            t0 = time.perf_counter()
            log = simulate_policies(
                shift,
                spread,
                "shifted_exponential",
                B,
                K,
                ["FTA", "ATA", "ATA_EMP"],
                substream_seed(SEED, "sim"),
                alpha,
                eta,
                tie_break=tie_break,
            )
            table = policy_summary(log, 0.2).set_index("policy")
            row = [
                f"{table.loc[p, c]:7.3f}"
                for p in ("ATA", "ATA_EMP")
                for c in ("runtime_over_fta", "worker_time_over_fta", "zero_bound_share")
            ]
            print(
                f"{K:>6} {tie_break:>9} {order:>14} | {' '.join(row[:3])} | {' '.join(row[3:])} "
                f"| {time.perf_counter() - t0:.1f}"
            )


if __name__ == "__main__":
    main()
