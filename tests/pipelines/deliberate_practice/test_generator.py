"""The class-conditional DDPM: schedules (the spec's pitfall), label dropout, loss, denoisers, backends."""

import copy
import io
import logging

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.deliberate_practice import generator as gen


def test_linear_schedule_at_T200_leaves_signal_cosine_does_not():
    """The pitfall the spec met: linear betas to 0.02 with T = 200 keep abar_T near 0.13."""
    linear = gen.train_scheduler(200, "linear").alphas_cumprod
    cosine = gen.train_scheduler(200, "squaredcos_cap_v2").alphas_cumprod
    assert 0.12 < float(linear[-1]) < 0.14
    assert float(cosine[-1]) < 1e-6
    assert float(cosine[0]) > 0.999


def test_ddim_scheduler_shares_the_alphas_and_clamps_x0():
    train = gen.train_scheduler(200, "squaredcos_cap_v2")
    ddim = gen.ddim_scheduler(train.config)
    assert torch.allclose(ddim.alphas_cumprod, train.alphas_cumprod)
    assert ddim.config.clip_sample is True


def test_drop_labels_replaces_with_the_null_label_at_rate_p():
    g = torch.Generator().manual_seed(0)
    labels = torch.arange(10).repeat(200)
    assert torch.equal(gen.drop_labels(labels, 0.0, 10, g), labels)
    assert (gen.drop_labels(labels, 1.0, 10, g) == 10).all()
    dropped = gen.drop_labels(labels, 0.25, 10, g)
    kept = dropped != 10
    assert torch.equal(dropped[kept], labels[kept])
    assert 0.2 < float((~kept).float().mean()) < 0.3


class Oracle(torch.nn.Module):
    """Knows x0 and the schedule, so it recovers the noise exactly from x_t and t."""

    def __init__(self, x0, alphas):
        super().__init__()
        self.x0, self.alphas = x0, alphas

    def forward(self, x_t, t, labels):
        abar = self.alphas[t].view(-1, 1, 1, 1)
        return (x_t - abar.sqrt() * self.x0) / (1 - abar).sqrt()


def test_ddpm_loss_is_zero_for_the_true_noise_and_one_for_zero():
    scheduler = gen.train_scheduler(100, "squaredcos_cap_v2")
    x0 = torch.rand(64, 1, 2, 2) * 2 - 1
    g = torch.Generator().manual_seed(1)
    labels = torch.zeros(64, dtype=torch.long)
    loss = gen.ddpm_loss(Oracle(x0, scheduler.alphas_cumprod), scheduler, x0, labels, g)
    assert float(loss) < 1e-6
    zero = lambda x, t, c: torch.zeros_like(x)  # noqa: E731
    loss = gen.ddpm_loss(zero, scheduler, torch.zeros(4000, 1, 2, 2), labels.repeat(63)[:4000], g)
    assert float(loss) == pytest.approx(1.0, abs=0.03)


def test_residual_mlp_denoiser_shapes_null_label_and_scalar_timestep():
    torch.manual_seed(0)
    net = gen.ResidualMLPDenoiser((1, 4, 4), num_classes=3, width=16, blocks=2)
    assert net.label.num_embeddings == 4  # 3 classes + the null label
    x = torch.randn(5, 1, 4, 4)
    labels = torch.tensor([0, 1, 2, 3, 0])
    out = net(x, torch.full((5,), 7), labels)
    assert out.shape == x.shape
    assert torch.allclose(net(x, torch.tensor(7), labels), out)
    # the timestep and the label both change the output
    assert not torch.allclose(net(x, torch.full((5,), 70), labels), out)
    assert not torch.allclose(net(x, torch.full((5,), 7), torch.full((5,), 3)), out)
    assert len(net.blocks) == 2


def test_residual_block_is_a_skip_plus_a_conditioned_update():
    torch.manual_seed(0)
    block = gen.ResidualBlock(4)
    torch.nn.init.zeros_(block.fc2.weight)
    torch.nn.init.zeros_(block.fc2.bias)
    h = torch.randn(3, 4)
    assert torch.equal(block(h, torch.randn(3, 4)), h)


def test_timestep_embedding_is_sinusoidal():
    emb = gen.timestep_embedding(torch.tensor([0, 5]), 8)
    assert emb.shape == (2, 8)
    # t = 0: cos(0) = 1 in the first half (flip_sin_to_cos), sin(0) = 0 in the second
    assert torch.allclose(emb[0], torch.tensor([1.0] * 4 + [0.0] * 4))
    assert emb[1, 0].item() == pytest.approx(np.cos(5.0), abs=1e-6)
    # frequencies 10000^(-k / 4): k = 1 gives 0.1, so cos(0.5) and sin(0.5)
    assert emb[1, 1].item() == pytest.approx(np.cos(0.5), abs=1e-6)
    assert emb[1, 5].item() == pytest.approx(np.sin(0.5), abs=1e-6)


