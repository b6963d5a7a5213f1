"""Baselines on hand-checkable cases: distances, walks, heuristics, and that the learners beat chance."""

import math

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.leaf_matching import baselines as bl
from paper_pipelines.pipelines.leaf_matching.metrics import roc_auc

# a 4-cycle 0-1-2-3 with the chord 0-2
SQUARE = np.array([[0, 1], [1, 2], [2, 3], [3, 0], [0, 2]])


def test_euclidean_and_poincare_distances_by_hand():
    x, y = torch.tensor([[0.0, 0.0]]), torch.tensor([[3.0, 4.0]])
    assert bl.euclidean_distance(x, y).item() == pytest.approx(5.0)
    # from the origin to a point of norm r the Poincare distance is 2 artanh(r)
    p = torch.tensor([[0.5, 0.0]])
    assert bl.poincare_distance(torch.zeros(1, 2), p).item() == pytest.approx(
        2 * math.atanh(0.5), rel=1e-4
    )
    # 1 + 2 |x - y|^2 / ((1 - |x|^2)(1 - |y|^2)) with x = (0.5, 0), y = (-0.5, 0): 1 + 2 / 0.5625
    q = torch.tensor([[-0.5, 0.0]])
    assert bl.poincare_distance(p, q).item() == pytest.approx(
        math.acosh(1 + 2 * 1.0 / 0.5625), rel=1e-4
    )


def test_exponential_map_lands_inside_the_ball():
    u = torch.tensor([[3.0, 4.0], [0.0, 0.0], [0.1, 0.0]])
    x = bl.to_poincare_ball(u)
    assert x[0].norm().item() == pytest.approx(math.tanh(5.0), rel=1e-5) and x[0].norm() < 1
    assert torch.allclose(x[0] / x[0].norm(), torch.tensor([0.6, 0.8]))
    assert x[1].norm().item() == 0.0
    assert x[2, 0].item() == pytest.approx(math.tanh(0.1))


def test_heuristics_by_hand():
    pairs = np.array([[1, 3], [0, 2], [0, 1]])
    assert bl.fit_preferential_attachment(SQUARE, 4)(pairs).tolist() == [4.0, 9.0, 6.0]
    # 1 and 3 share 0 and 2 (degree 3 each): 2 / ln 3; 0 and 1 share 2: 1 / ln 3
    aa = bl.fit_adamic_adar(SQUARE, 4)(pairs)
    assert aa[0] == pytest.approx(2 / math.log(3)) and aa[2] == pytest.approx(1 / math.log(3))


def test_random_walks_follow_edges_and_skipgram_pairs_count():
    walks = bl.random_walks(SQUARE, 5, 3, 6, np.random.default_rng(0))
    assert walks.shape == (4 * 3, 6)  # node 4 is isolated: no walk starts there
    edges = {tuple(e) for e in SQUARE.tolist()} | {tuple(e[::-1]) for e in SQUARE.tolist()}
    assert all((a, b) in edges for w in walks.tolist() for a, b in zip(w, w[1:], strict=False))
    pairs = bl.skipgram_pairs(np.array([[0, 1, 2]]), 2)
    assert sorted(map(tuple, pairs.tolist())) == [(0, 1), (0, 2), (1, 0), (1, 2), (2, 0), (2, 1)]


def _two_blocks():
    rng = np.random.default_rng(0)
    n = 40
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    same = [(i < 20) == (j < 20) for i, j in pairs]
    edges = np.array(
        [p for p, s in zip(pairs, same, strict=True) if rng.random() < (0.4 if s else 0.02)]
    )
    order = rng.permutation(len(edges))
    known = {tuple(e) for e in edges.tolist()}
    non_edges = np.array([p for p in pairs if p not in known])
    non_edges = non_edges[rng.permutation(len(non_edges))[:200]]
    return edges[order[:-20]], edges[order[-20:]], n, non_edges


@pytest.mark.parametrize("space", ["euclidean", "poincare"])
def test_same_likelihood_embeddings_fit_the_observed_links(space):
    train, held, n, non_edges = _two_blocks()
    gen = torch.Generator().manual_seed(0)
    # a steep link model (alpha 1, gamma 6): with alpha 8, gamma 3 even observed links stay near p = 1/2
    score = bl.fit_same_likelihood(train, n, space, 4, 300, 0.05, 1.0, 6.0, 1e-5, 1.0, gen)
    assert roc_auc(score(train), score(non_edges)) > 0.75
    assert roc_auc(score(held), score(non_edges)) > 0.55


def test_deepwalk_and_gae_rank_held_out_links_above_random_pairs():
    train, held, n, random_pairs = _two_blocks()
    rng = np.random.default_rng(1)
    gen = torch.Generator().manual_seed(0)
    dw = bl.fit_deepwalk(train, n, 8, 5, 10, 2, 3, 2, 0.02, 256, rng, gen)
    assert roc_auc(dw(held), dw(random_pairs)) > 0.7
    gae = bl.fit_gae(train, n, 16, 8, 60, 0.01, gen)
    assert roc_auc(gae(held), gae(random_pairs)) > 0.7
