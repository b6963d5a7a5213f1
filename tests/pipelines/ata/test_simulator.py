"""Baselines and the simulator: GTA against a naive event loop, common random numbers, the claims."""

import numpy as np
import pytest

from paper_pipelines.pipelines.ata.ata import AdaptiveAllocator
from paper_pipelines.pipelines.ata.baselines import (
    fta_allocation,
    gta_round_time_event_loop,
    gta_round_times,
    uta_allocations,
)
from paper_pipelines.pipelines.ata.cost_model import (
    mean_task_times,
    sample_task_times,
    split_mean,
    sub_exponential_norms,
)
from paper_pipelines.pipelines.ata.simulator import (
    POLICIES,
    observed_task_sums,
    play_adaptive_round,
    simulate_policies,
)


def instance(n: int, seed: int = 0):
    mu = mean_task_times(n, 1.0, 1.0)[np.random.default_rng([seed, 11]).permutation(n)]
    shift, spread = split_mean(mu, 1.0)
    alpha = sub_exponential_norms(spread, "shifted_exponential")
    return shift, spread, float(alpha.max()), float((alpha / mu).max())


def test_gta_round_time_by_hand():
    # Worker 0 finishes at 1, 2, 3; worker 1 at 1.5, 3.0: the 4th completion is at 3.0.
    X = np.array([[[1.0, 1.0, 1.0, 1.0], [1.5, 1.5, 1.5, 1.5]]])
    assert gta_round_times(X, 4)[0] == 3.0
    assert gta_round_time_event_loop(X[0], 4) == 3.0


def test_gta_vectorised_equals_event_loop():
    shift, spread, _, _ = instance(13)
    X = sample_task_times(shift, spread, "shifted_exponential", 300, 6, np.random.default_rng(2))
    fast = gta_round_times(X, 6)
    naive = [gta_round_time_event_loop(X[r], 6) for r in range(300)]
    assert fast == pytest.approx(naive, rel=1e-12)


def test_fta_and_uta_allocations():
    assert fta_allocation(np.array([1.0, 2.0, 4.0]), 3).tolist() == [2, 1, 0]
    rng = np.random.default_rng(0)
    uta = uta_allocations(5, 7, 100, rng, "random")
    assert (uta.sum(axis=1) == 7).all()
    even = uta_allocations(5, 7, 3, rng, "even")
    assert sorted(even[0].tolist()) == [1, 1, 1, 2, 2]
    with pytest.raises(ValueError, match="unknown uta_mode"):
        uta_allocations(5, 7, 1, rng, "round_robin")


def test_common_random_numbers_across_policy_subsets():
    shift, spread, alpha, eta = instance(7)
    full = simulate_policies(
        shift, spread, "shifted_exponential", 3, 120, list(POLICIES), 4, alpha, eta
    )
    alone = simulate_policies(
        shift, spread, "shifted_exponential", 3, 120, ["ATA_EMP", "FTA"], 4, alpha, eta, block=37
    )
    for p in ("FTA", "ATA_EMP"):
        a = full[full.policy == p]["round_time"].to_numpy()
        b = alone[alone.policy == p]["round_time"].to_numpy()
        assert a == pytest.approx(b)


def test_simulator_rejects_unknown_policy():
    shift, spread, alpha, eta = instance(3)
    with pytest.raises(ValueError, match="policies must be"):
        simulate_policies(shift, spread, "shifted_exponential", 2, 5, ["ATA", "OPT"], 0, alpha, eta)


@pytest.mark.parametrize("seed", range(5))
def test_claims_at_moderate_scale(seed):
    """Acceptance checks 1-3 on a smaller instance (n=11, B=5, K=3000; the timing layer only), seeds 0-4."""
    shift, spread, alpha, eta = instance(11, seed)
    K = 3000
    log = simulate_policies(
        shift, spread, "shifted_exponential", 5, K, list(POLICIES), seed, alpha, eta
    )
    tot = log.groupby("policy")[["round_time", "worker_time"]].sum()
    rt, wt = (
        tot["round_time"] / tot.loc["FTA", "round_time"],
        tot["worker_time"] / tot.loc["FTA", "worker_time"],
    )
    # Resource efficiency and near-oracle speed.
    assert wt["GTA"] / wt["ATA_EMP"] > 2 and wt["UTA"] / wt["ATA_EMP"] > 2
    assert rt["GTA"] < 1 < rt["ATA_EMP"] < rt["ATA"] < rt["UTA"]
    # Learning: the proxy ratio falls from the first to the last 20% of rounds.
    first, last = log[log.k <= 0.2 * K], log[log.k > 0.8 * K]
    for p in ("ATA", "ATA_EMP"):
        assert (
            last[last.policy == p].proxy_ratio.mean() < first[first.policy == p].proxy_ratio.mean()
        )
    assert last[last.policy == "ATA_EMP"].proxy_ratio.mean() < 1.3
    assert (log[log.policy == "FTA"].proxy_ratio == 1.0).all()


