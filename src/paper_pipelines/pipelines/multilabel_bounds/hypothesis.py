"""The norm-constrained vector-valued linear classes F (spec: Setting, Models (i) and (ii)).

decoupled: f_j(x) = <w_j, x> with every ||w_j|| <= Lambda_j (columns of W, shape (d, c)).
lowrank:   f(x) = B^T A^T x, A of shape (d, r) with ||A||_F <= sqrt(r), B of shape (r, c) with ||b_j|| <= Lambda,
           so all labels share the learned r-dimensional representation A^T x (the coupled class).
mlp:       f(x) = B^T tanh(V^T x), V of shape (d, h) with every hidden unit ||v_k|| <= 1 (max-norm, hence
           ||V||_F <= sqrt(h)), B of shape (h, c) with ||b_j|| <= Lambda: the spec's optional
           shared-representation network (model (iii)), one hidden layer shared by all labels. tanh is
           1-Lipschitz with tanh(0) = 0, so ||tanh(V^T x)|| <= sqrt(h) ||x|| and |f_j(x)| <= Lambda sqrt(h)
           ||x||, the low-rank class's bound with r = h; it is smooth, so the scores have no kinks.
Parameters are a dict of arrays: {"W"}, {"A", "B"} or {"V", "B"}.
"""

from __future__ import annotations

import numpy as np

KINDS = ("linear", "lowrank", "mlp")


def scores(params: dict[str, np.ndarray], x: np.ndarray) -> np.ndarray:
    """f(x_i) for every row of x: an (n, c) score matrix."""
    if "W" in params:
        return x @ params["W"]
    if "V" in params:
        return np.tanh(x @ params["V"]) @ params["B"]
    return (x @ params["A"]) @ params["B"]


def project_columns(m: np.ndarray, radius: np.ndarray | float) -> np.ndarray:
    """Euclidean projection of every column of m onto the ball of its radius."""
    norms = np.linalg.norm(m, axis=0)
    radius = np.broadcast_to(np.asarray(radius, dtype=float), norms.shape)
    factor = np.where(norms > radius, radius / np.maximum(norms, 1e-300), 1.0)
    return m * factor.astype(m.dtype)


def project_frobenius(m: np.ndarray, radius: float) -> np.ndarray:
    """Euclidean projection onto {||m||_F <= radius}."""
    norm = float(np.linalg.norm(m))
    return m if norm <= radius else m * (radius / norm)


def project(params: dict[str, np.ndarray], lam: np.ndarray | float) -> dict[str, np.ndarray]:
    """Back onto F after a step: per-label balls (decoupled), ||A||_F <= sqrt(r) and ||b_j|| <= Lambda
    (low-rank), or ||v_k|| <= 1 and ||b_j|| <= Lambda (mlp)."""
    if "W" in params:
        return {"W": project_columns(params["W"], lam)}
    if "V" in params:
        return {"V": project_columns(params["V"], 1.0), "B": project_columns(params["B"], lam)}
    rank = params["A"].shape[1]
    return {
        "A": project_frobenius(params["A"], float(np.sqrt(rank))),
        "B": project_columns(params["B"], lam),
    }


def score_gradients(
    params: dict[str, np.ndarray], x: np.ndarray, g_scores: np.ndarray
) -> dict[str, np.ndarray]:
    """Chain rule from dL/df (an (n, c) matrix) to the parameters of the class."""
    if "W" in params:
        return {"W": x.T @ g_scores}
    if "V" in params:
        hidden = np.tanh(x @ params["V"])
        # d tanh(u) / du = 1 - tanh(u)^2
        back = (g_scores @ params["B"].T) * (1.0 - hidden * hidden)
        return {"V": x.T @ back, "B": hidden.T @ g_scores}
    hidden = x @ params["A"]
    return {"A": x.T @ (g_scores @ params["B"].T), "B": hidden.T @ g_scores}


def init_params(
    kind: str, d: int, c: int, rank: int, rng: np.random.Generator, lam: float = 0.0
) -> dict[str, np.ndarray]:
    """Starting point: W = 0 (decoupled); A with orthonormal columns (||A||_F = sqrt(r)) and B = 0 (lowrank);
    V with random unit columns (h = ``rank`` hidden units; orthonormal is impossible when h > d) and B = 0 (mlp).

    ``lam > 0`` draws a random point of F instead (directions uniform, per-label norms lam), for the
    restarts of the Rademacher ascent.
    """
    if kind == "linear":
        if lam <= 0:
            return {"W": np.zeros((d, c))}
        w = rng.standard_normal((d, c))
        return {"W": project_columns(w / np.linalg.norm(w, axis=0) * lam, lam)}
    if kind == "mlp":
        v = rng.standard_normal((d, rank))
        v /= np.linalg.norm(v, axis=0)
        if lam <= 0:
            return {"V": v, "B": np.zeros((rank, c))}
        b = rng.standard_normal((rank, c))
        return {"V": v, "B": b / np.linalg.norm(b, axis=0) * lam}
    if kind != "lowrank":
        raise ValueError(f"unknown model class {kind!r}; choose one of {', '.join(KINDS)}")
    a, _ = np.linalg.qr(rng.standard_normal((d, rank)))
    a = a[:, :rank]
    if lam <= 0:
        return {"A": a, "B": np.zeros((rank, c))}
    b = rng.standard_normal((rank, c))
    return {"A": a, "B": b / np.linalg.norm(b, axis=0) * lam}
