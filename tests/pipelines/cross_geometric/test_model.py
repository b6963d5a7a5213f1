"""Dynamic Geometric Modeling, the Temporal State Aggregator, the decoder and the objective on small,
hand-checkable tensors."""

import math

import pytest
import torch

from paper_pipelines.pipelines.cross_geometric import (
    decoder,
    modeling,
    objective,
    poincare,
    temporal,
)

EDGE_INDEX = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
WEIGHT = torch.full((4,), 0.5)


def test_fuse_by_hand():
    alpha = torch.tensor([0.0, 1.0, 0.25])
    t_h, z_e = torch.ones(3, 2), torch.zeros(3, 2)
    assert torch.allclose(modeling.fuse(alpha, t_h, z_e), torch.tensor([[0.0, 0], [1, 1], [0.25, 0.25]]))  # fmt: skip


def test_tree_feature_is_asinh_with_absent_as_zero():
    out = modeling.tree_feature(torch.tensor([0.0, float("nan"), 0.5, -10.0]))
    assert out.shape == (4, 1)
    assert torch.allclose(out[:, 0], torch.tensor([0.0, 0.0, math.asinh(0.5), math.asinh(-10.0)]))


def test_gate_reads_the_tree_score_only_when_asked():
    torch.manual_seed(0)
    gate = modeling.GeometryGate(2, 3, use_tree_score=True)
    z = torch.randn(4, 2)
    a = gate(z, z, torch.zeros(4))
    b = gate(z, z, torch.full((4,), 0.4))
    assert ((a > 0) & (a < 1)).all() and not torch.allclose(a, b)
    plain = modeling.GeometryGate(2, 3, use_tree_score=False)
    assert plain.score.in_features == 4
    assert torch.equal(plain(z, z, torch.zeros(4)), plain(z, z, torch.ones(4)))
    # sigmoid of a hand-set linear score
    with torch.no_grad():
        plain.score.weight.fill_(0.0)
        plain.score.bias.fill_(math.log(3.0))
    assert torch.allclose(plain(z, z, torch.zeros(4)), torch.full((4,), 0.75))


@pytest.mark.parametrize(
    ("mode", "alpha"), [("euclid", 0.0), ("hyperbolic", 1.0), ("hybrid_const", 0.3)]
)
def test_modes_fix_the_gate(mode, alpha):
    torch.manual_seed(0)
    ball = poincare.make_ball(1.0)
    model = modeling.DynamicGeometricModeling(4, mode, ball, 1e-5, const_gate=0.3)
    x = 0.1 * torch.randn(3, 4)
    u, a = model(x, EDGE_INDEX, WEIGHT, torch.zeros(3), 1.0)
    assert u.shape == (3, 4) and torch.allclose(a, torch.full((3,), alpha))
    assert (model.euclid is None) == (mode == "hyperbolic")
    assert (model.hyper is None) == (mode == "euclid")


def test_hybrid_gate_fuses_both_branches_and_interaction_changes_it():
    ball = poincare.make_ball(1.0)
    x = 0.1 * torch.randn(3, 4, generator=torch.Generator().manual_seed(0))
    tree = torch.tensor([0.0, 0.1, 0.2])

    def run(**kwargs):
        torch.manual_seed(1)  # the same initial weights for every variant
        model = modeling.DynamicGeometricModeling(4, "hybrid_gate", ball, 1e-5, **kwargs)
        return model, *model(x, EDGE_INDEX, WEIGHT, tree, 1.0)

    _, u, a = run()
    assert ((a > 0) & (a < 1)).all()
    mixed, u2, _ = run(interaction=True)
    assert mixed.interaction and not torch.allclose(u, u2)
    # lambda = 0: the interaction adds nothing
    _, u3, _ = run(interaction=True, interaction_weight=0.0)
    assert torch.allclose(u, u3, atol=1e-6)


def test_hyperbolic_layer_is_tangent_aggregation_of_the_mobius_product():
    ball = poincare.make_ball(1.0)
    layer = modeling.HyperbolicGraphConv(2, 2, ball, 1e-5, act=False)
    with torch.no_grad():
        layer.weight.copy_(torch.eye(2))
    x = torch.tensor([[0.1, 0.0], [0.0, 0.2], [0.3, 0.1]])
    out = layer(x, EDGE_INDEX, WEIGHT, 1.0)
    # identity weight, zero bias: exp_0 of the 0.5-weighted neighbour sum of log_0(x)
    t = poincare.logmap0(x, 1.0)
    expect = poincare.expmap0(torch.stack([0.5 * t[1], 0.5 * (t[0] + t[2]), 0.5 * t[1]]), 1.0, 1e-5)
    assert torch.allclose(out, expect, atol=1e-6)
    act = modeling.HyperbolicGraphConv(2, 2, ball, 1e-5, act=True)
    with torch.no_grad():
        act.weight.copy_(-torch.eye(2))
    assert (
        poincare.logmap0(act(x, EDGE_INDEX, WEIGHT, 1.0), 1.0) >= 0
    ).all()  # ReLU in tangent space


