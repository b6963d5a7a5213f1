"""Environment-conditioned edge masks, the masked GIN and the bottleneck on hand-checkable cases."""

import math

import pytest
import torch

from paper_pipelines.pipelines.nego import extractor as ext
from paper_pipelines.pipelines.nego.framework import gin


def test_bernoulli_kl_hand_values():
    assert ext.bernoulli_kl(torch.full((3,), 0.5), 0.5).item() == pytest.approx(0.0, abs=1e-7)
    expected = 0.9 * math.log(0.9 / 0.5) + 0.1 * math.log(0.1 / 0.5)
    assert ext.bernoulli_kl(torch.tensor([0.9]), 0.5).item() == pytest.approx(expected, rel=1e-5)
    r = 0.25
    vals = torch.tensor([0.25, 0.75])
    expected = (0.75 * math.log(0.75 / 0.25) + 0.25 * math.log(0.25 / 0.75)) / 2
    assert ext.bernoulli_kl(vals, r).item() == pytest.approx(expected, rel=1e-5)
    # a hard 0/1 mask stays finite (clamped)
    assert math.isfinite(ext.bernoulli_kl(torch.tensor([0.0, 1.0]), 0.5).item())
    assert ext.bernoulli_kl(torch.tensor([1.0]), 0.5).item() == pytest.approx(math.log(2), rel=1e-4)


def test_concrete_sample_limits():
    g = torch.Generator().manual_seed(0)
    logits = torch.tensor([-20.0, 0.0, 20.0]).repeat(2000, 1)
    s = ext.concrete_sample(logits, 1.0, g)
    assert s.min() >= 0 and s.max() <= 1
    assert s[:, 0].mean() < 0.01 and s[:, 2].mean() > 0.99
    assert abs(s[:, 1].mean().item() - 0.5) < 0.03  # logistic noise is symmetric
    cold = ext.concrete_sample(torch.zeros(4000), 0.05, torch.Generator().manual_seed(1))
    assert ((cold < 0.05) | (cold > 0.95)).float().mean() > 0.9  # low temperature: nearly binary
    u = torch.rand(5, generator=torch.Generator().manual_seed(3)).clamp(ext.EPS, 1 - ext.EPS)
    logit = torch.tensor([0.3, -1.0, 2.0, 0.0, 1.5])
    expected = torch.sigmoid((logit + torch.log(u) - torch.log1p(-u)) / 2.0)
    assert torch.allclose(
        ext.concrete_sample(logit, 2.0, torch.Generator().manual_seed(3)), expected
    )


def test_symmetrise_averages_both_directions():
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    mask = torch.tensor([0.2, 0.6, 1.0, 0.0])
    assert torch.allclose(ext.symmetrise(edge_index, mask), torch.tensor([0.4, 0.4, 0.5, 0.5]))


def test_edge_scorer_conditions_on_the_environment():
    torch.manual_seed(0)
    h = torch.randn(3, 4)
    edge_index = torch.tensor([[0, 1], [1, 2]])
    e1, e2 = torch.zeros(3, 4), torch.ones(3, 4)
    for condition in ("concat", "film"):
        scorer = ext.EdgeScorer(4, condition)
        out = scorer(h, edge_index, e1)
        assert out.shape == (2,)
        assert not torch.allclose(out, scorer(h, edge_index, e2))
    plain = ext.EdgeScorer(4, "none")
    assert torch.allclose(plain(h, edge_index, e1), plain(h, edge_index, e2))
    assert plain.mlp[0].in_features == 8 and ext.EdgeScorer(4, "concat").mlp[0].in_features == 12
    assert ext.EdgeScorer(4, "film").film.out_features == 8
    with pytest.raises(ValueError, match="condition must be"):
        ext.EdgeScorer(4, "add")


def test_edge_scorer_film_is_affine_in_h():
    scorer = ext.EdgeScorer(2, "film")
    with torch.no_grad():
        scorer.film.weight.zero_()
        scorer.film.bias.copy_(torch.tensor([1.0, 1.0, 0.5, 0.5]))  # gamma = 1, beta = 0.5
    h = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
    env = torch.zeros(2, 2)
    edge_index = torch.tensor([[0], [1]])
    expected = scorer.mlp(torch.tensor([[2.5, 4.5, 6.5, 8.5]])).squeeze(-1)
    assert torch.allclose(scorer(h, edge_index, env), expected)


def test_edge_scorer_concat_uses_the_source_environment():
    scorer = ext.EdgeScorer(1, "concat")
    h = torch.tensor([[1.0], [2.0]])
    env = torch.tensor([[5.0], [7.0]])
    edge_index = torch.tensor([[1], [0]])
    expected = scorer.mlp(torch.tensor([[2.0, 1.0, 7.0]])).squeeze(-1)
    assert torch.allclose(scorer(h, edge_index, env), expected)


def test_masked_forward_multiplies_the_messages():
    torch.manual_seed(0)
    net = gin(1, 4, 2, 0.0)
    x = torch.tensor([[1.0], [2.0], [3.0]])
    edge_index = torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]])
    full = ext.masked_forward(net, x, edge_index, torch.ones(4))
    assert torch.allclose(full, net(x, edge_index))
    cut = ext.masked_forward(net, x, edge_index, torch.zeros(4))
    assert torch.allclose(cut, net(x, torch.zeros(2, 0, dtype=torch.long)))
    half = ext.masked_forward(net, x, edge_index, torch.tensor([1.0, 1.0, 0.0, 0.0]))
    assert torch.allclose(half, net(x, edge_index[:, :2]))
    # the masks are cleared afterwards
    assert torch.allclose(net(x, edge_index), full)
    assert all(getattr(m, "_edge_mask", None) is None for m in net.modules())


def test_masked_forward_passes_the_gradient_to_the_mask():
    torch.manual_seed(0)
    net = gin(1, 4, 2, 0.0)
    mask = torch.full((2,), 0.5, requires_grad=True)
    ext.masked_forward(net, torch.ones(2, 1), torch.tensor([[0, 1], [1, 0]]), mask).sum().backward()
    assert mask.grad is not None and mask.grad.abs().sum() > 0


def test_reverse_edges_on_an_unsorted_edge_list():
    edge_index = torch.tensor([[2, 0, 1, 1, 3, 0], [1, 1, 0, 2, 0, 3]])
    rev = ext.reverse_edges(edge_index)
    assert torch.equal(edge_index[:, rev], edge_index.flip(0))
    mask = torch.tensor([0.0, 0.2, 0.6, 1.0, 0.3, 0.5])
    assert torch.allclose(
        ext.symmetrise(edge_index, mask), torch.tensor([0.5, 0.4, 0.4, 0.5, 0.4, 0.4])
    )
