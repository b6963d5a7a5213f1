"""Latent space optimisation with LES as a penalty (OmerRonen/les: les/opt/bo.py, les/opt/optimizer.py).

Each round: a botorch SingleTaskGP on the latents seen so far (hyper-parameters fit once, on the
initial encoded data, then reused, as the official code reloads its first fit), qLogEI with the best
observed value, ``n_batch`` start points drawn from the latents seen so far, and ``ga_steps`` steps of
gradient ascent per start point:

    z <- z + lr * (grad acq / ||grad acq|| + alpha * grad penalty / ||grad penalty||),

with LES's slope A computed once at the start point (the CPA assumption: only S moves). Candidates
are decoded by argmax; invalid ones are counted but not given to the surrogate.
"""

from __future__ import annotations

import logging
import math
import warnings
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from . import baselines, scores
from .grammar import detokenize, is_valid
from .objective import objective
from .vae import decode_argmax

logger = logging.getLogger(__name__)

Penalty = Callable[[torch.Tensor], torch.Tensor]
# the black box: a decoded row of token ids -> (its text, valid, objective or NaN)
Evaluate = Callable[[np.ndarray], tuple[str, bool, float]]


def evaluate_expression(row: np.ndarray) -> tuple[str, bool, float]:
    """The expressions task: the decoded string, whether the grammar derives it, its objective."""
    expression = detokenize(row)
    valid = is_valid(expression)
    return expression, valid, objective(expression) if valid else float("nan")


def fit_surrogate(x: torch.Tensor, y: torch.Tensor, max_iter: int) -> dict:
    """Fit a SingleTaskGP's hyper-parameters once on the exact marginal likelihood; returns them as a
    state dict without the training data.

    botorch's fit_gpytorch_mll (L-BFGS-B within the parameters' bounds) rather than the official plain
    Adam (lr 0.1, 100 epochs): with botorch 0.18 the noise is an untransformed bounded parameter that
    Adam drives negative (a non-PSD kernel matrix).
    """
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from gpytorch.mlls import ExactMarginalLogLikelihood

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SingleTaskGP(x, y[:, None], outcome_transform=None)
        mll = ExactMarginalLogLikelihood(model.likelihood, model)
        fit_gpytorch_mll(mll, optimizer_kwargs={"options": {"maxiter": max_iter}})
    return {k: v.detach().clone() for k, v in model.state_dict().items()}


def surrogate(x: torch.Tensor, y: torch.Tensor, hyper: dict):
    """A SingleTaskGP on (x, y) with the hyper-parameters of the first fit, in eval mode."""
    from botorch.models import SingleTaskGP

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SingleTaskGP(x, y[:, None], outcome_transform=None)
        model.load_state_dict(hyper, strict=False)
    return model.eval()


def unit(gradient: torch.Tensor) -> torch.Tensor:
    """Each row scaled to unit L2 norm (official normalize_grad); zero or non-finite rows become 0."""
    norm = gradient.norm(dim=-1, keepdim=True)
    scaled = gradient / norm
    ok = torch.isfinite(scaled).all(dim=-1, keepdim=True) & (norm > 0)
    return torch.where(ok, scaled, torch.zeros_like(scaled))


def ascent_step(
    z: torch.Tensor,
    acquisition: Callable[[torch.Tensor], torch.Tensor],
    penalty: Penalty | None,
    alpha: float,
    lr: float,
) -> torch.Tensor:
    """One step: z + lr * (unit acquisition gradient + alpha * unit penalty gradient), per row."""
    z = z.detach().requires_grad_(True)
    (grad_a,) = torch.autograd.grad(acquisition(z).sum(), z)
    step = unit(grad_a)
    if penalty is not None and alpha > 0:
        (grad_p,) = torch.autograd.grad(penalty(z).sum(), z)
        step = step + alpha * unit(grad_p)
    return (z + lr * step).detach()


def make_penalty(
    name: str, decoder: nn.Module, start: torch.Tensor, fd_eps: float, jacobian: str
) -> tuple[Penalty | None, int]:
    """The penalty ``name`` around the start points (LES keeps their A), and how many G were singular."""
    if name == "none":
        return None, 0
    if name == "prior":
        return baselines.prior, 0
    if name == "likelihood":
        return lambda z: baselines.likelihood(decoder, z), 0
    if name == "les":
        slope = scores.local_slope(decoder, start, fd_eps, jacobian)
        singular = int(scores.les(decoder, start, slope).singular.sum())
        # a singular G gives NaN and so a zero penalty gradient for that point (unit())
        return lambda z: scores.les(decoder, z, slope).values, singular
    raise ValueError(f"unknown penalty {name!r}; use none, les, likelihood or prior")


