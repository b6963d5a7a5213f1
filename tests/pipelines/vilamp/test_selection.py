"""Differential keyframe selection on hand-checkable cases (spec check 8: the released behaviour)."""

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.vilamp.metrics import events_hit, needle_recall
from paper_pipelines.pipelines.vilamp.selection import (
    differential_keyframe_selection,
    fill_budget,
    frame_relevance,
    gaps_between,
    greedy_keyframes,
    insertions_needed,
    linspace_keyframes,
    naive_greedy_keyframes,
    relevance_topk,
    smallest_spacing,
    straight_through_weights,
    temporal_distinctiveness,
)


def test_fill_matches_the_spec_hand_checked_cases():
    # N = 10, K = 4, greedy kept frame 5: gaps of 5 and 4 frames, D = 2
    assert fill_budget([5], 10, 4) == [2, 4, 5, 8]
    # N = 12, K = 5, greedy kept {0, 11}: one gap of 10 frames, D = 3
    assert fill_budget([0, 11], 12, 5) == [0, 4, 7, 10, 11]


def test_fill_spends_leftover_slots_from_the_end_backwards():
    # N = 7, K = 4, kept {3}: gaps (0..2) and (4..6); D = 2 inserts frames 2 and 6, one slot is left
    # and goes to the last free frame walking backwards from the end: 5
    assert fill_budget([3], 7, 4) == [2, 3, 5, 6]


def test_fill_with_nothing_kept_spaces_the_budget_evenly():
    # one gap of 10, budget 3: D = 3 (D = 2 would need 4), step ceil(10 / 4) = 3
    assert fill_budget([], 10, 3) == [3, 6, 9]


def test_fill_keeps_a_full_budget_and_short_videos_whole():
    assert fill_budget([1, 4], 9, 2) == [1, 4]
    assert fill_budget([2], 4, 6) == [0, 1, 2, 3]


def test_gap_arithmetic():
    assert gaps_between([3, 4, 8], 10) == [(0, 2), (5, 7), (9, 9)]
    assert gaps_between([], 4) == [(0, 3)]
    assert gaps_between([0, 1, 2], 3) == []
    assert insertions_needed([(0, 4), (6, 9)], 2) == 3  # ceil(5/2)-1 + ceil(4/2)-1
    assert insertions_needed([(0, 4), (6, 9)], 1) == 7
    assert smallest_spacing([(0, 4), (6, 9)], 3, 10) == 2
    assert smallest_spacing([(0, 4), (6, 9)], 2, 10) == 3
    assert smallest_spacing([(0, 4), (6, 9)], 0, 10) == 5


def _frames():
    # 2-D embeddings: frame 1 nearly duplicates frame 0 (cos 0.99); query points at frame 0
    e = torch.tensor([[1.0, 0.0], [0.99, 0.141], [0.0, 1.0], [-1.0, 0.0], [0.6, -0.8]])
    return e, torch.tensor([1.0, 0.0])


def test_relevance_and_distinctiveness_are_cosines():
    e, q = _frames()
    r = frame_relevance(e, q)
    assert torch.allclose(r, torch.tensor([1.0, 0.99, 0.0, -1.0, 0.6]), atol=1e-3)
    t = temporal_distinctiveness(e, [0, 2])
    assert torch.allclose(t, torch.tensor([1.0, 0.99, 1.0, 0.0, 0.6]), atol=1e-3)
    assert torch.equal(temporal_distinctiveness(e, []), torch.full((5,), -1.0))


def test_greedy_suppresses_near_duplicates_of_a_keyframe():
    e, q = _frames()
    r = frame_relevance(e, q)
    # by relevance: 0, 1, 4, 2, 3; frame 1 has cos 0.99 > 0.85 to keyframe 0
    assert greedy_keyframes(e, r, 3, 0.85) == [0, 2, 4]
    assert greedy_keyframes(e, r, 4, 0.85) == [0, 2, 3, 4]
    # tau = 0.5 also drops frame 4 (cos 0.6 to frame 0)
    assert greedy_keyframes(e, r, 4, 0.5) == [0, 2, 3]
    # relevance-only: no frame is suppressed
    assert greedy_keyframes(e, r, 3, 1.0) == [0, 1, 4] == relevance_topk(r, 3)