def test_train_ddpm_lowers_the_loss_on_a_tiny_set():
    torch.manual_seed(0)
    x = np.tile(
        np.array([[[[1.0, -1.0], [-1.0, 1.0]]], [[[-1.0, 1.0], [1.0, -1.0]]]], np.float32),
        (8, 1, 1, 1),
    )
    y = np.tile(np.array([0, 1]), 8)
    net = gen.ResidualMLPDenoiser((1, 2, 2), num_classes=2, width=32, blocks=1)
    scheduler = gen.train_scheduler(50, "squaredcos_cap_v2")
    losses = gen.train_ddpm(
        net, scheduler, x, y, steps=150, batch=16, lr=3e-3, label_dropout=0.1, seed=0
    )
    assert len(losses) == 150
    assert np.mean(losses[-20:]) < 0.6 * np.mean(losses[:20])
    assert not net.training


def test_make_denoiser_backends():
    mlp = gen.make_denoiser("mlp", (1, 8, 8), 10, 16, 1, [8, 16])
    assert isinstance(mlp, gen.ResidualMLPDenoiser)
    unet = gen.make_denoiser("unet2d", (1, 8, 8), 10, 16, 1, [8, 16])
    out = unet(torch.randn(2, 1, 8, 8), torch.tensor([3, 4]), torch.tensor([0, 10]))
    assert out.shape == (2, 1, 8, 8)
    assert unet.unet.class_embedding.num_embeddings == 11
    with pytest.raises(ValueError, match="backend"):
        gen.make_denoiser("pretrained", (1, 8, 8), 10, 16, 1, [8])


def test_pixel_generator_conditions_on_labels_with_a_null_label():
    net = gen.ResidualMLPDenoiser((1, 2, 2), num_classes=3, width=8, blocks=1)
    pixel = gen.PixelGenerator(net, gen.train_scheduler(10, "squaredcos_cap_v2").config)
    cond = pixel.condition(np.array([0, 2]))
    assert cond.dtype == torch.long and torch.equal(pixel.null(cond), torch.tensor([3, 3]))
    assert pixel.shape == (1, 2, 2) and pixel.num_classes == 3
    x = torch.randn(2, 1, 2, 2)
    assert torch.equal(pixel.decode(x), x)
    assert not any(p.requires_grad for p in net.parameters())


def test_randomness_comes_from_the_given_generator_only():
    """drop_labels, ddpm_loss and train_ddpm repeat exactly from their seed, whatever torch's global seed."""
    labels = torch.arange(10).repeat(10)
    scheduler = gen.train_scheduler(20, "squaredcos_cap_v2")
    zero = lambda x, t, c: torch.zeros_like(x)  # noqa: E731
    x0 = torch.zeros(16, 1, 2, 2)
    runs = []
    for global_seed in (0, 1):
        torch.manual_seed(global_seed)
        dropped = gen.drop_labels(labels, 0.5, 10, torch.Generator().manual_seed(3))
        loss = gen.ddpm_loss(zero, scheduler, x0, labels[:16], torch.Generator().manual_seed(3))
        runs.append((dropped, float(loss)))
    assert torch.equal(runs[0][0], runs[1][0]) and runs[0][1] == runs[1][1]

    x = np.zeros((4, 1, 2, 2), np.float32)
    y = np.array([0, 1, 0, 1])
    net = gen.ResidualMLPDenoiser((1, 2, 2), num_classes=2, width=8, blocks=1)
    losses = []
    for global_seed in (0, 1):
        model = copy.deepcopy(net)
        torch.manual_seed(global_seed)
        losses.append(gen.train_ddpm(model, scheduler, x, y, 3, 2, 1e-3, 0.5, seed=5))
    assert losses[0] == losses[1]


class LabelSpy(torch.nn.Module):
    """Records the labels of every batch (label i is sample i); eps_theta = w x_t."""

    num_classes = 4

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.zeros(()))
        self.seen = []

    def forward(self, x_t, t, labels):
        self.seen.append(labels.clone())
        return self.w * x_t


def test_train_ddpm_batches_are_drawn_from_the_whole_set():
    x, y = np.zeros((4, 1, 1, 1), np.float32), np.arange(4)
    spy = LabelSpy()
    scheduler = gen.train_scheduler(10, "squaredcos_cap_v2")
    gen.train_ddpm(spy, scheduler, x, y, steps=30, batch=2, lr=1e-3, label_dropout=0.0, seed=0)
    assert len(spy.seen) == 30 and all(len(b) == 2 for b in spy.seen)
    assert set(torch.cat(spy.seen).tolist()) == {0, 1, 2, 3}
    spy = LabelSpy()
    gen.train_ddpm(spy, scheduler, x, y, steps=2, batch=10, lr=1e-3, label_dropout=0.0, seed=0)
    assert all(len(b) == 4 for b in spy.seen)  # a batch larger than the set: the set's size


