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


def test_spread_and_index_split_zero_bounds_differently():
    # Nothing observed: every s_i = 0, so every split of B = 5 tasks is a minimiser; the rule decides.
    spread = AdaptiveAllocator(4, 5, "lcb", width=1.0, rng=np.random.default_rng(0))
    assert sorted(spread.allocate(1).tolist()) == [1, 1, 1, 2]
    index = AdaptiveAllocator(4, 5, "lcb", width=1.0, tie_break="index")
    assert index.allocate(1).tolist() == [5, 0, 0, 0]


def test_tie_goes_to_the_least_observed_worker():
    # Workers 0 and 1 were seen once; all bounds are still 0 (alpha = 100), so the task goes to 2.
    policy = AdaptiveAllocator(3, 1, "lcb", width=100.0, rng=np.random.default_rng(0))
    policy.observe(np.array([1, 1, 0]), np.array([2.0, 3.0, 0.0]))
    assert policy.scores(2).tolist() == [0.0, 0.0, 0.0]
    for k in range(2, 6):
        assert policy.allocate(k).tolist() == [0, 0, 1]


def test_last_tie_key_is_a_rank_drawn_afresh_every_round():
    # Equal bounds and observations: the task goes to the worker of rank 0 in this round's permutation.
    policy = AdaptiveAllocator(4, 1, "empirical", width=1.0, rng=np.random.default_rng(5))
    twin = np.random.default_rng(5)
    chosen = []
    for k in range(1, 13):
        expected = int(np.argmin(twin.permutation(4)))
        a = policy.allocate(k)
        assert a.tolist() == np.eye(4, dtype=int)[expected].tolist()
        chosen.append(expected)
    assert len(set(chosen)) > 1  # not one fixed order


def test_allocate_keeps_the_bounds_it_used():
    policy = AdaptiveAllocator(2, 2, "lcb", width=0.0)
    policy.observe(np.array([1, 1]), np.array([1.0, 4.0]))
    policy.allocate(3)
    assert policy.last_scores.tolist() == [1.0, 4.0]


@pytest.mark.parametrize("k", [0, -1, 1.5, True])
def test_allocate_needs_a_round_from_one(k):
    policy = AdaptiveAllocator(3, 2, "lcb", width=1.0)
    with pytest.raises(ValueError, match="the round k must be an integer >= 1"):
        policy.allocate(k)


@pytest.mark.parametrize(
    ("a", "sums", "message"),
    [
        ([1, 1, 0], [1.0, np.nan, 0.0], "task_sums must be finite"),
        ([1, 1, 0], [1.0, np.inf, 0.0], "task_sums must be finite"),
        ([1, 1, 0], [1.0, -2.0, 0.0], "task_sums must be finite times >= 0"),
        ([1, -1, 2], [1.0, 1.0, 1.0], "integers >= 0"),
        ([1.0, 1.0, 0.0], [1.0, 1.0, 0.0], "integers >= 0"),
        ([1, 1], [1.0, 1.0], r"shape \(3,\)"),
    ],
)
def test_observe_rejects_bad_feedback_and_keeps_its_state(a, sums, message):
    policy = AdaptiveAllocator(3, 2, "empirical", width=0.5)
    policy.observe(np.array([1, 0, 1]), np.array([2.0, 0.0, 4.0]))
    with pytest.raises(ValueError, match=message):
        policy.observe(np.array(a), np.array(sums))
    assert policy.counts.tolist() == [1, 0, 1] and policy.sums.tolist() == [2.0, 0.0, 4.0]
    assert np.isfinite(policy.scores(2)).all()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"n": 0}, "n must be an integer >= 1"),
        ({"B": 0}, "B must be an integer >= 1"),
        ({"width": float("nan")}, "width"),
        ({"width": -1.0}, "width"),
        ({"conf_scale": 0.0}, "conf_scale"),
        ({"tie_break": "lowest"}, "unknown tie_break"),
    ],
)
def test_bad_constructor_arguments_fail_clearly(kwargs, message):
    args = {"n": 3, "B": 2, "bound": "lcb", "width": 1.0, **kwargs}
    with pytest.raises(ValueError, match=message):
        AdaptiveAllocator(**args)