def test_suppression_is_strictly_greater_than_tau():
    # exact duplicates have cosine 1: with tau = 1 the released `>` test keeps both
    e = torch.tensor([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    r = torch.tensor([0.9, 0.8, 0.1])
    assert greedy_keyframes(e, r, 2, 1.0) == [0, 1]
    assert greedy_keyframes(e, r, 2, 0.99) == [0, 2]


def test_relevance_floor_stops_the_walk():
    e, q = _frames()
    r = frame_relevance(e, q)
    assert greedy_keyframes(e, r, 4, 0.85, relevance_floor=0.5) == [0, 4]
    assert greedy_keyframes(e, r, 4, 0.85, relevance_floor=0.7) == [0]


def test_bad_budget_or_tau_is_refused():
    e, q = _frames()
    r = frame_relevance(e, q)
    with pytest.raises(ValueError, match="K must be >= 1"):
        greedy_keyframes(e, r, 0, 0.85)
    with pytest.raises(ValueError, match=r"tau is a cosine threshold in \[-1, 1\]"):
        greedy_keyframes(e, r, 2, 1.5)
    with pytest.raises(ValueError, match="no frames"):
        differential_keyframe_selection(torch.zeros(0, 2), q, 2, 0.85)


def test_dks_end_to_end_fills_the_budget_and_falls_back_to_linspace():
    e, q = _frames()
    keys, r = differential_keyframe_selection(e, q, 5, 0.5)
    assert keys == [0, 1, 2, 3, 4]  # greedy kept 0, 2, 3; filling adds the rest
    keys, _ = differential_keyframe_selection(e, q, 4, 0.5, fill=False)
    assert keys == [0, 2, 3]
    keys, _ = differential_keyframe_selection(e, q, 2, 0.85, relevance_floor=1.5, fill=False)
    assert keys == [0, 4]  # nothing clears the floor: linspace(0, N - 1, K)
    assert linspace_keyframes(10, 4) == [0, 3, 6, 9]
    assert linspace_keyframes(3, 5) == [0, 1, 2]


def test_our_walk_equals_the_naive_n_by_n_walk():
    rng = np.random.default_rng(0)
    for case in range(50):
        n = int(rng.integers(20, 300))
        emb = np.cumsum(rng.standard_normal((n, 8)), axis=0).astype(np.float32)  # a drifting video
        rel = rng.uniform(-1, 1, n).astype(np.float32)
        k, tau = int(rng.choice([2, 4, 8])), float(rng.choice([0.3, 0.5, 0.85]))
        ours = greedy_keyframes(torch.from_numpy(emb), torch.from_numpy(rel), k, tau)
        assert ours == naive_greedy_keyframes(emb, rel, k, tau), case


def test_straight_through_weights_are_one_with_the_softmax_gradient():
    r = torch.tensor([0.2, 0.9, -0.3], requires_grad=True)
    w = straight_through_weights(r)
    assert torch.allclose(w, torch.ones(3))
    (w * torch.tensor([1.0, 0.0, 0.0])).sum().backward()
    p = torch.softmax(r.detach(), 0)
    # d p_0 / d r_j = p_0 (delta_0j - p_j)
    expected = p[0] * (torch.tensor([1.0, 0.0, 0.0]) - p)
    assert torch.allclose(r.grad, expected, atol=1e-6)


def test_needle_recall_and_events_hit():
    assert needle_recall([3, 10], [9, 10, 11]) == 1.0
    assert needle_recall([3, 12], [9, 10, 11]) == 0.0
    # two asked runs (frames 9-11 and 20-21) and a distractor at 30: one of the two asked runs hit
    spec = {"needle_frames": [9, 10, 11, 20, 21], "events": [[9, 3], [20, 2], [30, 4]]}
    assert events_hit([10, 30], spec) == 0.5
    assert events_hit([21, 9], spec) == 1.0
