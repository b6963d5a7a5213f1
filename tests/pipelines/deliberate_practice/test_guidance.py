"""Entropy-guided sampling on hand-checkable cases (fg_pipe.cond_fn's steps one by one)."""

import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from paper_pipelines.pipelines.deliberate_practice import guidance
from paper_pipelines.pipelines.deliberate_practice.generator import train_scheduler


def test_cfg_noise_interpolates_and_extrapolates():
    u, c = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 1.0])
    assert torch.equal(guidance.cfg_noise(u, c, 0.0), u)
    assert torch.equal(guidance.cfg_noise(u, c, 1.0), c)
    assert torch.allclose(guidance.cfg_noise(u, c, 2.0), torch.tensor([5.0, 0.0]))


def test_predict_x0_inverts_the_forward_process():
    # abar = 0.64: sqrt = 0.8, sqrt(1 - abar) = 0.6; x0 = 1, eps = 2 -> x_t = 0.8 + 1.2 = 2
    abar = torch.tensor(0.64)
    out = guidance.predict_x0(torch.tensor([2.0]), torch.tensor([2.0]), abar)
    assert torch.allclose(out, torch.tensor([1.0]))
    out = guidance.predict_x0(torch.tensor([1.4]), torch.tensor([1.0]), abar)
    assert torch.allclose(out, torch.tensor([1.0]))


def test_guidance_input_blends_with_sqrt_one_minus_alpha_bar():
    x0, xt, abar = torch.tensor([1.0]), torch.tensor([3.0]), torch.tensor(0.64)
    assert torch.equal(guidance.guidance_input(x0, xt, abar, "x0"), x0)
    # fac = 0.6: 0.6 * 1 + 0.4 * 3 = 1.8
    assert torch.allclose(guidance.guidance_input(x0, xt, abar, "official"), torch.tensor([1.8]))
    with pytest.raises(ValueError, match="blend"):
        guidance.guidance_input(x0, xt, abar, "mix")


def test_learner_image_clamps_or_min_max_normalises_each_image():
    x = torch.tensor([[[[-3.0, 0.5]]], [[[0.0, 4.0]]]])
    assert torch.equal(
        guidance.learner_image(x, "clamp"), torch.tensor([[[[-1.0, 0.5]]], [[[0.0, 1.0]]]])
    )
    mm = guidance.learner_image(x, "minmax")
    assert torch.allclose(mm, torch.tensor([[[[-1.0, 1.0]]], [[[-1.0, 1.0]]]]))
    with pytest.raises(ValueError, match="image mode"):
        guidance.learner_image(x, "tanh")


def test_minmax_uses_detached_min_and_max_as_the_official_code():
    x = torch.tensor([[0.0, 1.0, 4.0]], requires_grad=True)
    guidance.learner_image(x, "minmax").sum().backward()
    # d/dx of 2 (x - min) / (max - min) - 1 with min, max constants: 2 / 4 for every pixel
    assert torch.allclose(x.grad, torch.full((1, 3), 0.5))
    x = torch.tensor([[0.0, 1.0, 2.0]], requires_grad=True)
    guidance.learner_image(x, "minmax")[0, 1].backward()
    assert torch.allclose(x.grad, torch.tensor([[0.0, 1.0, 0.0]]))


def test_entropy_criterion_is_the_softmax_entropy_with_the_official_gradient():
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0], [20.0, 0.0, 0.0, 0.0], [1.0, 2.0, 0.5, -1.0]])
    h = guidance.entropy_criterion(logits)
    assert h[0].item() == pytest.approx(math.log(4))
    assert h[1].item() == pytest.approx(0.0, abs=1e-6)
    p = torch.softmax(logits[2], 0)
    assert h[2].item() == pytest.approx(float(-(p * p.log()).sum()), rel=1e-6)
    a = logits.clone().requires_grad_()
    b = logits.clone().requires_grad_()
    guidance.entropy_criterion(a).sum().backward()
    F.cross_entropy(b, F.softmax(b, dim=-1), reduction="sum").backward()
    assert torch.allclose(a.grad, b.grad, atol=1e-6)


