"""Negative-prompt environment inference (NeGo, Sec. "negative prompt environment inference"; spec step 2).

A bank of K learnable prompts is read by attention from a graph summary; the read-out is the
environment embedding e_G. "Negative" inference: e_G is trained to carry no label information (an
adversarial label head behind gradient reversal, or maximal entropy of that head's prediction), while
a coverage term ties causal part + environment back to the graph summary and a diversity term keeps
the prompts apart.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class _GradReverse(torch.autograd.Function):
    """Identity forward; gradient multiplied by -scale backward (Ganin & Lempitsky, 2015)."""

    @staticmethod
    def forward(ctx, x: Tensor, scale: float) -> Tensor:
        ctx.scale = scale
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad: Tensor) -> tuple[Tensor, None]:
        return -ctx.scale * grad, None


def grad_reverse(x: Tensor, scale: float = 1.0) -> Tensor:
    """GRL(x): forward x, backward -scale * dL/dx (the head learns y, the prompts learn to defeat it)."""
    return _GradReverse.apply(x, scale)


def prompt_attention(query: Tensor, prompts: Tensor) -> Tensor:
    """Eq. (spec 2): a = softmax(q P^T / sqrt(d)) over the K prompts; q = W_q s_G, shapes (B, d), (K, d)."""
    return torch.softmax(query @ prompts.T / math.sqrt(prompts.shape[1]), dim=-1)


class PromptBank(nn.Module):
    """e_G = a P (+ W_o s_G when ``residual``), a = softmax((W_q s_G) P^T / sqrt d)."""

    def __init__(self, dim: int, num_prompts: int, residual: bool = False) -> None:
        super().__init__()
        self.prompts = nn.Parameter(torch.randn(num_prompts, dim) / math.sqrt(dim))
        self.query = nn.Linear(dim, dim, bias=False)
        self.out = nn.Linear(dim, dim, bias=False) if residual else None

    def forward(self, summary: Tensor) -> tuple[Tensor, Tensor]:
        """(e_G, a) for graph summaries s_G of shape (B, d)."""
        attn = prompt_attention(self.query(summary), self.prompts)
        env = attn @ self.prompts
        if self.out is not None:
            env = env + self.out(summary)
        return env, attn


def adversarial_negative_loss(head: nn.Module, env: Tensor, y: Tensor) -> Tensor:
    """L_neg = CE(g_e(GRL(e_G)), y): minimised by the head, maximised through e_G by the prompts."""
    return F.cross_entropy(head(grad_reverse(env)), y)


def prediction_entropy(logits: Tensor) -> Tensor:
    """Mean Shannon entropy (nats) of softmax(logits) over the batch."""
    logp = F.log_softmax(logits, dim=-1)
    return -(logp.exp() * logp).sum(-1).mean()


def entropy_negative_loss(head: nn.Module, env: Tensor, y: Tensor) -> Tensor:
    """Entropy mode: the head fits y on a detached e_G; e_G maximises the entropy of a frozen head.

    L_neg = CE(g_e(sg(e_G)), y) - H(softmax(g_e^frozen(e_G))).
    """
    fit = F.cross_entropy(head(env.detach()), y)
    frozen = {k: v.detach() for k, v in head.named_parameters()}
    logits = torch.func.functional_call(head, frozen, (env,))
    return fit - prediction_entropy(logits)


def coverage_loss(
    summary: Tensor, causal: Tensor, env: Tensor, w_c: nn.Module, w_e: nn.Module
) -> Tensor:
    """L_cov = mean_G || sg(s_G) - (W_c h_c + W_e e_G) ||^2 / d (the graph is causal part + environment)."""
    residual = summary.detach() - (w_c(causal) + w_e(env))
    return residual.pow(2).mean()


def diversity_loss(prompts: Tensor) -> Tensor:
    """L_div = || P_n P_n^T - I ||_F^2 with the prompts' rows L2-normalised."""
    unit = F.normalize(prompts, dim=-1)
    gram = unit @ unit.T
    return (gram - torch.eye(len(prompts), device=prompts.device)).pow(2).sum()