def optimise(
    decoder: nn.Module,
    score_decoder: nn.Module,
    z_init: np.ndarray,
    y_init: np.ndarray,
    penalty_name: str,
    rng: np.random.Generator,
    n_rounds: int,
    n_batch: int,
    ga_steps: int,
    lr: float,
    alpha: float,
    fd_eps: float,
    jacobian: str,
    gp_iterations: int,
    censor: tuple[nn.Module, float, int] | None = None,
    evaluate: Evaluate | None = None,
) -> tuple[pd.DataFrame, int]:
    """One BO run of ``n_rounds`` x ``n_batch`` candidates; the candidate table and singular-G count.

    ``decoder`` decodes candidates (eval mode); ``score_decoder`` is the decoder the penalties read
    (decoder_mode, dtype). ``censor`` = (decoder, threshold, n_models): a step is zeroed for points whose
    MC-dropout uncertainty exceeds the threshold (the UC baseline of Notin et al.). ``evaluate`` is
    the black box (default: the expressions task).
    """
    from botorch.acquisition.logei import qLogExpectedImprovement

    dtype = torch.float64
    x = torch.as_tensor(z_init, dtype=dtype)
    y_mean, y_std = float(y_init.mean()), float(y_init.std()) or 1.0
    y = torch.as_tensor((y_init - y_mean) / y_std, dtype=dtype)
    hyper = fit_surrogate(x, y, gp_iterations)
    rows, singular_total, evaluation = [], 0, 0
    for round_ in range(n_rounds):
        model = surrogate(x, y, hyper)
        acq = qLogExpectedImprovement(model, best_f=float(y.max()))

        def acquisition(z: torch.Tensor, acq=acq) -> torch.Tensor:
            return acq(z[:, None, :])

        start = x[rng.choice(len(x), size=min(n_batch, len(x)), replace=False)]
        penalty, singular = make_penalty(penalty_name, score_decoder, start, fd_eps, jacobian)
        singular_total += singular
        z = start.clone()
        for _ in range(ga_steps):
            moved = ascent_step(z, acquisition, penalty, alpha, lr)
            if censor is not None:
                uc_decoder, threshold, n_models = censor
                keep = baselines.decoder_uncertainty(uc_decoder, moved, n_models) <= threshold
                moved = torch.where(keep[:, None], moved, z)
            z = moved
        tokens = decode_argmax(decoder, z)
        new_x, new_y = [], []
        for i, row in enumerate(tokens):
            expression, valid, value = (evaluate or evaluate_expression)(row)
            evaluation += 1
            rows.append(
                {
                    "round": round_,
                    "candidate": i,
                    "evaluation": evaluation,
                    "expression": expression,
                    "valid": valid,
                    "objective": value,
                }
            )
            if valid:
                new_x.append(z[i])
                new_y.append((value - y_mean) / y_std)
        if new_x:
            x = torch.cat([x, torch.stack(new_x)])
            y = torch.cat([y, torch.as_tensor(new_y, dtype=dtype)])
    return pd.DataFrame(rows), singular_total


@dataclass(frozen=True)
class TurboSettings:
    """TuRBO's tolerances and length bounds (official les/opt/turbo.py; Eriksson et al. 2019).

    Lengths are in units of the global box [-z_bound, z_bound]^d mapped to the unit cube, as the
    official code normalises z with z_bounds before it builds the region.
    """

    initial_length: float = 0.8
    length_min: float = 0.5**7
    length_max: float = 1.6
    success_tolerance: int = 10
    failure_tolerance: int = 3


@dataclass(frozen=True)
class TrustRegion:
    """TuRBO's state: side length, consecutive successes / failures, best value, restarts so far."""

    length: float
    success: int = 0
    failure: int = 0
    best: float = -math.inf
    restarts: int = 0


def failure_tolerance(dim: int, batch: int) -> int:
    """The official default ceil(max(4 / batch, d / batch)) (TurboState.__post_init__)."""
    return math.ceil(max(4.0 / batch, float(dim) / batch))


