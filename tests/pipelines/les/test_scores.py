"""LES on hand-checkable decoders: spec check 1 (closed form, per-position reference to 1e-6)."""

import math

import numpy as np
import pytest
import torch
from torch import nn

from paper_pipelines.pipelines.les import scores


class Linear(nn.Module):
    """u(z) = W z + b reshaped to (batch, L, V)."""

    def __init__(self, weight, bias=None, length=1):
        super().__init__()
        self.weight = torch.as_tensor(weight, dtype=torch.float64)
        self.bias = (
            torch.zeros(self.weight.shape[0], dtype=torch.float64)
            if bias is None
            else torch.as_tensor(bias)
        )
        self.length, self.latent_dim = length, self.weight.shape[1]

    def forward(self, z):
        return (z @ self.weight.T + self.bias).reshape(z.shape[0], self.length, -1)


class Small(nn.Module):
    """A small nonlinear decoder: d = 3, L = 4, V = 5."""

    def __init__(self, dropout=0.0):
        super().__init__()
        torch.manual_seed(0)
        self.latent_dim = 3
        self.net = nn.Sequential(
            nn.Linear(3, 16), nn.Tanh(), nn.Dropout(dropout), nn.Linear(16, 20)
        ).double()

    def forward(self, z):
        return self.net(z).reshape(z.shape[0], 4, 5)


def test_softmax_blocks_by_hand():
    blocks = scores.softmax_blocks(torch.zeros(1, 1, 2, dtype=torch.float64))
    # s = (1/2, 1/2), sum exp = 2: rows diag(s) - s s^T, then -s / 2
    expected = [[0.25, -0.25], [-0.25, 0.25], [-0.25, -0.25]]
    assert torch.allclose(blocks[0, 0], torch.tensor(expected, dtype=torch.float64))
    u = torch.tensor([[[0.0, math.log(3.0)]]], dtype=torch.float64)
    blocks = scores.softmax_blocks(u)  # s = (1/4, 3/4), sum exp = 4
    expected = [[3 / 16, -3 / 16], [-3 / 16, 3 / 16], [-1 / 16, -3 / 16]]
    assert torch.allclose(blocks[0, 0], torch.tensor(expected, dtype=torch.float64))
    assert blocks.shape == (1, 1, 3, 2)


@pytest.mark.parametrize(
    ("w", "expected"),
    [
        # softmax moves, normaliser row (-1/4, -1/4) . w = 0: G = 2 * (1/2)^2 = 1/2
        ([[1.0], [-1.0]], 0.5 * math.log(2.0)),
        # softmax blind to u + c, only the normaliser moves: G = (1/2)^2
        ([[1.0], [1.0]], math.log(2.0)),
        # twice the slope: G * 4
        ([[2.0], [-2.0]], 0.5 * math.log(2.0) - math.log(2.0)),
    ],
)
def test_les_of_a_linear_decoder_has_the_closed_form(w, expected):
    decoder = Linear(w)
    z = torch.zeros(1, 1, dtype=torch.float64)
    result = scores.les(decoder, z)
    assert result.values.item() == pytest.approx(expected, abs=1e-6)
    assert not result.singular.any()


def test_les_of_a_linear_decoder_over_positions_sums_the_blocks():
    # L = 2, V = 2, d = 1: position 1 slope (1, -1), position 2 slope (1, 1): G = 1/2 + 1/4
    decoder = Linear([[1.0], [-1.0], [1.0], [1.0]], length=2)
    value = scores.les(decoder, torch.zeros(1, 1, dtype=torch.float64)).values.item()
    assert value == pytest.approx(-0.5 * math.log(0.75), abs=1e-6)


def test_forward_differences_give_the_slope_of_a_linear_decoder():
    w = torch.tensor([[1.0, 2.0], [3.0, -1.0], [0.5, 0.0], [-2.0, 1.0]], dtype=torch.float64)
    decoder = Linear(w, length=2)
    z = torch.tensor([[0.3, -0.7], [1.0, 2.0]], dtype=torch.float64)
    slope = scores.local_slope(decoder, z, fd_eps=1e-4)
    assert slope.shape == (2, 2, 2, 2)
    assert torch.allclose(slope[1].reshape(4, 2), w, atol=1e-8)
    exact = scores.local_slope(decoder, z, method="exact")
    assert torch.allclose(exact[0].reshape(4, 2), w, atol=1e-12)


