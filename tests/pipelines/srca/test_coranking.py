"""Co-ranking quality (Lee & Verleysen; R packages coRanking / dimRed as the paper uses them)."""

import numpy as np
import pytest

from paper_pipelines.pipelines.srca.coranking import (
    auc_ln_k,
    coranking_matrix,
    coranking_scores,
    q_nx,
    r_nx,
    rank_matrix,
)


def test_rank_matrix_on_a_line():
    X = np.array([[0.0], [1.0], [3.0], [7.0]])
    R = rank_matrix(X)
    np.testing.assert_array_equal(R[0], [0, 1, 2, 3])
    np.testing.assert_array_equal(R[2], [2, 1, 0, 3])  # from 3: 1 (dist 2), 0 (3), 7 (4)


def test_identical_embedding_scores_one():
    X = np.random.default_rng(0).standard_normal((40, 3))
    Q = coranking_matrix(X, 2.0 * X + 1.0)  # ranks are invariant to scaling and shift
    assert np.count_nonzero(Q - np.diag(np.diag(Q))) == 0
    np.testing.assert_allclose(q_nx(Q), 1.0)
    np.testing.assert_allclose(r_nx(Q), 1.0)
    s = coranking_scores(X, X)
    assert s["auc_weighted"] == pytest.approx(1.0)
    assert s["auc_unweighted"] == pytest.approx(1.0)


def test_swapped_neighbours_hand_checked():
    # Line 0,1,3,7 vs an embedding that swaps the last two points' order from point 0.
    high = np.array([[0.0], [1.0], [3.0], [7.0]])
    low = np.array([[0.0], [1.0], [7.0], [3.0]])
    Q = coranking_matrix(high, low)
    assert Q.shape == (3, 3)
    assert Q.sum() == 12  # n (n - 1) pairs
    # Q_NX(1) = fraction of nearest neighbours kept: every point keeps its nearest neighbour
    # except 3 (high: 1; low 3 -> nearest is 1 (distance 2) vs 0 (3))... computed by counting:
    kept_1 = sum(
        np.argsort(np.abs(high[:, 0] - high[i, 0]))[1]
        == np.argsort(np.abs(low[:, 0] - low[i, 0]))[1]
        for i in range(4)
    )
    assert q_nx(Q)[0] == pytest.approx(kept_1 / 4)


def test_random_embedding_scores_near_zero():
    rng = np.random.default_rng(1)
    X = rng.standard_normal((300, 5))
    s = coranking_scores(X, rng.standard_normal((300, 2)))
    assert abs(s["auc_weighted"]) < 0.1


def test_auc_weights_small_neighbourhoods_more():
    rnx = np.array([1.0, 0.0, 0.0])
    assert auc_ln_k(rnx) == pytest.approx(1.0 / (1 + 1 / 2 + 1 / 3))
