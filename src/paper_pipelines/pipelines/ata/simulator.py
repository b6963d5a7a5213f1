"""Round-by-round simulation of every policy on common random numbers (the timing layer).

Task times of round k come from a stream keyed by (seed, k) alone, so every policy sees exactly the same
X[k, i, u] whatever the block size or the set of policies; each policy's own randomness (UTA's draws, ATA's tie ranks) comes
from a stream keyed by (seed, policy name).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from paper_pipelines.common.progress import progress
from paper_pipelines.pipelines.ata.allocation import proxy_loss
from paper_pipelines.pipelines.ata.ata import AdaptiveAllocator
from paper_pipelines.pipelines.ata.baselines import fta_allocation, gta_round_times, uta_allocations
from paper_pipelines.pipelines.ata.cost_model import sample_task_times

POLICIES = ("FTA", "GTA", "UTA", "ATA", "ATA_EMP")
# A fixed stream id per policy name: running a subset of policies gives the same numbers for each.
_STREAM = {name: 1 + idx for idx, name in enumerate(POLICIES)}


def check_policies(policies: list[str]) -> None:
    """Fail clearly on an unknown or repeated policy name."""
    unknown = [p for p in policies if p not in POLICIES]
    if unknown or not policies or len(set(policies)) != len(policies):
        raise ValueError(
            f"policies must be a non-empty list of distinct names from {list(POLICIES)}, got {policies}"
        )


def _allocation_block(cum: np.ndarray, alloc: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Round and worker time of fixed allocations alloc (rounds, n) on cumulative times cum (rounds, n, B)."""
    idx = np.maximum(alloc - 1, 0)
    finish = np.take_along_axis(cum, idx[:, :, None], axis=2)[:, :, 0]
    finish = np.where(alloc > 0, finish, 0.0)
    return finish.max(axis=1), finish.sum(axis=1)


def observed_task_sums(cum_round: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Semi-bandit feedback of one round: worker i reveals its first a_i task times of the round.

    ``cum_round`` (n, B) holds each worker's cumulative task times in this round, so worker i with
    a_i > 0 reports cum_round[i, a_i - 1] = X_i^1 + ... + X_i^{a_i}; idle workers report 0.
    """
    sums = np.zeros(a.size)
    busy = a > 0
    sums[busy] = cum_round[busy, a[busy] - 1]
    return sums


def play_adaptive_round(
    policy: AdaptiveAllocator, k: int, cum_round: np.ndarray
) -> tuple[np.ndarray, int]:
    """Round k of ATA / ATA-Empirical: allocate, run the tasks, observe them (Alg. 1 steps 1-4).

    Returns the allocation and how many of the workers it uses had a lower bound of exactly 0
    (for those the split of tasks is set by the tie-break, not by the bounds).
    """
    a = policy.allocate(k)
    zero_bound = int(np.sum((a > 0) & (policy.last_scores == 0.0)))
    policy.observe(a, observed_task_sums(cum_round, a))
    return a, zero_bound


def simulate_policies(
    shift: np.ndarray,
    spread: np.ndarray,
    family: str,
    B: int,
    K: int,
    policies: list[str],
    seed: int,
    alpha: float,
    eta: float,
    conf_scale: float = 2.0,
    tie_break: str = "spread",
    uta_mode: str = "random",
    block: int = 500,
    lognormal_sigma: float = 1.0,
    pareto_shape: float = 3.0,
) -> pd.DataFrame:
    """Simulate K rounds of every policy; one row per (policy, round k = 1..K).

    Columns: policy, k, round_time, worker_time, proxy (l(a^k, mu)), proxy_ratio (l(a^k, mu) / l(a*, mu)),
    workers_used, zero_bound_workers (ATA variants: used workers whose lower bound was 0; NaN for the
    others). GTA is not an allocation, so its proxy columns are NaN and its worker time is n * T_k.
    """
    check_policies(policies)
    if B < 1 or K < 1:
        raise ValueError(f"B and K must be >= 1, got B={B}, K={K}")
    mu = shift + spread
    n = mu.size
    a_star = fta_allocation(mu, B)
    best = proxy_loss(a_star, mu)
    rngs = {p: np.random.default_rng([seed, _STREAM[p]]) for p in policies}
    adaptive = {
        p: AdaptiveAllocator(
            n,
            B,
            bound="lcb" if p == "ATA" else "empirical",
            width=alpha if p == "ATA" else eta,
            conf_scale=conf_scale,
            tie_break=tie_break,
            rng=rngs[p],
        )
        for p in policies
        if p in ("ATA", "ATA_EMP")
    }
    # UTA's allocations for all K rounds in one call: the even spread's extra tasks are drawn once per
    # run, not once per block (multinomial rows are drawn in turn, so the random mode is unchanged).
    uta = uta_allocations(n, B, K, rngs["UTA"], uta_mode) if "UTA" in policies else None
    out = {
        p: {
            "round_time": [],
            "worker_time": [],
            "proxy": [],
            "workers_used": [],
            "zero_bound_workers": [],
        }
        for p in policies
    }
    for start in progress(range(0, K, block), desc="ATA simulation (blocks of rounds)"):
        size = min(block, K - start)
        X = np.stack(
            [
                sample_task_times(
                    shift,
                    spread,
                    family,
                    1,
                    B,
                    np.random.default_rng([seed, 0, k]),
                    lognormal_sigma,
                    pareto_shape,
                )[0]
                for k in range(start + 1, start + size + 1)
            ]
        )
        cum = np.cumsum(X, axis=2)
        for p in policies:
            rec = out[p]
            if p == "GTA":
                t = gta_round_times(X, B)
                rec["round_time"].append(t)
                rec["worker_time"].append(n * t)
                rec["proxy"].append(np.full(size, np.nan))
                rec["workers_used"].append(np.full(size, n))
                rec["zero_bound_workers"].append(np.full(size, np.nan))
                continue
            if p in adaptive:
                policy = adaptive[p]
                alloc = np.empty((size, n), dtype=np.int64)
                zero = np.empty(size)
                for r in range(size):
                    alloc[r], zero[r] = play_adaptive_round(policy, start + r + 1, cum[r])
                rec["zero_bound_workers"].append(zero)
            elif p == "FTA":
                alloc = np.tile(a_star, (size, 1))
                rec["zero_bound_workers"].append(np.full(size, np.nan))
            else:
                alloc = uta[start : start + size]
                rec["zero_bound_workers"].append(np.full(size, np.nan))
            rt, wt = _allocation_block(cum, alloc)
            rec["round_time"].append(rt)
            rec["worker_time"].append(wt)
            rec["proxy"].append((alloc * mu[None, :]).max(axis=1))
            rec["workers_used"].append((alloc > 0).sum(axis=1))
    frames = []
    for p in policies:
        cols = {key: np.concatenate(vals) for key, vals in out[p].items()}
        frame = pd.DataFrame({"policy": p, "k": np.arange(1, K + 1), **cols})
        frame["proxy_ratio"] = frame["proxy"] / best
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)
