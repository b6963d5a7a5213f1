"""The paper's measures on hand-made inputs: E[C(a)] by Monte Carlo, the sandwich, the policy table."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.ata.metrics import (
    expected_round_time_mc,
    policy_summary,
    sandwich_check,
    time_stamped_loss,
)


def test_expected_round_time_without_noise_is_the_slowest_busy_worker():
    # spread = 0: every task of worker i takes shift_i, so C(a) = max_i a_i shift_i exactly.
    shift, spread = np.array([1.0, 5.0, 1.5]), np.zeros(3)
    a = np.array([2, 0, 1])  # worker 1 is idle, so its 5.0 must not count
    rng = np.random.default_rng(0)
    value = expected_round_time_mc(a, shift, spread, "shifted_exponential", 7, rng, chunk=3)
    assert value == pytest.approx(2.0)
    a = np.array([1, 0, 2])
    assert expected_round_time_mc(a, shift, spread, "shifted_exponential", 4, rng) == pytest.approx(
        3.0
    )


def test_expected_round_time_is_the_mean_of_the_drawn_round_times():
    # Reference: the same noise stream drawn at once, the per-worker sums and their max by hand.
    shift, spread = np.array([1.0, 2.0, 0.5]), np.array([1.0, 0.5, 3.0])
    a = np.array([1, 0, 3])
    draws = 11
    ref_noise = np.random.default_rng(4).standard_exponential((draws, 4))  # 1 + 3 assigned tasks
    w0 = shift[0] + spread[0] * ref_noise[:, 0]
    w2 = (shift[2] + spread[2] * ref_noise[:, 1:]).sum(axis=1)
    expected = np.maximum(w0, w2).mean()
    # Chunks of 4 rows draw the same numbers in the same order as one block of 11.
    for chunk in (4, 5000):
        got = expected_round_time_mc(
            a, shift, spread, "shifted_exponential", draws, np.random.default_rng(4), chunk=chunk
        )
        assert got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(
    ("family", "kwargs"),
    [("lognormal", {"lognormal_sigma": 0.5}), ("pareto", {"pareto_shape": 4.0})],
)
def test_expected_round_time_passes_the_family_parameters(family, kwargs):
    # One worker, one task: E[C] = shift + spread * E[N] = mu for every family (unit-mean noise).
    shift, spread = np.array([1.0]), np.array([2.0])
    value = expected_round_time_mc(
        np.array([1]), shift, spread, family, 200_000, np.random.default_rng(0), **kwargs
    )
    assert value == pytest.approx(3.0, rel=0.02)
    # The noise really is the family's with the given parameter: compare with the direct draw.
    from paper_pipelines.pipelines.ata.cost_model import sample_unit_noise

    ref = sample_unit_noise(family, (50, 1), np.random.default_rng(1), **kwargs)
    got = expected_round_time_mc(
        np.array([1]), np.zeros(1), np.ones(1), family, 50, np.random.default_rng(1), **kwargs
    )
    assert got == pytest.approx(ref.mean(), rel=1e-12)


def test_sandwich_without_noise_is_tight_at_the_lower_end():
    # No noise: E[C(a)] = l(a, mu) exactly, so the ratio is 1 and the upper bound is 1 + 4 eta ln B.
    shift, spread = np.array([2.0, 3.0]), np.zeros(2)
    out = sandwich_check(
        {"a_star": np.array([2, 1]), "lazy": np.array([0, 3])},
        shift,
        spread,
        "shifted_exponential",
        eta=0.25,
        B=3,
        draws=5,
        seed=0,
    )
    assert out["a_star"]["proxy"] == 4.0 and out["lazy"]["proxy"] == 9.0
    assert out["a_star"]["expected_round_time"] == pytest.approx(4.0)
    assert out["lazy"]["ratio"] == pytest.approx(1.0)
    assert out["a_star"]["upper_bound"] == pytest.approx(1.0 + np.log(3.0))
    assert out["a_star"]["holds"] and out["lazy"]["holds"]


def test_sandwich_uses_one_stream_per_allocation_and_flags_a_broken_bound():
    shift, spread = np.array([1.0, 1.0]), np.array([1.0, 1.0])
    allocations = {"a": np.array([1, 1]), "b": np.array([2, 0])}
    out = sandwich_check(allocations, shift, spread, "shifted_exponential", 0.0, 2, 400, seed=3)
    proxies = {"a": 2.0, "b": 4.0}  # max_i a_i mu_i with mu = (2, 2)
    for idx, (name, a) in enumerate(allocations.items()):
        ref = expected_round_time_mc(
            a, shift, spread, "shifted_exponential", 400, np.random.default_rng([3, 7, idx])
        )
        assert out[name]["expected_round_time"] == pytest.approx(ref, rel=1e-12)
        assert out[name]["proxy"] == proxies[name]
        assert out[name]["ratio"] == pytest.approx(ref / proxies[name], rel=1e-12)
    # eta = 0 makes the upper bound 1; E max of two 1 + Exp(1) is 2.5 > 2, so the check fails.
    assert out["a"]["upper_bound"] == 1.0 and not out["a"]["holds"]


def _log_with_distinct_rounds() -> pd.DataFrame:
    """10 rounds of one ATA policy whose proxy ratio is k, so every window edge shows in a mean."""
    k = np.arange(1, 11)
    return pd.DataFrame(
        {
            "policy": "ATA",
            "k": k,
            "round_time": 1.0,
            "worker_time": 2.0,
            "proxy_ratio": k.astype(float),
            "workers_used": np.where(k <= 5, 2, 4),
            "zero_bound_workers": np.where(k <= 3, 2, 0),
        }
    )


def test_policy_summary_windows_are_the_first_and_last_fifth():
    # window 0.2 of K = 10: first = rounds 1-2 (mean ratio 1.5), last = rounds 9-10 (mean 9.5).
    row = policy_summary(_log_with_distinct_rounds(), 0.2).iloc[0]
    assert row["proxy_ratio_first"] == 1.5 and row["proxy_ratio_last"] == 9.5
    assert row["frac_optimal_last"] == 0.0  # ratios 9 and 10 are not 1
    assert row["mean_workers_used"] == 3.0  # (5 * 2 + 5 * 4) / 10
    # rounds 1-3 used only zero-bound workers: 3 of 10
    assert row["zero_bound_share"] == pytest.approx(0.3)
    assert "runtime_over_fta" not in policy_summary(_log_with_distinct_rounds(), 0.2)
    wide = policy_summary(_log_with_distinct_rounds(), 0.5).iloc[0]
    assert wide["proxy_ratio_first"] == 3.0 and wide["proxy_ratio_last"] == 8.0


def test_policy_summary_of_a_policy_without_proxy_or_bounds():
    # GTA-like rows: no proxy ratio, no zero-bound count -> NaN, not 0.
    log = _log_with_distinct_rounds().assign(policy="GTA", proxy_ratio=np.nan)
    log["zero_bound_workers"] = np.nan
    row = policy_summary(log, 0.2).iloc[0]
    assert np.isnan(row["frac_optimal_last"]) and np.isnan(row["zero_bound_share"])
    assert np.isnan(
        policy_summary(log.drop(columns="zero_bound_workers"), 0.2).iloc[0]["zero_bound_share"]
    )


def test_frac_optimal_last_counts_rounds_at_the_oracle_proxy():
    log = _log_with_distinct_rounds()
    log.loc[log.k == 10, "proxy_ratio"] = 1.0  # the last fifth: one of two rounds optimal
    assert policy_summary(log, 0.2).iloc[0]["frac_optimal_last"] == 0.5


def test_time_stamped_loss_reads_cumulative_times_at_each_logged_round():
    log = pd.DataFrame(
        {
            "policy": ["FTA"] * 3 + ["ATA"] * 3,
            "k": [3, 1, 2, 1, 2, 3],  # FTA unsorted: sorting by k comes first
            "round_time": [3.0, 1.0, 2.0, 5.0, 5.0, 5.0],
            "worker_time": [30.0, 10.0, 20.0, 1.0, 1.0, 1.0],
        }
    )
    trajectory = pd.DataFrame({"k": [0, 2, 3], "train_loss": [2.0, 1.0, 0.5]})
    out = time_stamped_loss(log, trajectory)
    fta, ata = out[out.policy == "FTA"], out[out.policy == "ATA"]
    assert fta["runtime"].tolist() == [0.0, 3.0, 6.0]  # before any round, after 1+2, after 1+2+3
    assert fta["worker_time"].tolist() == [0.0, 30.0, 60.0]
    assert ata["runtime"].tolist() == [0.0, 10.0, 15.0]
    assert (out["train_loss"].to_numpy() == np.tile([2.0, 1.0, 0.5], 2)).all()
    assert out["k"].tolist() == [0, 2, 3] * 2 and list(out.index) == list(range(6))