def test_target_loss_is_per_sample_cross_entropy_to_the_label():
    logits = torch.tensor([[0.0, 0.0], [math.log(3.0), 0.0]])
    out = guidance.target_loss_criterion(logits, torch.tensor([1, 0]))
    assert torch.allclose(out, torch.tensor([math.log(2.0), -math.log(0.75)]))
    assert torch.equal(guidance.criterion_value(logits, torch.tensor([1, 0]), "loss"), out)
    assert torch.equal(
        guidance.criterion_value(logits, torch.tensor([1, 0]), "entropy"),
        guidance.entropy_criterion(logits),
    )
    with pytest.raises(ValueError, match="criterion"):
        guidance.criterion_value(logits, torch.tensor([1, 0]), "margin")


def test_rescale_gradient_to_omega_times_the_sample_norm_per_sample():
    g = torch.tensor([[3.0, 4.0], [0.0, 2.0]])
    x = torch.tensor([[0.0, 10.0], [1.0, 0.0]])
    out = guidance.rescale_gradient(g, x, 0.5)
    # sample 0: 0.5 * [3, 4] / 5 * 10 = [3, 4]; sample 1: 0.5 * [0, 2] / 2 * 1 = [0, 0.5]
    assert torch.allclose(out, torch.tensor([[3.0, 4.0], [0.0, 0.5]]), atol=1e-6)
    zero = guidance.rescale_gradient(torch.zeros(1, 2), x[:1], 0.5)
    assert torch.equal(zero, torch.zeros(1, 2))
    # a gradient at the 1e-8 scale is damped by the epsilon: 0.5 * [1e-8, 0] / 2e-8 * 10 = [2.5, 0]
    tiny = guidance.rescale_gradient(torch.tensor([[1e-8, 0.0]]), x[:1], 0.5)
    assert torch.allclose(tiny, torch.tensor([[2.5, 0.0]]), rtol=1e-4)
    # 4-d latents: the norm runs over channels and pixels of each sample
    g4 = torch.ones(2, 1, 2, 2)
    out4 = guidance.rescale_gradient(g4, torch.full((2, 1, 2, 2), 3.0), 1.0)
    assert torch.allclose(out4, torch.full((2, 1, 2, 2), 3.0))


class ZeroNoise:
    """A generator whose eps is 0 (x0_hat = x_t / sqrt(abar)) and decode the identity."""

    num_classes = 3
    shape = (1, 1, 2)

    def eps(self, x, t, cond):
        return torch.zeros_like(x)

    def decode(self, x):
        return x


def test_guidance_gradient_ascends_the_learner_entropy_with_the_right_norm():
    torch.manual_seed(0)
    w = torch.randn(2, 3) * 3
    learner = lambda img: img.flatten(1) @ w  # noqa: E731
    x = torch.tensor([[[[0.3, -0.2]]], [[[-0.5, 0.1]]]])
    abar = torch.tensor(0.9)
    step = guidance.guidance_gradient(
        ZeroNoise(), learner, x, torch.tensor(10), None, torch.tensor([0, 1]), abar, 0.05
    )
    norms = step.flatten(1).norm(dim=1)
    assert torch.allclose(norms, 0.05 * x.flatten(1).norm(dim=1), atol=1e-6)

    def entropy(z):
        return guidance.entropy_criterion(learner((z / abar**0.5).clamp(-1, 1)))

    assert (entropy(x + step) > entropy(x)).all()
    assert (entropy(x - step) < entropy(x)).all()
    # the official blend judges another point: the step changes
    official = guidance.guidance_gradient(
        ZeroNoise(), learner, x, torch.tensor(10), None, torch.tensor([0, 1]), abar, 0.05,
        blend="official",
    )  # fmt: skip
    assert not torch.allclose(official, step)


