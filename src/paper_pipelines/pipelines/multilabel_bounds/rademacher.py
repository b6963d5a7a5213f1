"""Empirical Rademacher quantities the bounds are built from (spec: operational quantities (a)-(c)).

(a) per-label hypothesis-class complexity R_hat(F_j) = (Lambda / n) E_eps ||sum_i eps_i x_i|| (Monte Carlo) and
    its Jensen bound Lambda sqrt(sum_i ||x_i||^2) / n; the flattened complexity over the n c points (x_i, j),
    (1/(n c)) E sup_W sum_ij eps_ij f_j(x_i);
(b) loss-class complexity R_hat(L o F) = E_eps sup_f (1/n) sum_i eps_i L(f(x_i), y_i), by projected gradient
    ascent over F from several random starts (a lower estimate of the sup: the max over restarts is kept);
(c) the spectral local complexity psi_hat(r) = sqrt((2/n) sum_k min(r, Lambda^2 lambda_k)) of the normalised
    Gram matrix (1/n) X X^T, and its fixed point r* = psi_hat(r*) (Bartlett, Bousquet, Mendelson 2005).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import brentq

from . import hypothesis
from .losses import get_loss
from .training import risk_gradient


def rademacher_signs(shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    return rng.choice(np.array([-1.0, 1.0]), size=shape)


def linear_ball_complexity(
    x: np.ndarray, lam: float, draws: int, rng: np.random.Generator
) -> float:
    """(a) R_hat(F_j) = (Lambda / n) E_eps ||sum_i eps_i x_i||, the sup over ||w|| <= Lambda in closed form."""
    eps = rademacher_signs((draws, x.shape[0]), rng)
    return float(lam * np.linalg.norm(eps @ x, axis=1).mean() / x.shape[0])


def linear_ball_bound(x: np.ndarray, lam: float) -> float:
    """(a) Jensen: R_hat(F_j) <= Lambda sqrt(sum_i ||x_i||^2) / n (= Lambda kappa / sqrt(n) for ||x|| = kappa)."""
    return float(lam * np.sqrt((x**2).sum()) / x.shape[0])


def flattened_decoupled(
    x: np.ndarray, c: int, lam: float, draws: int, rng: np.random.Generator
) -> float:
    """(a) (1/(n c)) E sup_W sum_ij eps_ij <w_j, x_i> = (1/(n c)) sum_j Lambda E||sum_i eps_ij x_i||.

    The sup splits over labels, so c times this equals the sum of c per-label complexities in expectation.
    """
    n = x.shape[0]
    eps = rademacher_signs((draws, n, c), rng)
    v = np.einsum("kij,id->kjd", eps, x)
    return float(lam * np.linalg.norm(v, axis=2).sum(axis=1).mean() / (n * c))


def _ascent_step(params: dict, grads: dict, step: float, lam: float) -> dict[str, np.ndarray]:
    """w + step * R g / ||g||_F for every array (R: the array's radius in F), then back onto F.

    Plain projected gradient ascent with a normalised step: a preconditioned (Adam) step followed by the
    Euclidean projection would stop where sign(g), not g, is normal to the ball, short of the sup.
    """
    out = {}
    for key, value in params.items():
        g = grads[key]
        # A: ||A||_F <= sqrt(r); V: unit columns, so ||V||_F <= sqrt(h); W, B: columns of norm <= Lambda
        radius = np.sqrt(value.shape[1]) if key in ("A", "V") else lam * np.sqrt(value.shape[1])
        out[key] = value + (step * radius / (np.linalg.norm(g) + 1e-30)) * g
    return hypothesis.project(out, lam)


def ascent_sup(
    x: np.ndarray,
    y: np.ndarray,
    weights: np.ndarray,
    loss: str,
    kind: str,
    lam: float,
    rank: int,
    steps: int,
    lr: float,
    restarts: int,
    rng: np.random.Generator,
) -> float:
    """(b) sup_f (1/(n c)) sum_ij weights_ij l(y_ij f_j(x_i)) over F by projected gradient ascent.

    ``weights`` has shape (n, 1) (one sign per example: the loss class) or (n, c) (one per point: the
    flattened class); every restart starts at a random point of F, steps shrink like lr / sqrt(1 + t / 10),
    and the best value seen is kept (a lower estimate of the sup).
    """
    loss_fn = get_loss(loss)
    x32, y32, w32 = (np.asarray(a, np.float32) for a in (x, y, weights))
    n, c = y.shape

    def objective(params: dict) -> float:
        t = y32 * hypothesis.scores(params, x32)
        return float((np.asarray(loss_fn.value(t), np.float64) * w32).sum() / (n * c))

    best = -np.inf
    for _ in range(restarts):
        params = hypothesis.init_params(kind, x.shape[1], c, rank, rng, lam=lam)
        params = {k: v.astype(np.float32) for k, v in params.items()}
        best = max(best, objective(params))
        for t in range(steps):
            grads = risk_gradient(params, x32, y32, loss, per_label=False, weights=w32)
            params = _ascent_step(params, grads, lr / np.sqrt(1.0 + t / 10.0), lam)
            best = max(best, objective(params))
    return float(best)


def loss_class_complexity(
    x: np.ndarray,
    y: np.ndarray,
    loss: str,
    kind: str,
    lam: float,
    rank: int,
    draws: int,
    restarts: int,
    steps: int,
    lr: float,
    rng: np.random.Generator,
) -> tuple[float, float]:
    """(b) E_eps sup_f (1/n) sum_i eps_i L(f(x_i), y_i): mean and standard deviation over sign draws."""
    values = [
        ascent_sup(
            x, y, rademacher_signs((x.shape[0], 1), rng), loss, kind, lam, rank, steps, lr,
            restarts, rng,
        )
        for _ in range(draws)
    ]  # fmt: skip
    return float(np.mean(values)), float(np.std(values))


def gram_eigenvalues(x: np.ndarray) -> np.ndarray:
    """Eigenvalues of (1/n) X X^T (the non-zero ones equal those of (1/n) X^T X: the smaller is used)."""
    n, d = x.shape
    gram = (x @ x.T if n <= d else x.T @ x) / n
    return np.clip(np.linalg.eigvalsh(gram), 0.0, None)


def psi_hat(r: float, eigenvalues: np.ndarray, lam: float, n: int) -> float:
    """(c) psi_hat(r) = sqrt((2/n) sum_k min(r, Lambda^2 lambda_k))."""
    return float(np.sqrt(2.0 / n * np.minimum(r, lam**2 * eigenvalues).sum()))


def fixed_point(eigenvalues: np.ndarray, lam: float, n: int) -> float:
    """(c) r* > 0 with psi_hat(r*) = r* (psi_hat is sub-root, so the positive fixed point is unique)."""
    top = max(psi_hat(np.inf, eigenvalues, lam, n), 1e-12) * 2.0
    lo = 1e-14
    if psi_hat(lo, eigenvalues, lam, n) <= lo:
        return 0.0
    return float(brentq(lambda r: psi_hat(r, eigenvalues, lam, n) - r, lo, top, xtol=1e-14))