def test_lcb_ata_empirical_by_hand():
    # k = 2: L = ln 8; K = 9 observations: width = sqrt(L / 9) + L / 9; s = mu_hat (1 - 2 eta width).
    L = np.log(8.0)
    width = np.sqrt(L / 9) + L / 9
    s = lcb_ata_empirical(np.array([5.0, 7.0]), np.array([9, 0]), 2, eta=0.1)
    assert s[0] == pytest.approx(5.0 * (1 - 2 * 0.1 * width))
    assert s[1] == 0.0
    # another constant c: s = mu_hat (1 - c eta width)
    s = lcb_ata_empirical(np.array([5.0]), np.array([9]), 2, eta=0.1, conf_scale=0.5)
    assert s[0] == pytest.approx(5.0 * (1 - 0.5 * 0.1 * width))


def test_lcb_ata_clips_at_zero_and_uses_the_constant():
    L = np.log(2.0)
    assert (
        lcb_ata(np.array([1.0]), np.array([1]), 1, alpha=5.0)[0] == 0.0
    )  # 1 - 10 (sqrt L + L) < 0
    s = lcb_ata(np.array([10.0]), np.array([4]), 1, alpha=1.0, conf_scale=0.5)
    assert s[0] == pytest.approx(10 - 0.5 * (np.sqrt(L / 4) + L / 4))


def test_allocator_scores_follow_its_bound_and_constant():
    # the allocator's bounds are the module functions at its own width and constant
    for bound, fn in (("lcb", lcb_ata), ("empirical", lcb_ata_empirical)):
        policy = AdaptiveAllocator(2, 3, bound, width=0.3, conf_scale=1.5)
        policy.observe(np.array([4, 2]), np.array([8.0, 10.0]))  # means 2 and 5
        expected = fn(np.array([2.0, 5.0]), np.array([4, 2]), 7, 0.3, conf_scale=1.5)
        np.testing.assert_allclose(policy.scores(7), expected)
        assert policy.mu_hat.tolist() == [2.0, 5.0]


def test_observe_adds_to_earlier_observations():
    policy = AdaptiveAllocator(2, 2, "lcb", width=0.0)
    policy.observe(np.array([1, 0]), np.array([3.0, 9.0]))  # the idle worker's sum is ignored
    policy.observe(np.array([1, 2]), np.array([5.0, 4.0]))
    assert policy.counts.tolist() == [2, 2] and policy.sums.tolist() == [8.0, 4.0]
    assert policy.mu_hat.tolist() == [4.0, 2.0]


def test_default_generator_is_seeded():
    # without a generator the tie ranks come from default_rng(0): runs repeat exactly
    given = AdaptiveAllocator(6, 2, "lcb", width=1.0, rng=np.random.default_rng(0))
    default = AdaptiveAllocator(6, 2, "lcb", width=1.0)
    assert [given.allocate(k).tolist() for k in range(1, 6)] == [
        default.allocate(k).tolist() for k in range(1, 6)
    ]


def test_allocator_defaults_and_state_types():
    # c = 2 (ICML) by default; a constant below 1 is allowed
    policy = AdaptiveAllocator(2, 3, "lcb", width=0.3)
    assert policy.last_scores is None  # nothing allocated yet
    policy.observe(np.array([4, 2]), np.array([8.0, 10.0]))
    np.testing.assert_allclose(
        policy.scores(7), lcb_ata(np.array([2.0, 5.0]), np.array([4, 2]), 7, 0.3, conf_scale=2.0)
    )
    assert policy.counts.dtype == np.int64
    small = AdaptiveAllocator(2, 3, "empirical", width=0.3, conf_scale=0.5)
    small.observe(np.array([4, 2]), np.array([8.0, 10.0]))
    expected = lcb_ata_empirical(np.array([2.0, 5.0]), np.array([4, 2]), 7, 0.3, conf_scale=0.5)
    np.testing.assert_allclose(small.scores(7), expected)
