"""Entropy-guided sampling: the predecessor's cond_fn (Feedback-guided Data Synthesis, fg_pipe.py).

One DDIM step at timestep t with classifier-free guidance scale w (the ``sample`` loop):

1. eps_cfg = eps(x_t, null) + w (eps(x_t, c) - eps(x_t, null))      :func:`cfg_noise`, drives the step
2. x0_hat = (x_t - sqrt(1 - abar_t) eps(x_t, c)) / sqrt(abar_t)        :func:`predict_x0`
3. s = x0_hat, or the official blend sqrt(1-abar_t) x0_hat + (1 - sqrt(1-abar_t)) x_t   :func:`guidance_input`
4. H = entropy of softmax(learner(decode(s)))  (or the target-class loss)   :func:`entropy_criterion`
5. g = grad_{x_t} H, rescaled per sample to omega ||x_t|| / (||g|| + 1e-8)  :func:`rescale_gradient`
6. x_t <- x_t + g (ascent), every ``freq`` steps, then the DDIM step with eps_cfg.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch
import torch.nn.functional as F

Learner = Callable[[torch.Tensor], torch.Tensor]


def cfg_noise(eps_uncond: torch.Tensor, eps_cond: torch.Tensor, w: float) -> torch.Tensor:
    """Classifier-free guidance (Ho & Salimans 2022): eps_u + w (eps_c - eps_u)."""
    return eps_uncond + w * (eps_cond - eps_uncond)


def predict_x0(x_t: torch.Tensor, eps: torch.Tensor, alpha_bar: torch.Tensor) -> torch.Tensor:
    """x0_hat = (x_t - sqrt(1 - abar_t) eps) / sqrt(abar_t) (DDIM Eq. 9 / fg_pipe.cond_fn)."""
    return (x_t - (1 - alpha_bar) ** 0.5 * eps) / alpha_bar**0.5


def guidance_input(
    x0_hat: torch.Tensor, x_t: torch.Tensor, alpha_bar: torch.Tensor, blend: str
) -> torch.Tensor:
    """What the learner judges: x0_hat, or the official sqrt(1-abar) x0_hat + (1 - sqrt(1-abar)) x_t."""
    if blend == "x0":
        return x0_hat
    if blend == "official":
        fac = (1 - alpha_bar) ** 0.5
        return fac * x0_hat + (1 - fac) * x_t
    raise ValueError(f"guidance blend must be x0 or official, got {blend!r}")


def learner_image(image: torch.Tensor, mode: str) -> torch.Tensor:
    """Map a decoded sample into the learner's [-1, 1] range: clamp, or per-image min-max.

    ``minmax`` is the official process_image (shift by the detached min, divide by the detached max),
    applied per image and mapped from [0, 1] to [-1, 1].
    """
    if mode == "clamp":
        return image.clamp(-1.0, 1.0)
    if mode == "minmax":
        flat = image.flatten(1)
        shifted = flat - flat.min(dim=1, keepdim=True).values.detach()
        unit = shifted / shifted.max(dim=1, keepdim=True).values.detach()
        return (unit * 2 - 1).view_as(image)
    raise ValueError(f"guidance image mode must be clamp or minmax, got {mode!r}")


def entropy_criterion(logits: torch.Tensor) -> torch.Tensor:
    """Per-sample entropy of softmax(logits): -sum_k p_k log p_k (fg_pipe: CE of the logits vs their softmax)."""
    return -(F.softmax(logits, dim=-1) * F.log_softmax(logits, dim=-1)).sum(dim=-1)


def target_loss_criterion(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """Per-sample cross-entropy to the conditioning class (fg_pipe's ``loss`` criterion)."""
    return F.cross_entropy(logits, target, reduction="none")


def criterion_value(logits: torch.Tensor, target: torch.Tensor, criterion: str) -> torch.Tensor:
    if criterion == "entropy":
        return entropy_criterion(logits)
    if criterion == "loss":
        return target_loss_criterion(logits, target)
    raise ValueError(f"guidance criterion must be entropy or loss, got {criterion!r}")


def rescale_gradient(grad: torch.Tensor, x_t: torch.Tensor, omega: float) -> torch.Tensor:
    """g <- omega * g * ||x_t|| / (||g|| + 1e-8), norms over each sample (fg_pipe: over the latent)."""
    g_norm = grad.flatten(1).norm(dim=1).view(-1, *([1] * (grad.dim() - 1)))
    x_norm = x_t.flatten(1).norm(dim=1).view_as(g_norm)
    return omega * grad / (g_norm + 1e-8) * x_norm


def guidance_gradient(
    generator,
    learner: Learner,
    x_t: torch.Tensor,
    t: torch.Tensor,
    cond: torch.Tensor,
    target: torch.Tensor,
    alpha_bar: torch.Tensor,
    omega: float,
    criterion: str = "entropy",
    blend: str = "x0",
    image: str = "clamp",
) -> torch.Tensor:
    """The step added to x_t: the rescaled gradient of the learner's criterion (fg_pipe.cond_fn)."""
    with torch.enable_grad():
        x = x_t.detach().requires_grad_()
        x0_hat = predict_x0(x, generator.eps(x, t, cond), alpha_bar)
        s = guidance_input(x0_hat, x, alpha_bar, blend)
        logits = learner(learner_image(generator.decode(s), image))
        # a sum keeps each sample's gradient its own; the per-sample rescaling removes the scale
        value = criterion_value(logits, target, criterion).sum()
        grad = torch.autograd.grad(value, x)[0]
    return rescale_gradient(grad, x.detach(), omega)


def sample(
    generator,
    labels: np.ndarray,
    noise: torch.Tensor,
    steps: int,
    cfg_scale: float,
    eta: float = 0.0,
    learner: Learner | None = None,
    omega: float = 0.0,
    criterion: str = "entropy",
    freq: int = 1,
    blend: str = "x0",
    image: str = "clamp",
    step_generator: torch.Generator | None = None,
) -> torch.Tensor:
    """DDIM with classifier-free guidance from x_T = ``noise``; entropy guidance when omega > 0.

    Returns decoded images in [-1, 1]. eps is recomputed from the clamped x0_hat in every step
    (diffusers ``use_clipped_model_output``), which keeps the tiny pixel model on the data range.
    """
    from .generator import ddim_scheduler

    scheduler = ddim_scheduler(generator.scheduler_config)
    scheduler.set_timesteps(steps)
    cond = generator.condition(labels).to(noise.device)
    null = generator.null(cond)
    target = torch.as_tensor(labels, dtype=torch.long, device=noise.device)
    alphas = scheduler.alphas_cumprod.to(noise.device)
    x = noise * scheduler.init_noise_sigma
    guided = learner is not None and omega > 0
    for i, t in enumerate(scheduler.timesteps):
        with torch.no_grad():
            both = generator.eps(torch.cat([x, x]), t, torch.cat([null, cond]))
            eps_uncond, eps_cond = both.chunk(2)
            eps = cfg_noise(eps_uncond, eps_cond, cfg_scale)
        if guided and i % freq == 0:
            x = x + guidance_gradient(
                generator, learner, x, t, cond, target, alphas[t], omega, criterion, blend, image
            )
        x = scheduler.step(
            eps, t, x, eta=eta, use_clipped_model_output=True, generator=step_generator
        ).prev_sample
    with torch.no_grad():
        return generator.decode(x).clamp(-1.0, 1.0)