@pytest.mark.parametrize("family", ["lognormal", "pareto"])
def test_other_time_families_run_with_a_misspecified_alpha(family):
    mu = mean_task_times(7, 1.0, 1.0)
    shift, spread = split_mean(mu, 1.0)
    alpha = sub_exponential_norms(spread, family, 1.0, 3.0)
    log = simulate_policies(
        shift, spread, family, 3, 200, list(POLICIES), 0, alpha.max(), (alpha / mu).max()
    )
    assert np.isfinite(log["round_time"]).all() and (log["round_time"] > 0).all()
    tot = log.groupby("policy")["worker_time"].sum()
    assert tot["GTA"] > tot["FTA"] and tot["UTA"] > tot["FTA"]


def test_feedback_is_each_workers_first_a_i_task_times():
    # Round table of cumulative times: worker 0 ran tasks of 1, 2, 3; worker 1 of 10, 20, 30.
    cum = np.cumsum(np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0], [5.0, 5.0, 5.0]]), axis=1)
    assert observed_task_sums(cum, np.array([2, 1, 0])).tolist() == [3.0, 10.0, 0.0]
    assert observed_task_sums(cum, np.array([0, 0, 3])).tolist() == [0.0, 0.0, 15.0]


def test_adaptive_round_observes_every_task_it_ran():
    policy = AdaptiveAllocator(2, 3, "lcb", width=1.0, rng=np.random.default_rng(0))
    cum = np.cumsum(np.array([[1.0, 2.0, 3.0], [10.0, 20.0, 30.0]]), axis=1)
    a, zero = play_adaptive_round(policy, 1, cum)
    assert sorted(a.tolist()) == [1, 2] and zero == 2  # nothing observed yet: both bounds 0
    assert policy.counts.tolist() == a.tolist()
    assert policy.sums.tolist() == [cum[i, a[i] - 1] for i in range(2)]


def test_round_k_uses_the_task_times_of_stream_k():
    """Round k's task times come from default_rng([seed, 0, k]); FTA's round time is then by hand."""
    shift, spread, alpha, eta = instance(5)
    log = simulate_policies(
        shift, spread, "shifted_exponential", 4, 3, ["FTA", "ATA"], 9, alpha, eta
    )
    a_star = fta_allocation(shift + spread, 4)
    busy = a_star > 0
    for k in (1, 2, 3):
        X = sample_task_times(
            shift, spread, "shifted_exponential", 1, 4, np.random.default_rng([9, 0, k])
        )
        cum = np.cumsum(X[0], axis=1)
        expected = cum[busy, a_star[busy] - 1]
        row = log[(log.policy == "FTA") & (log.k == k)].iloc[0]
        assert row.round_time == pytest.approx(expected.max())
        assert row.worker_time == pytest.approx(expected.sum())
        assert np.isnan(row.zero_bound_workers)
    first = log[(log.policy == "ATA") & (log.k == 1)].iloc[0]
    assert first.zero_bound_workers == first.workers_used == 4  # round 1: all unobserved, spread


@pytest.mark.parametrize("seed", range(5))
def test_fast_scale_orderings_hold_for_seeds_0_to_4(seed):
    """The fast run's acceptance orderings (n = 11, B = 5, K = 300; timing layer) at seeds 0-4."""
    shift, spread, alpha, eta = instance(11, seed)
    K = 300
    log = simulate_policies(
        shift, spread, "shifted_exponential", 5, K, list(POLICIES), seed, alpha, eta
    )
    tot = log.groupby("policy")[["round_time", "worker_time"]].sum()
    rt, wt = tot["round_time"], tot["worker_time"]
    assert rt["GTA"] < rt["FTA"] < rt["ATA_EMP"] < rt["ATA"] < rt["UTA"]
    assert wt["FTA"] < wt["ATA_EMP"] < wt["ATA"] < wt["UTA"] and wt["GTA"] > wt["ATA_EMP"]
    first, last = log[log.k <= 0.2 * K], log[log.k > 0.8 * K]
    for p in ("ATA", "ATA_EMP"):
        assert (
            last[last.policy == p].proxy_ratio.mean() < first[first.policy == p].proxy_ratio.mean()
        )


def test_zero_bound_count_by_hand():
    # alpha = 0: s_i is the empirical mean once observed, 0 before.
    policy = AdaptiveAllocator(2, 2, "lcb", width=0.0)
    policy.observe(np.array([1, 0]), np.array([3.0, 0.0]))  # s = (3, 0)
    cum = np.cumsum(np.array([[1.0, 1.0], [10.0, 20.0]]), axis=1)
    a, zero = play_adaptive_round(policy, 2, cum)  # worker 1 costs 0: both tasks, one zero bound
    assert a.tolist() == [0, 2] and zero == 1
    assert policy.mu_hat.tolist() == [3.0, 15.0]
    a, zero = play_adaptive_round(
        policy, 3, cum
    )  # s = (3, 15): table 3, 6 | 15 -> both to worker 0
    assert a.tolist() == [2, 0] and zero == 0
