"""The empirical NTK and the linearised model on hand-checkable cases (spec check 7)."""

import pytest
import torch

from paper_pipelines.pipelines.fedavg_overparam.network import NTKMLP, build_network
from paper_pipelines.pipelines.fedavg_overparam.ntk import (
    flat_parameters,
    jacobian_ntk,
    layerwise_ntk,
    linearised_outputs,
    parameter_dict,
    relative_kernel_change,
)


def _net(parameterisation="ntk", out_dim=1, width=8, depth=2):
    torch.set_default_dtype(torch.float64)
    try:
        gen = torch.Generator().manual_seed(3)
        return NTKMLP(4, width, out_dim, depth, 1.5, 0.1, parameterisation, gen)
    finally:
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("parameterisation", ["ntk", "standard"])
@pytest.mark.parametrize("out_dim", [1, 3])
def test_layerwise_ntk_equals_explicit_jacobian_product(parameterisation, out_dim):
    net = _net(parameterisation, out_dim)
    x = torch.randn(5, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    theta = flat_parameters(net) + 0.1  # away from the initialisation too
    fast = layerwise_ntk(net, theta, x)
    reference = jacobian_ntk(net, theta, x)
    assert fast.shape == (5, 5)
    torch.testing.assert_close(fast, reference, rtol=1e-5, atol=1e-10)
    assert torch.allclose(fast, fast.T)
    assert torch.linalg.eigvalsh(fast).min() > -1e-10  # a Gram matrix


def test_layerwise_cross_kernel_is_a_block_of_the_full_kernel():
    net = _net()
    x = torch.randn(6, 4, generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    theta = flat_parameters(net)
    full = layerwise_ntk(net, theta, x)
    torch.testing.assert_close(layerwise_ntk(net, theta, x[:2], x[2:]), full[:2, 2:])


def test_ntk_of_a_linear_read_out_is_the_scaled_input_gram_plus_bias():
    """depth 0: f(x) = sqrt(s2 / d) w.x + b * sb, so Theta = s2/d x x'^T + sb^2 by hand."""
    torch.set_default_dtype(torch.float64)
    try:
        net = NTKMLP(2, 1, 1, 0, 2.0, 0.5, "ntk", torch.Generator().manual_seed(0))
    finally:
        torch.set_default_dtype(torch.float32)
    x = torch.tensor([[1.0, 0.0], [1.0, 2.0]], dtype=torch.float64)
    kernel = layerwise_ntk(net, flat_parameters(net), x)
    expected = torch.tensor([[1.0, 1.0], [1.0, 5.0]], dtype=torch.float64) + 0.25
    torch.testing.assert_close(kernel, expected)


def test_relative_kernel_change_by_hand():
    k0 = torch.eye(2)
    assert relative_kernel_change(2 * k0, k0) == pytest.approx(1.0)
    assert relative_kernel_change(k0, k0) == 0.0
    k1 = torch.tensor([[1.0, 0.0], [0.0, 4.0]])  # ||diag(0, 3)||_F / ||I||_F = 3 / sqrt(2)
    assert relative_kernel_change(k1, k0) == pytest.approx(3 / 2**0.5)


def test_linearisation_equals_finite_difference_directional_derivative():
    net = _net(width=16)
    x = torch.randn(7, 4, generator=torch.Generator().manual_seed(5), dtype=torch.float64)
    theta_0 = flat_parameters(net)
    direction = torch.randn(
        theta_0.shape, generator=torch.Generator().manual_seed(6), dtype=torch.float64
    )
    eps = 1e-6
    f = lambda t: torch.func.functional_call(net, parameter_dict(net, t), (x,))  # noqa: E731
    finite = (f(theta_0 + eps * direction) - f(theta_0 - eps * direction)) / (2 * eps)
    lin = linearised_outputs(net, theta_0, theta_0 + direction, x)
    torch.testing.assert_close(lin - f(theta_0), finite, rtol=1e-6, atol=1e-8)
    # at theta_0 itself the linearisation is the network
    torch.testing.assert_close(linearised_outputs(net, theta_0, theta_0, x), f(theta_0))


def test_ntk_and_standard_parameterisation_give_the_same_function_at_initialisation():
    x = torch.randn(3, 1, 4, 4, generator=torch.Generator().manual_seed(0))
    a = build_network("mlp", (1, 4, 4), 32, 2, 2, 1.5, 0.1, "ntk", seed=4)
    b = build_network("mlp", (1, 4, 4), 32, 2, 2, 1.5, 0.1, "standard", seed=4)
    torch.testing.assert_close(a(x), b(x), rtol=1e-5, atol=1e-6)
    # NTK parameterisation: the raw weights are standard normal whatever the width
    assert abs(float(a.layers[1].weight.detach().std()) - 1.0) < 0.1
    assert float(b.layers[1].weight.detach().std()) == pytest.approx((1.5 / 32) ** 0.5, rel=0.1)


@pytest.mark.parametrize("family", ["lenet", "resnet"])
@pytest.mark.parametrize("shape", [(1, 8, 8), (3, 32, 32)])
def test_convolutional_families_run_and_grow_with_the_multiplier(family, shape):
    x = torch.zeros(2, *shape)
    small = build_network(family, shape, 1, 10, 2, 1.5, 0.1, "standard", seed=0)
    large = build_network(family, shape, 2, 10, 2, 1.5, 0.1, "standard", seed=0)
    assert small(x).shape == (2, 10)
    assert sum(p.numel() for p in large.parameters()) > 2 * sum(
        p.numel() for p in small.parameters()
    )


def test_unknown_family_is_an_error():
    with pytest.raises(ValueError, match="unknown model family 'vit'"):
        build_network("vit", (1, 8, 8), 1, 10, 2, 1.5, 0.1, "ntk", seed=0)


def test_empirical_ntk_dispatches_to_the_layerwise_formula_or_the_jacobian():
    from paper_pipelines.pipelines.fedavg_overparam.ntk import empirical_ntk

    net = _net()
    x = torch.randn(4, 4, generator=torch.Generator().manual_seed(8), dtype=torch.float64)
    theta = flat_parameters(net)
    torch.testing.assert_close(empirical_ntk(net, theta, x), layerwise_ntk(net, theta, x))
    lenet = build_network("lenet", (1, 8, 8), 1, 1, 2, 1.5, 0.1, "standard", seed=0)
    images = torch.rand(3, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    theta = flat_parameters(lenet)
    torch.testing.assert_close(
        empirical_ntk(lenet, theta, images), jacobian_ntk(lenet, theta, images)
    )


def test_ntk_linear_layer_by_hand():
    from paper_pipelines.pipelines.fedavg_overparam.network import NTKLinear

    layer = NTKLinear(2, 1, 2.0, 0.5, "ntk", torch.Generator().manual_seed(0))
    with torch.no_grad():
        layer.weight.fill_(1.0)
        layer.bias.fill_(1.0)
    # sqrt(2 / 2) * (1 + 3) + 0.5 * 1
    assert float(layer(torch.tensor([[1.0, 3.0]])).detach()) == pytest.approx(4.5)


def test_mlp_defaults_and_seeded_initialisation():
    a, b = NTKMLP(4, 8, 1), NTKMLP(4, 8, 1)
    assert len(a.layers) == 3 and a.layers[0].sigma_w2 == 1.5 and a.layers[0].sigma_b == 0.1
    assert a.layers[0].ntk and a.layers[1].fan_in == 8
    assert torch.equal(flat_parameters(a), flat_parameters(b))
    seeded = NTKMLP(4, 8, 1, generator=torch.Generator().manual_seed(0))
    assert torch.equal(flat_parameters(a), flat_parameters(seeded))
    same = [build_network("mlp", (1, 2, 2), 8, 1, 2, 1.5, 0.1, "ntk", seed=s) for s in (4, 4, 5)]
    assert torch.equal(flat_parameters(same[0]), flat_parameters(same[1]))
    assert not torch.equal(flat_parameters(same[0]), flat_parameters(same[2]))


def test_resnet_layout_stages_and_skips():
    from paper_pipelines.pipelines.fedavg_overparam.network import BasicBlock

    net = build_network("resnet", (3, 32, 32), 1, 10, 2, 1.5, 0.1, "standard", seed=0)
    blocks = [m for m in net.body if isinstance(m, BasicBlock)]
    assert [b.conv1.out_channels for b in blocks] == [16, 32, 64]
    assert [b.conv1.stride for b in blocks] == [(1, 1), (2, 2), (2, 2)]
    assert [b.skip is None for b in blocks] == [True, False, False]
    assert all(b.skip is None or b.skip.kernel_size == (1, 1) for b in blocks)
    stem = net.body[0]
    assert stem.kernel_size == (3, 3) and stem.padding == (1, 1) and net.head.in_features == 64
    features = torch.nn.Sequential(*list(net.body)[:-2])(torch.zeros(1, 3, 32, 32))
    assert features.shape == (1, 64, 8, 8)
    deeper = build_network("resnet", (3, 32, 32), 1, 10, 4, 1.5, 0.1, "standard", seed=0)
    assert sum(isinstance(m, BasicBlock) for m in deeper.body) == 6
    block = BasicBlock(4, 4, 1)  # the residual branch starts at zero: the block is relu(x)
    x = torch.rand(1, 4, 5, 5)
    torch.testing.assert_close(block(x), x)
    lenet = build_network("lenet", (1, 28, 28), 1, 10, 2, 1.5, 0.1, "standard", seed=0)
    assert lenet.features[0].padding == (2, 2) and lenet.features[0].kernel_size == (5, 5)