def update_trust_region(
    state: TrustRegion, values: np.ndarray, settings: TurboSettings
) -> TrustRegion:
    """The official update_state after a round with valid objective ``values``; then a restart.

    A success is a new best by more than 1e-3 |best|; ``success_tolerance`` successes in a row double
    the length (capped at length_max), ``failure_tolerance`` failures in a row halve it. When the length
    falls below length_min the region restarts at the initial length with fresh counters (TuRBO's
    restart; the official code sets restart_triggered and never acts on it). The best value is kept:
    the data stay, so the region restarts around the same best point.
    """
    top = float(np.max(values))
    success, failure = state.success, state.failure
    if top > state.best + 1e-3 * abs(state.best):
        success, failure = success + 1, 0
    else:
        success, failure = 0, failure + 1
    length = state.length
    if success == settings.success_tolerance:
        length, success = min(2.0 * length, settings.length_max), 0
    elif failure == settings.failure_tolerance:
        length, failure = length / 2.0, 0
    best = max(state.best, top)
    if length < settings.length_min:
        return TrustRegion(settings.initial_length, 0, 0, best, state.restarts + 1)
    return TrustRegion(length, success, failure, best, state.restarts)


def trust_region_box(
    center: torch.Tensor, lengthscale: torch.Tensor, length: float, z_bound: float
) -> torch.Tensor:
    """The (2, d) box around ``center``: side ``length`` x 2 z_bound, stretched per axis by the ARD
    lengthscales over their geometric mean (official _get_turbo_bounds), clamped to the global box."""
    weights = lengthscale / lengthscale.mean()
    weights = weights / torch.prod(weights.pow(1.0 / len(weights)))
    center = center.clamp(-z_bound, z_bound)
    half = weights * length * z_bound
    return torch.stack([center - half, center + half]).clamp(-z_bound, z_bound)


def ard_lengthscales(model, dim: int) -> torch.Tensor:
    """The surrogate kernel's lengthscale per latent axis (one shared value repeated when not ARD)."""
    kernel = getattr(model.covar_module, "base_kernel", model.covar_module)
    return kernel.lengthscale.detach().reshape(-1).expand(dim).clone()


def optimise_bounded_lbfgs(
    decoder: nn.Module,
    z_init: np.ndarray,
    y_init: np.ndarray,
    n_rounds: int,
    n_batch: int,
    z_bound: float,
    gp_iterations: int,
    seed: int,
    turbo: TurboSettings | None = None,
    evaluate: Evaluate | None = None,
) -> pd.DataFrame:
    """The bounded L-BFGS baseline: botorch optimize_acqf (multi-start L-BFGS-B) on q-batch qLogEI
    inside the box [-z_bound, z_bound]^d, with the same surrogate, rounds and decoding.

    With ``turbo`` the box of each round is the TuRBO trust region around the best point so far
    (the official lbfgs optimiser with use_turbo), and the region is updated from each round's valid
    values; the table then also has the round's region length and restart count.
    """
    from botorch.acquisition.logei import qLogExpectedImprovement
    from botorch.optim import optimize_acqf

    dtype = torch.float64
    x = torch.as_tensor(z_init, dtype=dtype)
    y_mean, y_std = float(y_init.mean()), float(y_init.std()) or 1.0
    y = torch.as_tensor((y_init - y_mean) / y_std, dtype=dtype)
    hyper = fit_surrogate(x, y, gp_iterations)
    d = x.shape[1]
    bounds = torch.stack([torch.full((d,), -z_bound), torch.full((d,), z_bound)]).to(dtype)
    region = None if turbo is None else TrustRegion(turbo.initial_length, best=float(y_init.max()))
    rows, evaluation = [], 0
    for round_ in range(n_rounds):
        model = surrogate(x, y, hyper)
        acq = qLogExpectedImprovement(model, best_f=float(y.max()))
        if region is not None:
            bounds = trust_region_box(
                x[int(y.argmax())], ard_lengthscales(model, d).to(dtype), region.length, z_bound
            )
        torch.manual_seed(seed + round_)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            z, _ = optimize_acqf(acq, bounds, q=n_batch, num_restarts=4, raw_samples=64)
        new_x, new_y = [], []
        for i, row in enumerate(decode_argmax(decoder, z)):
            expression, valid, value = (evaluate or evaluate_expression)(row)
            evaluation += 1
            rows.append(
                {"round": round_, "candidate": i, "evaluation": evaluation,
                 "expression": expression, "valid": valid, "objective": value}
            )  # fmt: skip
            if region is not None:
                rows[-1].update(tr_length=region.length, tr_restarts=region.restarts)
            if valid:
                new_x.append(z[i])
                new_y.append(value)
        if new_x:
            x = torch.cat([x, torch.stack(new_x)])
            y = torch.cat([y, (torch.as_tensor(new_y, dtype=dtype) - y_mean) / y_std])
            if region is not None:
                # as the official loop: a round without a valid value leaves the region as it is
                region = update_trust_region(region, np.asarray(new_y), turbo)
    return pd.DataFrame(rows)