def _silu(z):
    return z / (1 + np.exp(-z))


def test_residual_block_by_hand_with_identity_layers():
    block = gen.ResidualBlock(4)
    with torch.no_grad():
        for fc in (block.fc1, block.fc2):
            fc.weight.copy_(torch.eye(4))
            fc.bias.zero_()
    h = np.array([[1.0, -1.0, 1.0, -1.0]])  # layer norm: mean 0, variance 1, so itself
    emb = np.array([[0.5, 0.5, -0.5, -0.5]])
    expected = h + _silu(_silu(h / np.sqrt(1 + 1e-5) + emb))
    out = block(torch.tensor(h, dtype=torch.float32), torch.tensor(emb, dtype=torch.float32))
    assert np.allclose(out.detach().numpy(), expected, atol=1e-5)


def test_residual_mlp_denoiser_scalar_timestep_with_several_channels():
    torch.manual_seed(0)
    net = gen.ResidualMLPDenoiser((3, 2, 2), num_classes=2, width=8, blocks=1)
    x, labels = torch.randn(5, 3, 2, 2), torch.tensor([0, 1, 2, 0, 1])
    assert torch.allclose(net(x, torch.tensor(4), labels), net(x, torch.full((5,), 4), labels))


def test_pixel_generator_eps_is_the_denoiser():
    torch.manual_seed(0)
    net = gen.ResidualMLPDenoiser((1, 2, 2), num_classes=3, width=8, blocks=1)
    pixel = gen.PixelGenerator(net, gen.train_scheduler(10, "squaredcos_cap_v2").config)
    x, t, cond = torch.randn(2, 1, 2, 2), torch.tensor([3, 7]), torch.tensor([0, 3])
    assert torch.equal(pixel.eps(x, t, cond), net(x, t, cond))


def test_residual_mlp_denoiser_recomputed_from_its_weights():
    """inp -> blocks (each fed time MLP(sinusoid) + label embedding) -> LayerNorm, SiLU, Linear."""
    F = torch.nn.functional
    torch.manual_seed(0)
    net = gen.ResidualMLPDenoiser((1, 2, 2), num_classes=2, width=8, blocks=2)
    with torch.no_grad():
        for p in net.parameters():
            p.add_(0.1 * torch.randn_like(p))  # LayerNorm weights off 1 and biases off 0
    p = dict(net.named_parameters())
    x, t, labels = torch.randn(3, 1, 2, 2), torch.tensor([1, 20, 40]), torch.tensor([0, 1, 2])

    def linear(h, name):
        return F.linear(h, p[f"{name}.weight"], p[f"{name}.bias"])

    def norm(h, name):
        return F.layer_norm(h, (8,), p[f"{name}.weight"], p[f"{name}.bias"])

    with torch.no_grad():
        temb = linear(F.silu(linear(gen.timestep_embedding(t, 8), "time.0")), "time.2")
        emb = temb + p["label.weight"][labels]
        h = linear(x.flatten(1), "inp")
        for k in range(2):
            z = linear(F.silu(norm(h, f"blocks.{k}.norm") + emb), f"blocks.{k}.fc1")
            h = h + linear(F.silu(z), f"blocks.{k}.fc2")
        expected = linear(F.silu(norm(h, "out.0")), "out.2").view(3, 1, 2, 2)
        assert torch.allclose(net(x, t, labels), expected, atol=1e-5)


def test_train_ddpm_logs_its_progress(caplog, monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())  # not a terminal: progress goes to the log
    net = gen.ResidualMLPDenoiser((1, 1, 1), num_classes=2, width=4, blocks=1)
    scheduler = gen.train_scheduler(10, "squaredcos_cap_v2")
    x, y = np.zeros((2, 1, 1, 1), np.float32), np.array([0, 1])
    with caplog.at_level(logging.INFO, logger=gen.__name__):
        gen.train_ddpm(net, scheduler, x, y, steps=2, batch=2, lr=1e-3, label_dropout=0.0, seed=0)
    lines = [r.getMessage() for r in caplog.records if r.name == gen.__name__]
    assert lines[-1].startswith("train DDPM generator: 2 done in ")


class TimestepSpy(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.t = []

    def forward(self, x_t, t, labels):
        self.t.append(t)
        return torch.zeros_like(x_t)


def test_ddpm_loss_draws_one_timestep_per_sample_over_the_whole_range():
    spy, scheduler = TimestepSpy(), gen.train_scheduler(3, "squaredcos_cap_v2")
    x0 = torch.zeros(64, 1, 1, 1)
    gen.ddpm_loss(spy, scheduler, x0, torch.zeros(64, dtype=torch.long), torch.Generator())
    (t,) = spy.t
    assert t.shape == (64,) and set(t.tolist()) == {0, 1, 2}