def test_attention_weights_and_window_summary():
    history = torch.stack([torch.zeros(2, 3), torch.ones(2, 3)])
    # r = 0: uniform weights, the plain mean of the window
    w = temporal.attention_weights(history, torch.eye(3), torch.zeros(3))
    assert torch.allclose(w, torch.full((2, 2), 0.5))
    assert torch.allclose(temporal.window_summary(history, torch.eye(3), torch.zeros(3)), torch.full((2, 3), 0.5))  # fmt: skip
    # r = 1: scores 0 and 3 tanh(1) -> softmax
    w = temporal.attention_weights(history, torch.eye(3), torch.ones(3))
    s = 3 * math.tanh(1.0)
    assert torch.allclose(w[1], torch.full((2,), math.exp(s) / (1 + math.exp(s))))


def test_aggregator_window_and_attention_switch():
    torch.manual_seed(0)
    agg = temporal.TemporalStateAggregator(3, window=2, use_attention=False)
    u = torch.randn(2, 3)
    old, last = torch.randn(2, 3), torch.randn(2, 3)
    assert torch.allclose(agg(u, []), agg.gru(u, torch.zeros(2, 3)))
    assert torch.allclose(agg(u, [old, last]), agg.gru(u, last))
    agg.use_attention = True
    with torch.no_grad():
        agg.r.zero_()
    # window 2 of three states: the mean of the last two
    assert torch.allclose(agg(u, [old * 9, old, last]), agg.gru(u, (old + last) / 2), atol=1e-6)


def test_fermi_dirac_by_hand():
    d = torch.tensor([2.0, 0.0, 4.0])
    logit = decoder.fermi_dirac_logit(d, 2.0, 1.0)
    assert torch.allclose(logit, torch.tensor([0.0, 2.0, -2.0]))
    assert torch.allclose(torch.sigmoid(logit), 1 / (torch.exp((d - 2.0) / 1.0) + 1))
    assert torch.allclose(decoder.fermi_dirac_logit(d, 2.0, 0.5), torch.tensor([0.0, 4.0, -4.0]))


def test_mixed_distance_interpolates_the_two_geometries():
    su, sv = torch.tensor([[0.3, 0.0]]), torch.tensor([[0.0, 0.4]])
    d_e = torch.tensor([0.25])
    d_h = poincare.sq_dist(poincare.expmap0(su, 1.0, 1e-5), poincare.expmap0(sv, 1.0, 1e-5), 1.0)
    assert torch.allclose(decoder.mixed_sq_distance(su, sv, torch.tensor([0.0]), 1.0, 1e-5), d_e)
    assert torch.allclose(decoder.mixed_sq_distance(su, sv, torch.tensor([1.0]), 1.0, 1e-5), d_h)
    half = decoder.mixed_sq_distance(su, sv, torch.tensor([0.5]), 1.0, 1e-5)
    assert torch.allclose(half, (d_e + d_h) / 2)


def test_edge_logits_use_the_mean_gate_of_both_ends():
    states = torch.tensor([[0.0, 0.0], [0.5, 0.0], [0.0, 0.5]])
    alpha = torch.tensor([0.0, 1.0, 0.0])
    pairs = torch.tensor([[0, 1], [0, 2]])
    out = decoder.edge_logits(states, alpha, pairs, 1.0, 1e-5, 2.0, 1.0)
    d01 = decoder.mixed_sq_distance(states[[0]], states[[1]], torch.tensor([0.5]), 1.0, 1e-5)
    assert torch.allclose(out, torch.cat([2.0 - d01, torch.tensor([2.0 - 0.25])]))
    y = poincare.expmap0(states, 1.0, 1e-5)
    assert torch.allclose(decoder.edge_logits(states, alpha, pairs, 1.0, 1e-5, 2.0, 1.0, y), out)
    assert torch.allclose(decoder.edge_logits(states, torch.zeros(3), pairs, 1.0, 1e-5, 2.0, 1.0), torch.tensor([1.75, 1.75]))  # fmt: skip


def test_link_bce_and_evolution_loss_by_hand():
    zero = torch.zeros(2)
    assert torch.allclose(objective.link_bce(zero, zero), torch.tensor(math.log(2)))
    # confident and right on both sides: near 0; a positive at logit 0 and a negative at -inf: ln2 / 2
    assert objective.link_bce(torch.tensor([20.0]), torch.tensor([-20.0])) < 1e-6
    assert torch.allclose(objective.link_bce(torch.tensor([0.0]), torch.tensor([-50.0])), torch.tensor(math.log(2) / 2))  # fmt: skip
    assert torch.allclose(objective.nodal_smoothness(torch.tensor([1.0, 3.0])), torch.tensor(2.0))
    total = objective.evolution_loss(
        torch.tensor(1.0), torch.tensor(2.0), torch.tensor(4.0), 0.5, 0.25
    )
    assert total.item() == 3.0
