"""Temporal State Aggregator: a GRU over the fused state, fed an attention summary of the last w
states (HTGN's hyperbolic temporal attention, HTA, taken in the tangent space):

s~_v^{t-1} = sum_i a_i s_v^{t-i},  a = softmax_i(r^T tanh(Q s_v^{t-i})),  i = 1..w
s_v^t = GRU(u_v^t, s~_v^{t-1}).
"""

from __future__ import annotations

import torch
from torch import nn


def attention_weights(history: torch.Tensor, q: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """a = softmax over the window of r^T tanh(Q s); history [w, N, d] -> weights [w, N]."""
    return torch.softmax(torch.tanh(history @ q.T) @ r, dim=0)


def window_summary(history: torch.Tensor, q: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
    """s~ = sum_i a_i s^{t-i}: the attention average of the window, [w, N, d] -> [N, d]."""
    return (attention_weights(history, q, r).unsqueeze(-1) * history).sum(0)


class TemporalStateAggregator(nn.Module):
    """GRU cell over u^t with the windowed attention state (or the last state alone when off)."""

    def __init__(self, dim: int, window: int, use_attention: bool = True):
        super().__init__()
        self.window, self.use_attention = window, use_attention
        self.gru = nn.GRUCell(dim, dim)
        self.q = nn.Parameter(torch.empty(dim, dim))
        nn.init.xavier_uniform_(self.q)
        self.r = nn.Parameter(torch.randn(dim) / dim**0.5)

    def forward(self, u: torch.Tensor, history: list[torch.Tensor]) -> torch.Tensor:
        """s^t from the fused u^t [N, d] and the earlier states (oldest first; empty at t = 0)."""
        if not history:
            prev = torch.zeros_like(u)
        elif self.use_attention:
            prev = window_summary(torch.stack(history[-self.window :]), self.q, self.r)
        else:
            prev = history[-1]
        return self.gru(u, prev)