class PointMass:
    """The exact eps of data concentrated at one point per condition: every x_t denoises to it."""

    num_classes = 2

    def __init__(self, points, alphas):
        self.points, self.alphas = points, alphas
        self.shape = tuple(points.shape[1:])
        self.scheduler_config = train_scheduler(50, "squaredcos_cap_v2").config

    def condition(self, labels):
        return torch.as_tensor(labels, dtype=torch.long)

    def null(self, cond):
        return torch.full_like(cond, 2)

    def eps(self, x, t, cond):
        abar = self.alphas[t]
        return (x - abar**0.5 * self.points[cond]) / (1 - abar) ** 0.5

    def decode(self, x):
        return x


def _point_mass():
    points = torch.tensor([[[0.5, -0.5]], [[-0.25, 0.75]], [[0.0, 0.0]]])  # class 0, class 1, null
    alphas = train_scheduler(50, "squaredcos_cap_v2").alphas_cumprod
    return PointMass(points, alphas)


def test_ddim_sampler_lands_on_the_point_mass_of_each_class():
    gen = _point_mass()
    noise = torch.randn((4, 1, 2), generator=torch.Generator().manual_seed(0))
    labels = np.array([0, 1, 0, 1])
    out = guidance.sample(gen, labels, noise, steps=10, cfg_scale=1.0)
    assert torch.allclose(out, gen.points[labels], atol=1e-4)
    # w = 0: the null condition only
    out = guidance.sample(gen, labels, noise, steps=10, cfg_scale=0.0)
    assert torch.allclose(out, torch.zeros_like(out), atol=1e-4)
    # w = 2 extrapolates away from the null point, then the clamp to [-1, 1] holds
    out = guidance.sample(gen, labels, noise, steps=10, cfg_scale=2.0)
    assert torch.allclose(out, (2 * gen.points[labels]).clamp(-1, 1), atol=1e-4)


def test_guidance_runs_every_freq_steps_and_only_when_asked(monkeypatch):
    calls = []

    def spy(generator, learner, x_t, t, *args, **kwargs):
        calls.append(int(t))
        return torch.zeros_like(x_t)

    monkeypatch.setattr(guidance, "guidance_gradient", spy)
    gen, noise, labels = _point_mass(), torch.randn(2, 1, 2), np.array([0, 1])
    learner = lambda img: img.flatten(1)  # noqa: E731
    guidance.sample(gen, labels, noise, steps=6, cfg_scale=1.0, learner=learner, omega=0.1, freq=2)
    assert len(calls) == 3
    calls.clear()
    guidance.sample(gen, labels, noise, steps=6, cfg_scale=1.0, learner=learner, omega=0.1, freq=1)
    assert len(calls) == 6
    calls.clear()
    guidance.sample(gen, labels, noise, steps=6, cfg_scale=1.0, learner=learner, omega=0.0)
    guidance.sample(gen, labels, noise, steps=6, cfg_scale=1.0, learner=None, omega=0.1)
    assert calls == []


def test_guided_step_is_added_before_the_ddim_step():
    """x_t + g is what the scheduler steps from (the official order: latents += grads; step)."""
    gen, labels = _point_mass(), np.array([0])
    noise = torch.tensor([[[0.2, 0.1]]])
    learner = lambda img: torch.cat([img.flatten(1), -img.flatten(1)], 1)  # noqa: E731
    plain = guidance.sample(gen, labels, noise, steps=1, cfg_scale=1.0)
    guided = guidance.sample(gen, labels, noise, steps=1, cfg_scale=1.0, learner=learner, omega=0.5)
    # one DDIM step to t=0 lands on x0_hat computed from the (moved) x_t and the old eps
    assert not torch.allclose(plain, guided)


