"""Empirical risk minimisation over F by full-batch projected Adam (spec: Losses).

Every loss and class is trained by the same optimiser (Adam, lr_t = lr / sqrt(1 + t / 100), projection onto F
after every step) so that differences between losses come from the loss, not the optimiser. The decoupled
class minimises sum_j (1/n) sum_i l(y_ij f_j(x_i)), which has the same minimiser as the label-averaged risk
and splits into c independent per-label problems (Adam is per coordinate, the projection per column): a fit
on c_max labels gives, column by column, exactly the fit on any subset of them.
"""

from __future__ import annotations

import numpy as np

from . import hypothesis
from .losses import get_loss, margins


def lr_schedule(lr: float, t: int) -> float:
    """lr / sqrt(1 + t / 100)."""
    return lr / np.sqrt(1.0 + t / 100.0)


def risk_gradient(
    params: dict, x: np.ndarray, y: np.ndarray, loss: str, per_label: bool, weights=None
) -> dict:
    """Gradient of the surrogate risk; ``per_label`` normalises by n per label instead of by n c.

    ``weights`` (shape (n, 1) or (n, c)) multiplies each term, e.g. Rademacher signs for the ascent.
    """
    loss_fn = get_loss(loss)
    t = margins(hypothesis.scores(params, x), y)
    n, c = y.shape
    g_scores = y * loss_fn.derivative(t) * np.float32(1.0 / (n if per_label else n * c))
    if weights is not None:
        g_scores = g_scores * weights
    return hypothesis.score_gradients(params, x, g_scores)


def adam_step(
    params: dict, grads: dict, state: dict, lr: float, sign: float = 1.0
) -> dict[str, np.ndarray]:
    """One Adam update (beta1 = 0.9, beta2 = 0.999, eps = 1e-8) of every array; sign = -1 ascends."""
    b1, b2, eps = 0.9, 0.999, 1e-8
    state["t"] = state.get("t", 0) + 1
    t = state["t"]
    out = {}
    for key, value in params.items():
        g = grads[key] * sign
        m = state.setdefault(f"m_{key}", np.zeros_like(value))
        v = state.setdefault(f"v_{key}", np.zeros_like(value))
        m *= b1
        m += (1 - b1) * g
        v *= b2
        v += (1 - b2) * g * g
        m_hat = m / (1 - b1**t)
        v_hat = v / (1 - b2**t)
        out[key] = value - lr * m_hat / (np.sqrt(v_hat) + eps)
    return out


def fit(
    x: np.ndarray,
    y: np.ndarray,
    loss: str,
    kind: str,
    lam: np.ndarray | float,
    rank: int,
    steps: int,
    lr: float,
    rng: np.random.Generator,
) -> dict[str, np.ndarray]:
    """argmin over F of the surrogate risk, by ``steps`` projected Adam steps from hypothesis.init_params."""
    # float32 halves the cost of the elementwise loss terms that dominate; the risks are measured in float64
    x, y = np.asarray(x, np.float32), np.asarray(y, np.float32)
    params = hypothesis.init_params(kind, x.shape[1], y.shape[1], rank, rng)
    params = {k: v.astype(np.float32) for k, v in params.items()}
    state: dict = {}
    per_label = kind == "linear"
    for t in range(steps):
        grads = risk_gradient(params, x, y, loss, per_label)
        params = hypothesis.project(adam_step(params, grads, state, lr_schedule(lr, t)), lam)
    return params
