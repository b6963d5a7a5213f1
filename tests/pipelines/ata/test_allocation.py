"""The proxy loss and its water-filling minimiser (Sec. 3), checked by hand and by brute force."""

import itertools

import numpy as np
import pytest

from paper_pipelines.pipelines.ata.allocation import (
    proxy_loss,
    water_filling,
    water_filling_heap,
    water_level,
)


def compositions(n: int, B: int):
    """Every a in N^n with sum a = B."""
    for cuts in itertools.combinations(range(B + n - 1), n - 1):
        bounds = (-1, *cuts, B + n - 1)
        yield np.array([bounds[i + 1] - bounds[i] - 1 for i in range(n)])


def test_proxy_loss_by_hand():
    assert proxy_loss(np.array([2, 1, 0]), np.array([1.0, 2.0, 4.0])) == 2.0
    assert proxy_loss(np.array([0, 0, 3]), np.array([1.0, 2.0, 4.0])) == 12.0


def test_water_filling_small_case_by_hand():
    # Table of u*s_j: w0: 1,2,3  w1: 2,4,6  w2: 4,8,12 -> the three smallest are 1, 2 (w0), 2 (w1).
    a = water_filling(np.array([1.0, 2.0, 4.0]), 3)
    assert a.tolist() == [2, 1, 0]
    assert water_level(np.array([1.0, 2.0, 4.0]), 3) == 2.0


def test_zero_scores_spread_exploration_over_unobserved_workers():
    s = np.array([0.0, 0.0, 0.0, 5.0])
    assert water_filling(s, 5, "spread").tolist() == [2, 2, 1, 0]
    # Fewer observations first among ties: one task each (order 2, 1, 0), then worker 2 again.
    assert water_filling(s, 4, "spread", n_obs=np.array([3, 1, 0, 0])).tolist() == [1, 1, 2, 0]
    # Plain argmin (index) dumps every zero-cost task on the first worker.
    assert water_filling(s, 5, "index").tolist() == [5, 0, 0, 0]


def test_random_rank_breaks_remaining_ties():
    s = np.zeros(3)
    assert water_filling(s, 1, "spread", tie_rank=np.array([2, 0, 1])).tolist() == [0, 1, 0]


@pytest.mark.parametrize("seed", range(30))
def test_greedy_equals_brute_force(seed):
    rng = np.random.default_rng(seed)
    n, B = int(rng.integers(1, 5)), int(rng.integers(1, 7))
    # Integer-valued scores make ties frequent, the hard case for exactness.
    s = rng.integers(0, 5, size=n).astype(float) if seed % 2 else rng.random(n) * 3
    best = min(proxy_loss(a, s) for a in compositions(n, B))
    a = water_filling(s, B)
    assert a.sum() == B and (a >= 0).all()
    assert proxy_loss(a, s) == pytest.approx(best)
    assert water_level(s, B) == pytest.approx(best)


@pytest.mark.parametrize("tie_break", ["spread", "index"])
def test_one_sort_equals_one_task_at_a_time(tie_break):
    rng = np.random.default_rng(1)
    for _ in range(200):
        n, B = int(rng.integers(1, 12)), int(rng.integers(1, 15))
        s = rng.integers(0, 4, size=n).astype(float)
        obs, rank = rng.integers(0, 3, size=n), rng.permutation(n)
        assert (
            water_filling(s, B, tie_break, obs, rank).tolist()
            == water_filling_heap(s, B, tie_break, obs, rank).tolist()
        )


def test_bad_inputs_fail_clearly():
    with pytest.raises(ValueError, match="B must be >= 1"):
        water_filling(np.array([1.0]), 0)
    with pytest.raises(ValueError, match=">= 0"):
        water_filling(np.array([1.0, -1.0]), 2)
    with pytest.raises(ValueError, match="unknown tie_break"):
        water_filling(np.array([1.0]), 1, tie_break="lowest")


def test_water_level_by_hand_and_with_unexplored_workers():
    # table 2, 4, 6 | 3, 6, 9: the 2nd smallest is 3, the 3rd is 4
    s = np.array([2.0, 3.0])
    assert water_level(s, 2) == 3.0 and water_level(s, 3) == 4.0
    assert water_level(np.array([5.0]), 3) == 15.0
    assert water_level(np.array([0.0, 5.0]), 4) == 0.0  # a free worker takes everything


def test_proxy_loss_of_the_empty_allocation_is_zero():
    assert proxy_loss(np.zeros(3, dtype=int), np.array([1.0, 2.0, 3.0])) == 0.0
    assert proxy_loss(np.array([], dtype=int), np.array([])) == 0.0


def test_heap_reference_by_hand():
    # index rule: ties go to the lowest worker; spread rule: to the worker with fewer tasks so far.
    s = np.array([1.0, 1.0, 3.0])
    assert water_filling_heap(s, 3, "index").tolist() == [2, 1, 0]
    assert water_filling_heap(s, 4, "spread").tolist() == [2, 2, 0]
    assert water_filling_heap(np.zeros(3), 2, "spread", tie_rank=np.array([2, 0, 1])).tolist() == [
        0,
        1,
        1,
    ]
    assert water_filling_heap(np.zeros(2), 3, "index").tolist() == [3, 0]


def test_default_keys_are_no_observations_and_the_worker_index():
    # without n_obs / tie_rank, ties among equal values fall back to the lowest index
    assert water_filling(np.zeros(3), 1, "spread").tolist() == [1, 0, 0]
    assert water_filling(np.zeros(3), 2, "spread").tolist() == [1, 1, 0]
    assert water_filling(np.array([2.0, 1.0]), 1).tolist() == [0, 1]


def test_non_finite_or_empty_scores_fail():
    for bad in (np.array([]), np.array([1.0, np.inf]), np.array([np.nan])):
        with pytest.raises(ValueError, match="non-empty vector of finite values >= 0"):
            water_filling(bad, 1)


def test_allocations_are_integer_counts():
    assert water_filling_heap(np.array([1.0, 2.0]), 3).dtype.kind == "i"
    assert water_filling(np.array([1.0, 2.0]), 3).dtype.kind == "i"
