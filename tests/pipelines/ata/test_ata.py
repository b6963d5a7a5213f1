"""ATA and ATA-Empirical: the lower confidence bounds and the semi-bandit loop (Algorithm 1)."""

import numpy as np
import pytest

from paper_pipelines.pipelines.ata.allocation import water_filling
from paper_pipelines.pipelines.ata.ata import (
    AdaptiveAllocator,
    confidence_level,
    lcb_ata,
    lcb_ata_empirical,
)


def test_confidence_level_is_log_2k2():
    assert confidence_level(1) == pytest.approx(np.log(2))
    assert confidence_level(10) == pytest.approx(np.log(200))


def test_lcb_ata_by_hand():
    # k = 1: L = ln 2; worker 0 has K = 4 observations of mean 10, alpha = 1, constant 2.
    L = np.log(2)
    s = lcb_ata(np.array([10.0, 3.0, 7.0]), np.array([4, 0, 1]), 1, alpha=1.0)
    assert s[0] == pytest.approx(10 - 2 * (np.sqrt(L / 4) + L / 4))
    assert s[1] == 0.0  # never observed: infinite width
    assert s[2] == pytest.approx(7 - 2 * (np.sqrt(L) + L))


def test_lcb_ata_empirical_is_scale_free_and_clipped():
    mu_hat, counts = np.array([1.0, 1000.0]), np.array([50, 50])
    s = lcb_ata_empirical(mu_hat, counts, 5, eta=0.5)
    assert s[1] / s[0] == pytest.approx(1000.0)
    assert lcb_ata_empirical(np.array([4.0]), np.array([1]), 5, eta=0.5)[0] == 0.0


def test_alpha_zero_is_plug_in_greedy_on_empirical_means():
    rng = np.random.default_rng(0)
    policy = AdaptiveAllocator(6, 7, "lcb", width=0.0, rng=np.random.default_rng(1))
    policy.observe(np.ones(6, dtype=int), rng.random(6) * 5 + 1)  # one observation each
    for k in range(2, 30):
        mu_hat = policy.mu_hat.copy()
        a = policy.allocate(k)
        assert a.tolist() == water_filling(mu_hat, 7, tie_break="index").tolist()
        sums = a * (rng.random(6) * 5 + 1)
        policy.observe(a, sums)


def test_semi_bandit_feedback_counts_every_task():
    policy = AdaptiveAllocator(3, 4, "empirical", width=0.7)
    a = np.array([3, 1, 0])
    policy.observe(a, np.array([6.0, 5.0, 0.0]))
    assert policy.counts.tolist() == [3, 1, 0]
    assert policy.mu_hat.tolist() == [2.0, 5.0, 0.0]


def test_first_round_explores_distinct_workers():
    policy = AdaptiveAllocator(10, 4, "lcb", width=1.0, rng=np.random.default_rng(0))
    a = policy.allocate(1)
    assert a.sum() == 4 and a.max() == 1


def test_bad_bound_fails():
    with pytest.raises(ValueError, match="bound must be"):
        AdaptiveAllocator(3, 4, "ucb", width=1.0)