class Drift(PointMass):
    """eps = 0 everywhere: x0_hat = x_t / sqrt(abar), so the path depends on eta and the noise."""

    def eps(self, x, t, cond):
        return torch.zeros_like(x)


def test_eta_zero_is_the_default_and_eta_one_adds_noise():
    gen = Drift(_point_mass().points, _point_mass().alphas)
    noise = torch.full((2, 1, 2), 0.3)
    labels = np.array([0, 1])
    default = guidance.sample(gen, labels, noise, steps=4, cfg_scale=1.0)
    ddim = guidance.sample(gen, labels, noise, steps=4, cfg_scale=1.0, eta=0.0)
    assert torch.equal(default, ddim)
    g = torch.Generator().manual_seed(0)
    noisy = guidance.sample(gen, labels, noise, steps=4, cfg_scale=1.0, eta=1.0, step_generator=g)
    assert not torch.allclose(noisy, ddim)


class FlatDrift(Drift):
    """eps = 0 on 3-pixel samples: the guidance gradient is the learner's, through x0_hat = x_t / sqrt(abar)."""

    def __init__(self):
        super().__init__(torch.zeros(3, 1, 3), _point_mass().alphas)

    def eps(self, x, t, cond):
        return torch.zeros_like(x) * cond.view(-1, 1, 1)  # 0, on the device of both x and cond


def _linear_learner():
    w = torch.randn((3, 3), generator=torch.Generator().manual_seed(0)) * 3
    return lambda img: img.flatten(1) @ w


def test_guided_sampling_uses_the_asked_criterion_blend_and_image_mode():
    gen, labels, learner = FlatDrift(), np.array([0, 1]), _linear_learner()
    noise = torch.randn((2, 1, 3), generator=torch.Generator().manual_seed(1)) * 0.5

    def guided(**options):
        return guidance.sample(
            gen, labels, noise, steps=3, cfg_scale=1.0, learner=learner, omega=0.3, **options
        )

    base = guided()
    defaults = {"criterion": "entropy", "blend": "x0", "image": "clamp", "freq": 1, "eta": 0.0}
    assert torch.equal(base, guided(**defaults))
    for options in ({"criterion": "loss"}, {"blend": "official"}, {"image": "minmax"}):
        assert not torch.allclose(guided(**options), base), options


def test_guided_sampling_runs_on_the_noise_device():
    """Labels, alphas and the loss target follow the noise (meta tensors stand in for an accelerator)."""
    gen, labels = FlatDrift(), np.array([0, 1])
    noise = torch.zeros((2, 1, 3), device="meta")
    for criterion in ("entropy", "loss"):
        out = guidance.sample(
            gen, labels, noise, steps=2, cfg_scale=1.0, learner=_linear_learner(), omega=0.3,
            criterion=criterion,
        )  # fmt: skip
        assert out.device.type == "meta" and out.shape == (2, 1, 3)


def test_a_learner_without_omega_leaves_sampling_unguided():
    gen, labels, learner = FlatDrift(), np.array([0, 1]), _linear_learner()
    noise = torch.randn((2, 1, 3), generator=torch.Generator().manual_seed(1)) * 0.5
    plain = guidance.sample(gen, labels, noise, steps=3, cfg_scale=1.0)
    assert torch.equal(
        guidance.sample(gen, labels, noise, steps=3, cfg_scale=1.0, learner=learner), plain
    )


def test_int32_labels_give_a_long_loss_target():
    gen, learner = FlatDrift(), _linear_learner()
    noise = torch.randn((2, 1, 3), generator=torch.Generator().manual_seed(1)) * 0.5
    options = {"steps": 2, "cfg_scale": 1.0, "learner": learner, "omega": 0.3, "criterion": "loss"}
    out32 = guidance.sample(gen, np.array([0, 1], np.int32), noise, **options)
    assert torch.equal(out32, guidance.sample(gen, np.array([0, 1]), noise, **options))
