"""Baselines and the simulator: GTA against a naive event loop, common random numbers, the claims."""

import numpy as np
import pandas as pd
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
    _allocation_block,
    check_policies,
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
    with pytest.raises(ValueError, match="unknown uta_mode 'round_robin'; allowed: random, even$"):
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


def test_allocation_block_by_hand():
    # two rounds, two workers; cum[r, i, u] = time of worker i's first u+1 tasks in round r
    cum = np.array([[[1.0, 3.0], [2.0, 5.0]], [[4.0, 4.5], [1.0, 1.5]]])
    alloc = np.array([[2, 0], [1, 1]])
    rt, wt = _allocation_block(cum, alloc)
    assert rt.tolist() == [3.0, 4.0]  # round 0: worker 1 idle; round 1: max(4, 1)
    assert wt.tolist() == [3.0, 5.0]


def test_uta_even_gives_the_remainder_to_a_random_subset_drawn_once():
    rng = np.random.default_rng(3)
    even = uta_allocations(4, 6, 5, rng, "even")
    assert (even == even[0]).all() and sorted(even[0].tolist()) == [1, 1, 2, 2]
    extra = np.random.default_rng(3).permutation(4)[:2]
    assert sorted(np.flatnonzero(even[0] == 2).tolist()) == sorted(extra.tolist())
    assert uta_allocations(3, 6, 2, rng, "even").tolist() == [[2, 2, 2]] * 2
    # random mode: the multinomial draws of the generator, uniform over workers
    draws = uta_allocations(4, 6, 3, np.random.default_rng(8))
    ref = np.random.default_rng(8).multinomial(6, [0.25] * 4, size=3)
    assert draws.tolist() == ref.tolist()


def test_simulated_columns_of_fixed_policies_by_hand():
    shift, spread, alpha, eta = instance(4)
    mu = shift + spread
    K, B = 6, 3
    log = simulate_policies(
        shift, spread, "shifted_exponential", B, K, ["UTA", "GTA", "FTA"], 2, alpha, eta, block=4
    )
    assert log["k"].tolist() == list(range(1, K + 1)) * 3
    assert log["policy"].tolist() == ["UTA"] * K + ["GTA"] * K + ["FTA"] * K
    a_star = fta_allocation(mu, B)
    best = (a_star * mu).max()
    uta = uta_allocations(4, B, K, np.random.default_rng([2, 3]))  # UTA's stream: (seed, 3)
    u = log[log.policy == "UTA"]
    assert u["proxy"].to_numpy() == pytest.approx((uta * mu).max(axis=1))
    assert u["proxy_ratio"].to_numpy() == pytest.approx((uta * mu).max(axis=1) / best)
    assert u["workers_used"].tolist() == (uta > 0).sum(axis=1).tolist()
    g = log[log.policy == "GTA"]
    assert g["worker_time"].to_numpy() == pytest.approx(4 * g["round_time"].to_numpy())
    assert g["proxy"].isna().all() and (g["workers_used"] == 4).all()
    assert g["zero_bound_workers"].isna().all() and u["zero_bound_workers"].isna().all()
    # GTA's round time from round k's own task times
    for k in (1, 5):
        X = sample_task_times(
            shift, spread, "shifted_exponential", 1, B, np.random.default_rng([2, 0, k])
        )
        assert g[g.k == k]["round_time"].iloc[0] == pytest.approx(gta_round_times(X, B)[0])
    f = log[log.policy == "FTA"]
    assert (f["workers_used"] == (a_star > 0).sum()).all()


def test_uta_even_mode_reaches_the_simulator():
    shift, spread, alpha, eta = instance(3)
    log = simulate_policies(
        shift, spread, "shifted_exponential", 6, 4, ["UTA"], 0, alpha, eta, uta_mode="even"
    )
    assert (log["workers_used"] == 3).all()
    mu = shift + spread
    assert log["proxy"].to_numpy() == pytest.approx(np.full(4, 2 * mu.max()))


