"""The Latent Exploration Score (LES) and its polarity variant (OmerRonen/les, les/utils/les.py).

The decoder g is read as a continuous piecewise-affine map: near z, g(z) = A z + b with A the local
slope. Each position's logits u_t go through phi(u_t) = (softmax(u_t), 1 / sum_v exp(u_tv)) in R^{V+1}
(the normaliser makes phi injective). With S_t the Jacobian of phi at u_t and A_t the rows of A that
belong to position t, J = S A and

    G(z) = J^T J = sum_t A_t^T S_t^T S_t A_t,        LES(z) = -1/2 log det G(z).

A is a constant of the region: it is computed without gradient (forward differences with fd_eps, or
an exact forward-mode Jacobian), and the gradient of LES flows only through S(u(z)). The prior term
log p(z) is not part of LES (it is the separate Prior baseline).
"""

from __future__ import annotations

import copy
import logging
from dataclasses import dataclass
from typing import Literal

import numpy as np
import torch
from torch import nn

logger = logging.getLogger(__name__)

DecoderMode = Literal["eval", "train"]
JacobianMethod = Literal["fd", "exact"]


def decoder_view(decoder: nn.Module, mode: DecoderMode, dtype: torch.dtype) -> nn.Module:
    """A copy of the decoder in ``mode`` and ``dtype``, its weights frozen.

    ``eval`` gives the score as defined; ``train`` keeps dropout active while scoring, as the
    official LES class does (it calls ``.train()`` on the decoder), so A mixes in dropout noise / fd_eps.
    """
    view = copy.deepcopy(decoder).to(dtype)
    view.train(mode == "train")
    for parameter in view.parameters():
        parameter.requires_grad_(False)
    return view


def check_latents(z: torch.Tensor, latent_dim: int) -> None:
    """A latent batch must be (batch, latent_dim)."""
    if z.ndim != 2 or z.shape[1] != latent_dim:
        raise ValueError(
            f"latents must have shape (batch, {latent_dim}) for this decoder, got {tuple(z.shape)}"
        )


@torch.no_grad()
def local_slope(
    decoder: nn.Module, z: torch.Tensor, fd_eps: float = 1e-4, method: JacobianMethod = "fd"
) -> torch.Tensor:
    """The slope A of the decoder's affine piece at z, shape (batch, L, V, d), detached.

    ``fd``: forward differences (g(z + eps e_i) - g(z)) / eps, all d + 1 passes in one batch (the
    official net_derivative); ``exact``: forward-mode derivatives along each axis (torch.func.jvp).
    """
    if fd_eps <= 0:
        raise ValueError(f"fd_eps must be > 0, got {fd_eps}")
    batch, d = z.shape
    if method == "exact":
        columns = []
        for i in range(d):
            tangent = torch.zeros_like(z)
            tangent[:, i] = 1.0
            columns.append(torch.func.jvp(decoder, (z,), (tangent,))[1])
        return torch.stack(columns, dim=-1)
    shifted = z[:, None, :] + fd_eps * torch.eye(d, dtype=z.dtype, device=z.device)[None]
    points = torch.cat([z[:, None, :], shifted], dim=1).reshape(batch * (d + 1), d)
    logits = decoder(points).reshape(batch, d + 1, *decoder(z[:1]).shape[1:])
    return ((logits[:, 1:] - logits[:, :1]) / fd_eps).permute(0, 2, 3, 1)


def softmax_blocks(logits: torch.Tensor) -> torch.Tensor:
    """S_t for every position, shape (batch, L, V + 1, V).

    Rows 1..V: the softmax Jacobian diag(s_t) - s_t s_t^T; row V + 1: the derivative of the inverse
    normaliser 1 / sum_v exp(u_tv), i.e. -exp(u_t) / (sum_v exp(u_tv))^2 = -s_t / sum_v exp(u_tv).
    """
    s = torch.softmax(logits, dim=-1)
    jacobian = torch.diag_embed(s) - s[..., :, None] * s[..., None, :]
    inverse_normaliser = torch.exp(-torch.logsumexp(logits, dim=-1, keepdim=True))
    return torch.cat([jacobian, (-s * inverse_normaliser)[..., None, :]], dim=-2)


def pullback_metric(blocks: torch.Tensor, slope: torch.Tensor) -> torch.Tensor:
    """G = sum_t A_t^T S_t^T S_t A_t, shape (batch, d, d)."""
    jacobian = torch.einsum("blrv,blvd->blrd", blocks, slope)
    return torch.einsum("blrd,blre->bde", jacobian, jacobian)


def log_volume_score(metric: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """-1/2 log det G by batched slogdet, and a mask of the G that are not positive definite.

    A singular (or numerically indefinite) G has no finite score: its value is NaN and it is flagged.
    """
    sign, logabsdet = torch.linalg.slogdet(metric)
    singular = (sign <= 0) | ~torch.isfinite(logabsdet)
    score = torch.where(singular, torch.full_like(logabsdet, float("nan")), -0.5 * logabsdet)
    return score, singular


@dataclass(frozen=True)
class LESResult:
    """Scores of a batch and which of them had a singular G."""

    values: torch.Tensor
    singular: torch.Tensor


def les(
    decoder: nn.Module,
    z: torch.Tensor,
    slope: torch.Tensor | None = None,
    fd_eps: float = 1e-4,
    method: JacobianMethod = "fd",
) -> LESResult:
    """LES(z) = -1/2 log det(sum_t A_t^T S_t^T S_t A_t), differentiable in z through S only.

    ``decoder`` maps (batch, d) to logits (batch, L, V) (use :func:`decoder_view` for mode and dtype);
    ``slope`` reuses an A computed earlier (the optimiser keeps the A of its start point).
    """
    check_latents(z, getattr(decoder, "latent_dim", z.shape[1]))
    if slope is None:
        slope = local_slope(decoder, z.detach(), fd_eps, method)
    values, singular = log_volume_score(pullback_metric(softmax_blocks(decoder(z)), slope.detach()))
    return LESResult(values, singular)


def polarity(slope: torch.Tensor) -> LESResult:
    """The polarity variant (official ``polarity=True``): J = A, i.e. -1/2 log det(A^T A)."""
    flat = slope.reshape(slope.shape[0], -1, slope.shape[-1])
    values, singular = log_volume_score(flat.transpose(1, 2) @ flat)
    return LESResult(values, singular)


def les_reference(logits: torch.Tensor, slope: torch.Tensor) -> np.ndarray:
    """LES by the definition, one sample and one position at a time in float64 (for tests and the
    benchmark): block-diagonal S of shape (L(V+1), LV) built by hand, J = S A, G = J^T J, and
    -1/2 log det G from the eigenvalues of G."""
    logits = logits.detach().double().numpy()
    slope = slope.detach().double().numpy()
    batch, length, vocab = logits.shape
    out = np.empty(batch)
    for b in range(batch):
        big = np.zeros((length * (vocab + 1), length * vocab))
        for t in range(length):
            u = logits[b, t]
            e = np.exp(u - u.max())
            s = e / e.sum()
            rows = slice(t * (vocab + 1), (t + 1) * (vocab + 1))
            cols = slice(t * vocab, (t + 1) * vocab)
            block = np.vstack([np.diag(s) - np.outer(s, s), -np.exp(u) / np.exp(u).sum() ** 2])
            big[rows, cols] = block
        full_slope = slope[b].reshape(length * vocab, -1)
        jacobian = big @ full_slope
        eigenvalues = np.linalg.eigvalsh(jacobian.T @ jacobian)
        out[b] = -0.5 * np.log(eigenvalues).sum()
    return out
