"""Poincare-ball maps on hand-checkable points, and against geoopt's own implementation."""

import math

import geoopt
import pytest
import torch

from paper_pipelines.pipelines.cross_geometric import poincare

X = torch.tensor([[0.1, -0.2, 0.3], [0.5, 0.1, -0.4], [0.0, 0.0, 0.05], [-0.6, 0.3, 0.2]])


@pytest.mark.parametrize("c", [1.0, 2.0])
def test_exp_log_round_trip(c):
    v = torch.tensor([[0.3, -1.2, 0.4], [2.0, 0.5, -0.1], [1e-4, 0.0, 0.0]])
    assert torch.allclose(poincare.logmap0(poincare.expmap0(v, c, 1e-5), c), v, atol=1e-5)
    x = X / math.sqrt(c)
    assert torch.allclose(poincare.expmap0(poincare.logmap0(x, c), c, 1e-5), x, atol=1e-5)


def test_expmap0_by_hand():
    # |v| = 1 along an axis: exp_0 gives tanh(1) along that axis; c = 4 halves the radius: tanh(2)/2
    v = torch.tensor([[1.0, 0.0]])
    assert torch.allclose(poincare.expmap0(v, 1.0, 1e-5), torch.tensor([[math.tanh(1.0), 0.0]]))
    assert torch.allclose(poincare.expmap0(v, 4.0, 1e-5), torch.tensor([[math.tanh(2.0) / 2, 0.0]]))
    assert torch.allclose(poincare.logmap0(torch.tensor([[0.5, 0.0]]), 1.0), torch.tensor([[math.atanh(0.5), 0.0]]))  # fmt: skip


@pytest.mark.parametrize("c", [1.0, 0.5, 3.0])
def test_maps_match_geoopt(c):
    ball = geoopt.PoincareBall(c=c)
    x = X / math.sqrt(c) * 0.9
    y = x.flip(0)
    w = torch.tensor([[0.5, -1.0, 0.2], [0.3, 0.8, -0.6]])
    # inside geoopt's own projection radius (1 - 4e-3) / sqrt(c), where both agree exactly
    v = torch.tensor([[0.3, -1.2, 0.4], [1.0, 0.5, -0.1], [0.1, 0.0, 0.0], [-0.7, 0.2, 0.9]])
    assert torch.allclose(poincare.expmap0(v, c, 1e-5), ball.expmap0(v), atol=1e-5)
    assert torch.allclose(poincare.logmap0(x, c), ball.logmap0(x), atol=1e-5)
    assert torch.allclose(poincare.mobius_add(x, y, c, 1e-5), ball.mobius_add(x, y), atol=1e-5)
    assert torch.allclose(poincare.mobius_matvec(w, x, c, 1e-5), ball.mobius_matvec(w, x), atol=1e-5)  # fmt: skip
    assert torch.allclose(poincare.sq_dist(x, y, c), ball.dist(x, y) ** 2, atol=1e-4)


def test_mobius_add_with_origin_and_inverse():
    zero = torch.zeros_like(X)
    assert torch.allclose(poincare.mobius_add(zero, X, 1.0, 1e-5), X, atol=1e-6)
    assert torch.allclose(poincare.mobius_add(X, zero, 1.0, 1e-5), X, atol=1e-6)
    assert torch.allclose(poincare.mobius_add(-X, X, 1.0, 1e-5), zero, atol=1e-6)


def test_distance_symmetric_zero_on_diagonal_and_by_hand():
    y = X.flip(0)
    assert torch.allclose(poincare.sq_dist(X, y, 1.0), poincare.sq_dist(y, X, 1.0), atol=1e-5)
    assert torch.allclose(poincare.sq_dist(X, X, 1.0), torch.zeros(4), atol=1e-6)
    # from the origin to (0.5, 0): d = 2 artanh(0.5)
    d2 = poincare.sq_dist(torch.zeros(1, 2), torch.tensor([[0.5, 0.0]]), 1.0)
    assert torch.allclose(d2, torch.tensor([(2 * math.atanh(0.5)) ** 2]))
    # c = 4: d = 2 / 2 artanh(2 * 0.25)
    d2 = poincare.sq_dist(torch.zeros(1, 2), torch.tensor([[0.25, 0.0]]), 4.0)
    assert torch.allclose(d2, torch.tensor([math.atanh(0.5) ** 2]))


def test_project_clamps_only_points_outside():
    x = torch.tensor([[3.0, 4.0], [0.3, 0.4]])
    out = poincare.project(x, 1.0, 0.01)
    assert torch.allclose(out[0], torch.tensor([0.6, 0.8]) * 0.99)
    assert torch.equal(out[1], x[1])
    out = poincare.project(x, 4.0, 0.0)  # radius 1/2
    assert torch.allclose(out.norm(dim=-1), torch.tensor([0.5, 0.5]))
    assert poincare.expmap0(torch.tensor([[100.0, 0.0]]), 1.0, 1e-3).norm() <= 1 - 1e-3 + 1e-7


def test_make_ball_carries_curvature():
    ball = poincare.make_ball(2.0, learnable=True)
    assert float(ball.c.detach()) == pytest.approx(2.0)
    assert any(p.requires_grad for p in ball.parameters())
    assert not any(p.requires_grad for p in poincare.make_ball(1.0).parameters())