def test_adaptive_policies_get_their_bound_width_and_tie_rule():
    # ATA uses alpha with the lcb bound, ATA-Empirical eta with the scale-free one; both rerun by hand.
    shift, spread, alpha, eta = instance(5)
    K, B, seed = 5, 4, 6
    log = simulate_policies(
        shift,
        spread,
        "shifted_exponential",
        B,
        K,
        ["ATA", "ATA_EMP"],
        seed,
        alpha,
        eta,
        conf_scale=1.5,
        tie_break="index",
        block=2,
    )
    for p, bound, width, stream in (("ATA", "lcb", alpha, 4), ("ATA_EMP", "empirical", eta, 5)):
        policy = AdaptiveAllocator(
            5,
            B,
            bound,
            width,
            conf_scale=1.5,
            tie_break="index",
            rng=np.random.default_rng([seed, stream]),
        )
        rows = log[log.policy == p]
        for k in range(1, K + 1):
            X = sample_task_times(
                shift, spread, "shifted_exponential", 1, B, np.random.default_rng([seed, 0, k])
            )
            cum = np.cumsum(X[0], axis=1)
            a, zero = play_adaptive_round(policy, k, cum)
            row = rows[rows.k == k].iloc[0]
            busy = a > 0
            assert row.round_time == pytest.approx(cum[busy, a[busy] - 1].max())
            assert row.workers_used == busy.sum() and row.zero_bound_workers == zero


@pytest.mark.parametrize("policies", [[], ["ATA", "ATA"], ["FTA", "UTA", "FTA"]])
def test_policy_list_must_be_non_empty_and_distinct(policies):
    with pytest.raises(ValueError, match="non-empty list of distinct names"):
        check_policies(policies)


@pytest.mark.parametrize(("B", "K"), [(0, 5), (2, 0)])
def test_simulator_needs_one_task_and_one_round(B, K):
    shift, spread, alpha, eta = instance(3)
    with pytest.raises(ValueError, match=f"B and K must be >= 1, got B={B}, K={K}"):
        simulate_policies(shift, spread, "shifted_exponential", B, K, ["FTA"], 0, alpha, eta)


@pytest.mark.parametrize(
    ("family", "sigma", "shape"), [("lognormal", 0.3, 3.0), ("pareto", 1.0, 5.0)]
)
def test_family_parameters_reach_the_task_times(family, sigma, shape):
    shift, spread, alpha, eta = instance(3)
    log = simulate_policies(
        shift,
        spread,
        family,
        2,
        2,
        ["FTA"],
        1,
        alpha,
        eta,
        lognormal_sigma=sigma,
        pareto_shape=shape,
    )
    a_star = fta_allocation(shift + spread, 2)
    busy = a_star > 0
    for k in (1, 2):
        X = sample_task_times(
            shift, spread, family, 1, 2, np.random.default_rng([1, 0, k]), sigma, shape
        )
        cum = np.cumsum(X[0], axis=1)
        assert log[log.k == k]["round_time"].iloc[0] == pytest.approx(
            cum[busy, a_star[busy] - 1].max()
        )


@pytest.mark.parametrize("family", ["lognormal", "pareto"])
def test_simulator_defaults(family):
    # c = 2, tie rule "spread", UTA "random", sigma 1, shape 3 unless told otherwise
    shift, spread, alpha, eta = instance(4)
    args = (shift, spread, family, 3, 6, list(POLICIES), 1, alpha, eta)
    default = simulate_policies(*args)
    explicit = simulate_policies(
        *args,
        conf_scale=2.0,
        tie_break="spread",
        uta_mode="random",
        block=500,
        lognormal_sigma=1.0,
        pareto_shape=3.0,
    )
    pd.testing.assert_frame_equal(default, explicit)


def test_one_task_and_one_round_are_enough():
    shift, spread, alpha, eta = instance(3)
    log = simulate_policies(shift, spread, "shifted_exponential", 1, 1, ["FTA"], 0, alpha, eta)
    # B = 1: FTA gives the task to the fastest worker; its round time is that one task
    fastest = int(np.argmin(shift + spread))
    X = sample_task_times(
        shift, spread, "shifted_exponential", 1, 1, np.random.default_rng([0, 0, 1])
    )
    assert log["round_time"].tolist() == pytest.approx([X[0, fastest, 0]])
    assert log["proxy_ratio"].tolist() == [1.0]


def test_uta_even_spread_is_drawn_once_whatever_the_block_size():
    # B mod n = 2 extra tasks go to a random subset drawn once per run (baselines.uta_allocations),
    # so the block size (rounds of task times drawn at once) must not change UTA's rounds.
    shift, spread, alpha, eta = instance(5)
    args = (shift, spread, "shifted_exponential", 7, 12, ["UTA"], 2, alpha, eta)
    one = simulate_policies(*args, uta_mode="even", block=12)
    small = simulate_policies(*args, uta_mode="even", block=3)
    pd.testing.assert_frame_equal(one, small)
    # and the random mode likewise (multinomial rows are drawn in turn)
    one = simulate_policies(*args, block=12)
    pd.testing.assert_frame_equal(one, simulate_policies(*args, block=5))
