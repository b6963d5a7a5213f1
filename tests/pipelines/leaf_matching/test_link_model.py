"""The degree-aware link model and the likelihood on numbers a reader can check by hand."""

import math

import pytest
import torch

from paper_pipelines.pipelines.leaf_matching.link_model import (
    link_probability,
    negative_loss,
    node_likelihood_loss,
    popularity_radius,
    positive_loss,
    score_pairs,
)


def test_radius_is_log_of_degree_product():
    r = popularity_radius(torch.tensor([1, 3]), torch.tensor([1, 0]))
    assert r.tolist() == pytest.approx([math.log(4), math.log(4)])


def test_probability_by_hand():
    # D = 2, radius = ln 4, gamma = 3, alpha = 8: p = 1 / (1 + (2 / ln 4)^3 / 8)
    p = link_probability(torch.tensor(2.0), torch.tensor(math.log(4)), 8.0, 3.0, 0.0)
    assert p.item() == pytest.approx(1 / (1 + (2 / math.log(4)) ** 3 / 8))
    # eps shifts the distance: at D = 0 with eps = 1, radius 1, gamma 2, alpha 1: p = 1/2
    assert link_probability(torch.tensor(0.0), torch.tensor(1.0), 1.0, 2.0, 1.0).item() == 0.5


def test_probability_falls_with_distance_and_rises_with_degree():
    d = torch.arange(0, 10, dtype=torch.float32)
    p = link_probability(d, torch.tensor(2.0), 8.0, 3.0, 1e-5)
    assert torch.all(p[1:] < p[:-1])
    assert link_probability(
        torch.tensor(3.0), torch.tensor(4.0), 8.0, 3.0, 1e-5
    ) > link_probability(torch.tensor(3.0), torch.tensor(2.0), 8.0, 3.0, 1e-5)


def test_likelihood_by_hand():
    p_pos = torch.tensor([0.5, 0.25])
    p_neg = torch.tensor([0.5, 0.0])
    eps = 0.0
    # (2 * (ln 2 + ln 4) + (ln 2 + 0)) / 2
    expected = (2 * (math.log(2) + math.log(4)) + math.log(2)) / 2
    assert node_likelihood_loss(p_pos, p_neg, 2.0, eps).item() == pytest.approx(expected)
    assert positive_loss(torch.tensor(1.0)).item() == 0.0
    assert negative_loss(torch.tensor(1.0), 1e-5).item() == pytest.approx(-math.log(1e-5), rel=1e-3)


def test_score_pairs_matches_the_formula_and_chunks():
    from paper_pipelines.pipelines.leaf_matching.ct_space import distance_table

    table = distance_table(3)
    leaves = torch.tensor([[0, 1], [1, 1], [7, 0]])
    degree = torch.tensor([1, 2, 3])
    pairs = torch.tensor([[0, 1], [0, 2], [1, 2]])
    got = score_pairs(leaves, degree, pairs, table, 8.0, 3.0, 1e-5, chunk=2)
    dist = torch.tensor([0.5, 2.0, 2.0])  # (1 + 0) / 2, (3 + 1) / 2, (3 + 1) / 2
    radius = torch.log(torch.tensor([2.0 * 3, 2 * 4, 3 * 4]))
    assert torch.allclose(got, 1 / (1 + ((dist + 1e-5) / radius) ** 3 / 8))
