"""Fermi-Dirac decoder on a gate-weighted mix of squared hyperbolic and Euclidean distances:

p_uv = 1 / (exp((D_uv - r) / t) + 1),
D_uv = abar_uv d_B(exp_0 s_u, exp_0 s_v)^2 + (1 - abar_uv) |s_u - s_v|^2,  abar_uv = (alpha_u + alpha_v) / 2.
"""

from __future__ import annotations

import torch

from . import poincare


def mixed_sq_distance(
    s_u: torch.Tensor,
    s_v: torch.Tensor,
    abar: torch.Tensor,
    c: poincare.Curv,
    eps: float,
    y_u: torch.Tensor | None = None,
    y_v: torch.Tensor | None = None,
) -> torch.Tensor:
    """D = abar d_B(exp_0 s_u, exp_0 s_v)^2 + (1 - abar) |s_u - s_v|^2 for tangent states (rows);
    y_u, y_v are exp_0(s_u), exp_0(s_v) when the caller has them already."""
    d_e = ((s_u - s_v) ** 2).sum(-1)
    if bool((abar == 0).all()):  # the Euclidean model never touches the ball
        return d_e
    y_u = poincare.expmap0(s_u, c, eps) if y_u is None else y_u
    y_v = poincare.expmap0(s_v, c, eps) if y_v is None else y_v
    return abar * poincare.sq_dist(y_u, y_v, c) + (1 - abar) * d_e


def fermi_dirac_logit(distance: torch.Tensor, r: float, t: float) -> torch.Tensor:
    """The logit of the Fermi-Dirac probability: p = sigmoid((r - D) / t) = 1 / (exp((D - r)/t) + 1)."""
    return (r - distance) / t


def edge_logits(
    states: torch.Tensor,
    alpha: torch.Tensor,
    pairs: torch.Tensor,
    c: poincare.Curv,
    eps: float,
    r: float,
    t: float,
    y: torch.Tensor | None = None,
) -> torch.Tensor:
    """Fermi-Dirac logits of node pairs [E, 2] from the states [N, d] and the gate [N]; y is
    exp_0(states) when the caller has it."""
    u, v = pairs[:, 0], pairs[:, 1]
    abar = (alpha[u] + alpha[v]) / 2
    if y is None and not bool((alpha == 0).all()):
        y = poincare.expmap0(states, c, eps)
    distance = mixed_sq_distance(
        states[u], states[v], abar, c, eps,
        None if y is None else y[u], None if y is None else y[v],
    )  # fmt: skip
    return fermi_dirac_logit(distance, r, t)
