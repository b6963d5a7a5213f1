"""The two branches of Dynamic Geometric Modeling, the interaction and the initialisations, recomputed by
hand on a 3-node path (the weights set so each layer is a plain weighted neighbour sum)."""

import math

import torch

from paper_pipelines.pipelines.cross_geometric import modeling, poincare, temporal

EDGE_INDEX = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
WEIGHT = torch.full((4,), 0.5)
# A[dst, src] = 0.5 on the path 0-1-2: GCNConv(normalize=False) sums w * x_src, no self-loops
A = 0.5 * torch.tensor([[0.0, 1, 0], [1, 0, 1], [0, 1, 0]])
X = torch.tensor([[0.1, -0.2], [0.05, 0.1], [-0.15, 0.05]])


def _set_identity_then_minus(model):
    """Layer 1 weight I, layer 2 weight -I, zero biases: z = -A relu(A x) in either branch."""
    with torch.no_grad():
        for layers in (model.euclid, model.hyper):
            if layers is None:
                continue
            for i, layer in enumerate(layers):
                w = layer.lin.weight if hasattr(layer, "lin") else layer.weight
                w.copy_(torch.eye(2) * (1 if i == 0 else -1))
                if getattr(layer, "bias", None) is not None:
                    layer.bias.zero_()


def test_euclidean_branch_is_two_gcn_layers_with_relu_between():
    ball = poincare.make_ball(1.0)
    model = modeling.DynamicGeometricModeling(2, "euclid", ball, 1e-5)
    _set_identity_then_minus(model)
    u, alpha = model(X, EDGE_INDEX, WEIGHT, torch.zeros(3), 1.0)
    # no ReLU after the last layer: the -A relu(A x) output keeps its negative entries
    assert torch.allclose(u, -A @ torch.relu(A @ X), atol=1e-7)
    assert (u < 0).any() and torch.equal(alpha, torch.zeros(3))


def test_hyperbolic_branch_is_the_same_sum_in_the_tangent_space():
    ball = poincare.make_ball(1.0)
    model = modeling.DynamicGeometricModeling(2, "hyperbolic", ball, 1e-5)
    _set_identity_then_minus(model)
    u, alpha = model(X, EDGE_INDEX, WEIGHT, torch.zeros(3), 1.0)
    # W (x) x = exp_0(W log_0 x), aggregation in the tangent space: log_0 of the output is -A relu(A x)
    assert torch.allclose(u, -A @ torch.relu(A @ X), atol=1e-6)
    assert torch.equal(alpha, torch.ones(3))


def test_hybrid_const_mixes_the_two_branches_by_the_constant():
    ball = poincare.make_ball(1.0)
    torch.manual_seed(0)
    model = modeling.DynamicGeometricModeling(2, "hybrid_const", ball, 1e-5, const_gate=0.25)
    with torch.no_grad():
        model.hyper[1].weight.mul_(-1.0)  # make the branches differ
    u, alpha = model(X, EDGE_INDEX, WEIGHT, torch.zeros(3), 1.0)
    z_e = model.euclid[1](torch.relu(model.euclid[0](X, EDGE_INDEX, WEIGHT)), EDGE_INDEX, WEIGHT)
    z_h = poincare.expmap0(X, 1.0, 1e-5)
    for layer in model.hyper:
        z_h = layer(z_h, EDGE_INDEX, WEIGHT, 1.0)
    t_h = poincare.logmap0(z_h, 1.0)
    assert not torch.allclose(z_e, t_h)
    assert torch.allclose(u, 0.25 * t_h + 0.75 * z_e, atol=1e-6)
    assert torch.equal(alpha, torch.full((3,), 0.25))


def test_interaction_feeds_each_branch_the_other_before_every_layer():
    """GIL-style: e_in = z_e + lambda log_0(z_h), h_in = z_h (+) exp_0(lambda z_e), before each layer."""
    ball = poincare.make_ball(1.0)
    torch.manual_seed(0)
    model = modeling.DynamicGeometricModeling(
        2, "hybrid_const", ball, 1e-5, const_gate=0.5, interaction=True, interaction_weight=0.3
    )
    u, _ = model(X, EDGE_INDEX, WEIGHT, torch.zeros(3), 1.0)
    z_e, z_h = X, poincare.expmap0(X, 1.0, 1e-5)
    for i in range(2):
        e_in = z_e + 0.3 * poincare.logmap0(z_h, 1.0)
        h_in = poincare.mobius_add(z_h, poincare.expmap0(0.3 * z_e, 1.0, 1e-5), 1.0, 1e-5)
        z_e = model.euclid[i](e_in, EDGE_INDEX, WEIGHT)
        z_e = torch.relu(z_e) if i == 0 else z_e
        z_h = model.hyper[i](h_in, EDGE_INDEX, WEIGHT, 1.0)
    expect = 0.5 * poincare.logmap0(z_h, 1.0) + 0.5 * z_e
    assert torch.allclose(u, expect, atol=1e-6)
    # the interaction is off in the single-geometry modes, whatever the flag says
    assert not modeling.DynamicGeometricModeling(
        2, "euclid", ball, 1e-5, interaction=True
    ).interaction
    assert not modeling.DynamicGeometricModeling(
        2, "hyperbolic", ball, 1e-5, interaction=True
    ).interaction
    assert modeling.DynamicGeometricModeling(
        2, "hybrid_gate", ball, 1e-5, interaction=True
    ).interaction


def test_hgcn_weight_is_xavier_uniform_with_gain_sqrt2_and_bias_on_the_ball():
    torch.manual_seed(0)
    ball = poincare.make_ball(1.0)
    layer = modeling.HyperbolicGraphConv(200, 300, ball, 1e-5, act=True)
    # xavier bound = gain sqrt(6 / (fan_in + fan_out)) = sqrt(2) sqrt(6 / 500)
    bound = math.sqrt(2) * math.sqrt(6 / 500)
    w = layer.weight.detach()
    assert w.shape == (300, 200) and w.abs().max() <= bound and w.abs().max() > 0.99 * bound
    assert torch.equal(layer.bias.detach(), torch.zeros(300)) and layer.bias.manifold is ball


def test_aggregator_attention_parameters_start_at_unit_scale():
    torch.manual_seed(0)
    agg = temporal.TemporalStateAggregator(400, window=3)
    # r = randn(d) / sqrt(d): |r|^2 averages 1 (a sum of d terms of variance 1/d)
    assert 0.85 < float(agg.r.detach().norm() ** 2) < 1.15
    bound = math.sqrt(6 / 800)  # xavier_uniform_ of the d x d query matrix, gain 1
    q = agg.q.detach().abs().max()
    assert q <= bound and q > 0.99 * bound
    assert agg.window == 3 and agg.use_attention