def test_exact_slope_is_the_jacobian_and_fd_approaches_it():
    decoder = Small().eval()
    z = torch.tensor([[0.1, -0.2, 0.3]], dtype=torch.float64)
    exact = scores.local_slope(decoder, z, method="exact")
    jac = torch.autograd.functional.jacobian(lambda v: decoder(v[None])[0], z[0])
    assert torch.allclose(exact[0], jac, atol=1e-12)
    fd = scores.local_slope(decoder, z, fd_eps=1e-6)
    assert torch.allclose(fd, exact, atol=1e-5)
    coarse = scores.local_slope(decoder, z, fd_eps=0.5)
    assert not torch.allclose(coarse, exact, atol=1e-3)


def test_batched_les_equals_the_per_position_reference():
    decoder = Small().eval()
    z = torch.randn(6, 3, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    slope = scores.local_slope(decoder, z)
    batched = scores.les(decoder, z, slope).values.detach().numpy()
    reference = scores.les_reference(decoder(z), slope)
    assert np.allclose(batched, reference, atol=1e-6, rtol=0)
    assert np.ptp(batched) > 0.1  # different latents, different scores
    # the reference on the linear closed form too
    lin = Linear([[1.0], [-1.0]])
    ref = scores.les_reference(
        lin(torch.zeros(1, 1, dtype=torch.float64)),
        scores.local_slope(lin, torch.zeros(1, 1, dtype=torch.float64)),
    )
    assert ref[0] == pytest.approx(0.5 * math.log(2.0), abs=1e-6)


def test_gradient_flows_through_the_probabilities_only():
    decoder = Small().eval()
    z0 = torch.tensor([[0.2, 0.1, -0.4]], dtype=torch.float64)
    slope = scores.local_slope(decoder, z0)
    z = z0.clone().requires_grad_(True)
    scores.les(decoder, z, slope).values.sum().backward()
    # central differences of LES with A held fixed
    numeric = torch.zeros(3, dtype=torch.float64)
    for i in range(3):
        e = torch.zeros(1, 3, dtype=torch.float64)
        e[0, i] = 1e-5
        plus = scores.les(decoder, z0 + e, slope).values
        minus = scores.les(decoder, z0 - e, slope).values
        numeric[i] = (plus - minus).item() / 2e-5
    assert torch.allclose(z.grad[0], numeric, atol=1e-5)
    # with A recomputed at every point the derivative is a different one
    moving = torch.zeros(3, dtype=torch.float64)
    for i in range(3):
        e = torch.zeros(1, 3, dtype=torch.float64)
        e[0, i] = 1e-3
        moving[i] = (scores.les(decoder, z0 + e).values - scores.les(decoder, z0 - e).values).item()
    assert not torch.allclose(z.grad[0], moving / 2e-3, atol=1e-3)


def test_polarity_is_the_volume_of_the_slope():
    slope = torch.tensor([[1.0], [-1.0]]).reshape(1, 1, 2, 1)
    assert scores.polarity(slope).values.item() == pytest.approx(-0.5 * math.log(2.0))
    slope = torch.tensor([[3.0, 0.0], [0.0, 2.0]]).reshape(1, 1, 2, 2)
    assert scores.polarity(slope).values.item() == pytest.approx(-math.log(6.0))


def test_log_volume_score_flags_singular_metrics():
    metric = torch.stack(
        [torch.eye(2) * 4, torch.zeros(2, 2), -torch.eye(2)[[0, 1]] * torch.tensor([[1.0], [-1.0]])]
    )
    values, singular = scores.log_volume_score(metric)
    assert values[0].item() == pytest.approx(-math.log(4.0))
    assert singular.tolist() == [False, True, True]
    assert torch.isnan(values[1:]).all()
    # a decoder that ignores z has G = 0: NaN and flagged, never an exception
    flat = Linear([[0.0], [0.0]])
    result = scores.les(flat, torch.zeros(2, 1, dtype=torch.float64))
    assert result.singular.all() and torch.isnan(result.values).all()


def test_pullback_metric_is_j_transpose_j():
    blocks = torch.randn(2, 3, 4, 3, generator=torch.Generator().manual_seed(2))
    slope = torch.randn(2, 3, 3, 2, generator=torch.Generator().manual_seed(3))
    metric = scores.pullback_metric(blocks, slope)
    for b in range(2):
        j = torch.cat([blocks[b, t] @ slope[b, t] for t in range(3)])
        assert torch.allclose(metric[b], j.T @ j)


def test_bad_latents_and_steps_are_refused():
    decoder = Small().eval()
    with pytest.raises(ValueError, match=r"shape \(batch, 3\).*got \(2, 4\)"):
        scores.les(decoder, torch.zeros(2, 4, dtype=torch.float64))
    with pytest.raises(ValueError, match=r"shape \(batch, 3\)"):
        scores.check_latents(torch.zeros(3), 3)
    with pytest.raises(ValueError, match="fd_eps must be > 0, got 0"):
        scores.local_slope(decoder, torch.zeros(1, 3, dtype=torch.float64), fd_eps=0.0)


def test_decoder_view_sets_mode_and_dtype_and_leaves_the_original():
    original = Small(dropout=0.5).float().eval()
    view = scores.decoder_view(original, "train", torch.float64)
    assert view.training and not original.training
    assert all(p.dtype == torch.float64 and not p.requires_grad for p in view.parameters())
    assert all(p.dtype == torch.float32 and p.requires_grad for p in original.parameters())
    z = torch.zeros(2, 3, dtype=torch.float64)
    assert not torch.equal(view(z), view(z))  # dropout active: two passes differ
    still = scores.decoder_view(original, "eval", torch.float64)
    assert not still.training and torch.equal(still(z), still(z))


def test_les_reads_the_width_from_the_batch_when_the_decoder_has_none():
    class Bare(nn.Module):
        def forward(self, z):
            return torch.stack([z, -z], dim=-1)  # L = d positions, V = 2

    z = torch.zeros(1, 2, dtype=torch.float64)
    # per position: slope rows (1, -1) on its own axis: G = diag(1/2, 1/2)
    assert scores.les(Bare(), z).values.item() == pytest.approx(math.log(2.0), abs=1e-6)


def test_les_with_the_exact_method_uses_the_exact_slope():
    decoder = Small().eval()
    z = torch.tensor([[0.3, -0.1, 0.2]], dtype=torch.float64)
    exact = scores.les(decoder, z, scores.local_slope(decoder, z, method="exact")).values
    assert torch.allclose(scores.les(decoder, z, method="exact").values, exact, atol=1e-12, rtol=0)
    fd = scores.les(decoder, z, fd_eps=1e-2).values
    assert not torch.allclose(fd, exact, atol=1e-9, rtol=0)


def test_les_uses_forward_differences_of_1e4_by_default():
    decoder = Small().eval()
    z = torch.tensor([[0.3, -0.1, 0.2]], dtype=torch.float64)
    default = scores.les(decoder, z).values
    assert torch.equal(default, scores.les(decoder, z, fd_eps=1e-4, method="fd").values)
    exact = scores.les(decoder, z, method="exact").values
    assert torch.allclose(default, exact, atol=1e-3, rtol=0)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_the_reference_is_stable_for_large_logits():
    # a shift of every logit by 360 leaves the softmax alone and makes the normaliser row vanish
    # (exp(-360), 0 in float64): LES = 1/2 log 2 as for the slope (1, -1) unshifted; exp(2 * 360)
    # would overflow
    decoder = Linear([[1.0], [-1.0]], bias=[360.0, 360.0])
    z = torch.zeros(1, 1, dtype=torch.float64)
    reference = scores.les_reference(decoder(z), scores.local_slope(decoder, z))
    assert reference[0] == pytest.approx(0.5 * math.log(2.0), abs=1e-6)
    assert reference[0] == pytest.approx(scores.les(decoder, z).values.item(), abs=1e-6)
