"""The official link-prediction measures on hand-checkable scores."""

import numpy as np
import pytest

from paper_pipelines.pipelines.leaf_matching.metrics import (
    f1_at_top,
    global_mrr,
    hits_at_k,
    link_prediction_scores,
    roc_auc,
)


def test_hits_counts_ties_with_the_kth_negative_as_half():
    neg = np.array([0.9, 0.5, 0.1])
    pos = np.array([0.95, 0.5, 0.4, 0.6])
    # k = 2: the 2nd best negative is 0.5; above it 0.95 and 0.6, tied 0.5 counts half -> 2.5 / 4
    assert hits_at_k(pos, neg, 2) == pytest.approx(2.5 / 4)
    assert hits_at_k(pos, neg, 1) == pytest.approx(1 / 4)  # only 0.95 beats 0.9
    assert hits_at_k(pos, neg, 4) == 1.0  # fewer negatives than k


def test_mrr_averages_optimistic_and_pessimistic_ranks():
    neg = np.array([0.2, 0.5, 0.8])
    pos = np.array([0.9, 0.5])
    # 0.9 ranks first (1/1); 0.5 is tied with a negative: rank 2 (optimistic) or 3 (pessimistic)
    assert global_mrr(pos, neg) == pytest.approx(((1 + 1 / 2) / 2 + (1 + 1 / 3) / 2) / 2)


def test_f1_labels_the_top_pos_count_positive():
    pos = np.array([0.9, 0.3])
    neg = np.array([0.8, 0.1, 0.2])
    # top 2 scores: 0.9 (pos) and 0.8 (neg) -> precision 1/2, recall 1/2
    assert f1_at_top(pos, neg) == pytest.approx(0.5)


def test_auc_and_the_full_set():
    pos, neg = np.array([0.9, 0.4]), np.array([0.5, 0.1])
    assert roc_auc(pos, neg) == pytest.approx(0.75)
    out = link_prediction_scores(pos, neg, [1, 2])
    assert set(out) == {"auc", "ap", "f1", "mrr", "hits@1", "hits@2"}
    # k = 1: only 0.9 beats the best negative 0.5; k = 2: both beat the 2nd best, 0.1
    assert out["hits@1"] == pytest.approx(0.5) and out["hits@2"] == pytest.approx(1.0)
