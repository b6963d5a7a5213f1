"""Distances over any leading shape, the ball's boundary, and the same-likelihood baseline against a
one-step derivation of its documented training loop."""

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.leaf_matching import baselines
from paper_pipelines.pipelines.leaf_matching.ct_space import distance_table, node_distance
from paper_pipelines.pipelines.leaf_matching.link_model import (
    link_probability,
    negative_loss,
    node_likelihood_loss,
    popularity_radius,
    positive_loss,
    score_pairs,
)


def test_distances_act_on_the_last_axis_of_batched_points():
    g = torch.Generator().manual_seed(0)
    x, y = 0.3 * torch.rand(2, 3, 4, generator=g), 0.3 * torch.rand(2, 3, 4, generator=g)
    assert torch.allclose(baselines.euclidean_distance(x, y), torch.linalg.norm(x - y, dim=-1))
    sq, nx_, ny = ((x - y) ** 2).sum(-1), (x**2).sum(-1), (y**2).sum(-1)
    expected = torch.acosh(1 + 2 * sq / ((1 - nx_) * (1 - ny)))
    assert torch.allclose(baselines.poincare_distance(x, y), expected, atol=1e-3)
    ball = baselines.to_poincare_ball(x)
    assert torch.allclose(ball.norm(dim=-1), torch.tanh(x.norm(dim=-1)))


def test_far_points_stay_strictly_inside_the_ball():
    u = torch.tensor([[50.0, 0.0], [0.0, -80.0]])
    assert torch.all(baselines.to_poincare_ball(u).norm(dim=-1) < 1 - 1e-6)


def test_node_distance_and_node_loss_reduce_the_last_axis_of_batches():
    table = distance_table(3)
    z_i = torch.tensor([[[0, 1], [2, 3]], [[4, 5], [6, 7]]])
    z_j = torch.zeros_like(z_i)
    assert node_distance(z_i, z_j, table).tolist() == [[0.5, 2.0], [3.0, 3.0]]
    p_pos = torch.tensor([[0.5, 0.25], [0.5, 0.5]])
    p_neg = torch.tensor([[0.5, 0.5], [0.0, 0.0]])
    loss = node_likelihood_loss(p_pos, p_neg, 2.0, 0.0)
    expected = (2.0 * -torch.log(p_pos).sum(-1) - torch.log(1 - p_neg).sum(-1)) / 2
    assert torch.allclose(loss, expected)


def test_scoring_no_pairs_gives_an_empty_vector():
    out = score_pairs(
        torch.zeros((3, 2), dtype=torch.long),
        torch.ones(3),
        torch.empty((0, 2), dtype=torch.long),
        distance_table(2),
        1.0,
        1.0,
        0.1,
    )
    assert out.shape == (0,)


TRAIN = np.array([[0, 1], [1, 2], [2, 3], [0, 2]])
PAIRS = np.array([[0, 3], [1, 3], [0, 4]])  # node 4 is isolated (observed graph of 5 nodes)


def one_step_reference(space: str, steps: int) -> np.ndarray:
    """The loop fit_same_likelihood documents, written out: init 0.1 N(0, 1), negatives from each edge's
    first end to a uniform node, pos_ratio-weighted mean -ln p plus mean -ln(1 + eps - p), Adam."""
    g = torch.Generator().manual_seed(7)
    edges = torch.as_tensor(TRAIN)
    degree = torch.bincount(edges.flatten(), minlength=5)
    weight = torch.nn.Parameter(0.1 * torch.randn(5, 2, generator=g))
    opt = torch.optim.Adam([weight], lr=0.05)

    def prob(pairs):
        if space == "euclidean":
            x, fn = weight, baselines.euclidean_distance
        else:
            x, fn = baselines.to_poincare_ball(weight), baselines.poincare_distance
        d = fn(x[pairs[:, 0]], x[pairs[:, 1]])
        return link_probability(
            d, popularity_radius(degree[pairs[:, 0]], degree[pairs[:, 1]]), 1.5, 2.0, 0.1
        )

    for _ in range(steps):
        neg = torch.stack([edges[:, 0], torch.randint(0, 5, (len(edges),), generator=g)], 1)
        loss = 3.0 * positive_loss(prob(edges)).mean() + negative_loss(prob(neg), 0.1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    with torch.no_grad():
        return prob(torch.as_tensor(PAIRS)).numpy()


@pytest.mark.parametrize("space", ["euclidean", "poincare"])
@pytest.mark.parametrize("steps", [0, 3])
def test_same_likelihood_baseline_follows_its_documented_loop(space, steps):
    score = baselines.fit_same_likelihood(
        TRAIN, 5, space, 2, steps, 0.05, 1.5, 2.0, 0.1, 3.0, torch.Generator().manual_seed(7)
    )
    np.testing.assert_allclose(score(PAIRS), one_step_reference(space, steps), rtol=1e-5)


def test_preferential_attachment_scores_isolated_top_ids():
    score = baselines.fit_preferential_attachment(TRAIN, 5)
    assert score(PAIRS).tolist() == [2.0, 2.0, 0.0]
