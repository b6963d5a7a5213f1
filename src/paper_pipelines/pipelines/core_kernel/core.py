"""Core kernels: m small (s x s) kernels on which an MKC algorithm returns ~ the full-kernel weights.

Three constructions, chosen by the ``core.method`` parameter:

- ``projection`` (default, our reconstruction of the paper's SVD-based core kernel): U_s = top-s left
  singular vectors of the concatenation [K_1, ..., K_m] (= top-s eigenvectors of sum_p K_p^2), and
  K~_p = U_s^T K_p U_s. MKKM additionally keeps the exact traces tr(K_p).
- ``uniform`` (Liang et al. ICML 2023 baseline): s points without replacement, K~_p = K_p[S, S].
- ``leverage``: s points drawn with replacement with p_i = beta ||U_r[i]||^2 / r + (1 - beta) / n,
  K~_p = D K_p[S, S] D with D = diag(1 / sqrt(s p_i)).

Kernels come either as an exact stack (m, n, n) or as feature maps (m, n, r) with K_p = F_p F_p^T.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

logger = logging.getLogger(__name__)

CORE_METHODS = ("projection", "uniform", "leverage")


@dataclass
class CoreKernels:
    """A core kernel set: the small kernels plus what the large-scale extension needs."""

    method: str
    kernels: np.ndarray  # (m, s, s)
    traces: np.ndarray | None  # exact full traces (projection + MKKM), else None
    basis: np.ndarray | None = None  # U_s (n, s) for projection
    indices: np.ndarray | None = None  # sampled rows for uniform / leverage
    scales: np.ndarray | None = None  # D for leverage (ones for uniform)


def kernel_matvec(kernels: np.ndarray, x: np.ndarray, features: bool) -> np.ndarray:
    """[K_1 ... K_m]-style products: returns (m, n, b) with K_p @ x for every p."""
    if features:
        return kernels @ (np.swapaxes(kernels, 1, 2) @ x)
    return kernels @ x


def concatenated_left_singular_vectors(
    kernels: np.ndarray,
    s: int,
    features: bool = False,
    solver: str = "randomized",
    oversample: int = 10,
    power_iters: int = 3,
    seed: int = 0,
) -> np.ndarray:
    """Top-s left singular vectors U_s of A = [K_1, ..., K_m] (n x nm), i.e. eigenvectors of sum_p K_p^2.

    ``exact``: dense eigendecomposition of A A^T (O(m n^3), small n only). ``randomized``: subspace
    iteration on A A^T with ``power_iters`` steps (Halko et al. 2011), O(m n^2 s) per step. With
    feature maps, A A^T = sum_p F_p F_p^T F_p F_p^T and the exact route works in the (m r)-dim space.
    """
    n = kernels.shape[1]
    if s > n:
        raise ValueError(
            f"core size s={s} is larger than the number of points n={n}; choose s <= n"
        )
    if features:
        # A = [F_1 G_1, ...] with G_p = F_p^T F_p^(...): use B = [F_1 (F_1^T F_1)^{1/2}, ...] which has
        # the same Gram B B^T = sum_p (F_p F_p^T)^2 = A A^T and only m*r columns.
        blocks = []
        for fp in kernels:
            vals, vecs = np.linalg.eigh(fp.T @ fp)
            blocks.append(fp @ (vecs * np.sqrt(np.maximum(vals, 0.0))) @ vecs.T)
        b = np.concatenate(blocks, axis=1)
        vals, vecs = np.linalg.eigh(b.T @ b)
        order = np.argsort(vals)[::-1][:s]
        return b @ (vecs[:, order] / np.sqrt(np.maximum(vals[order], 1e-300)))
    if solver == "exact":
        gram = sum(kp @ kp for kp in kernels)
        vals, vecs = np.linalg.eigh(0.5 * (gram + gram.T))
        return vecs[:, np.argsort(vals)[::-1][:s]]
    if solver != "randomized":
        raise ValueError(f"core.solver must be 'exact' or 'randomized', got {solver!r}")
    rng = np.random.default_rng(seed)
    dtype = kernels.dtype
    q = np.linalg.qr(rng.standard_normal((n, min(n, s + oversample))))[0].astype(dtype)
    for _ in range(power_iters):
        # One application of A A^T = sum_p K_p (K_p q).
        kq = kernel_matvec(kernels, q, False)
        q = np.linalg.qr((kernels @ kq).sum(axis=0))[0].astype(dtype)
    # Rayleigh-Ritz on the subspace for the final s vectors.
    kq = kernel_matvec(kernels, q, False)
    small = sum(kqp.T.astype(np.float64) @ kqp for kqp in kq)
    vals, vecs = np.linalg.eigh(0.5 * (small + small.T))
    basis = q.astype(np.float64) @ vecs[:, np.argsort(vals)[::-1][:s]]
    return np.linalg.qr(basis)[0]


def kernel_traces(kernels: np.ndarray, features: bool) -> np.ndarray:
    """tr(K_p) for every p (n after knorm)."""
    if features:
        return np.einsum("pnr,pnr->p", kernels, kernels)
    return np.einsum("pii->p", kernels)


def projection_core(
    kernels: np.ndarray, s: int, features: bool = False, solver: str = "randomized", **svd_args
) -> CoreKernels:
    """SVD-based core kernel: K~_p = U_s^T K_p U_s, plus the exact traces tr(K_p) for MKKM."""
    basis = concatenated_left_singular_vectors(kernels, s, features, solver, **svd_args)
    if features:
        proj = basis.T @ kernels
        core = proj @ np.swapaxes(proj, 1, 2)
    else:
        cast = basis.astype(kernels.dtype)
        core = (cast.T @ (kernels @ cast)).astype(np.float64)
    core = 0.5 * (core + np.swapaxes(core, 1, 2))
    return CoreKernels("projection", core, kernel_traces(kernels, features), basis=basis)


def submatrices(
    kernels: np.ndarray, rows: np.ndarray, cols: np.ndarray, features: bool
) -> np.ndarray:
    """K_p[rows, cols] for every p, from an exact stack or from feature maps."""
    if features:
        return kernels[:, rows] @ np.swapaxes(kernels[:, cols], 1, 2)
    return kernels[:, rows][:, :, cols]


def uniform_core(
    kernels: np.ndarray, s: int, rng: np.random.Generator, features: bool = False
) -> CoreKernels:
    """ICML-2023 baseline: s points uniformly without replacement, K~_p = K_p[S, S]."""
    n = kernels.shape[1]
    if s > n:
        raise ValueError(
            f"core size s={s} is larger than the number of points n={n}; choose s <= n"
        )
    idx = np.sort(rng.choice(n, s, replace=False))
    return CoreKernels(
        "uniform", submatrices(kernels, idx, idx, features), None, indices=idx, scales=np.ones(s)
    )


def leverage_probabilities(basis: np.ndarray, beta: float) -> np.ndarray:
    """p_i = beta ||U_r[i, :]||^2 / r + (1 - beta) / n (rank-r leverage scores mixed with uniform)."""
    n, r = basis.shape
    return beta * np.sum(basis**2, axis=1) / r + (1.0 - beta) / n


def leverage_core(
    kernels: np.ndarray,
    s: int,
    rank: int,
    beta: float,
    rng: np.random.Generator,
    features: bool = False,
    basis: np.ndarray | None = None,
) -> CoreKernels:
    """Leverage-score sampling with replacement, K~_p = D K_p[S, S] D, D = diag(1 / sqrt(s p_i))."""
    n = kernels.shape[1]
    if s > n:
        raise ValueError(
            f"core size s={s} is larger than the number of points n={n}; choose s <= n"
        )
    if basis is None:
        basis = concatenated_left_singular_vectors(kernels, rank, features)
    probs = leverage_probabilities(basis[:, :rank], beta)
    probs = probs / probs.sum()
    idx = np.sort(rng.choice(n, s, replace=True, p=probs))
    scales = 1.0 / np.sqrt(s * probs[idx])
    core = submatrices(kernels, idx, idx, features) * scales[None, :, None] * scales[None, None, :]
    return CoreKernels("leverage", core, None, indices=idx, scales=scales)


def build_core(
    method: str,
    kernels: np.ndarray,
    s: int,
    rng: np.random.Generator,
    features: bool = False,
    rank: int = 10,
    mix_beta: float = 0.5,
    solver: str = "randomized",
    power_iters: int = 3,
    basis: np.ndarray | None = None,
) -> CoreKernels:
    """Dispatch on ``core.method``; ``basis`` (top singular vectors) may be shared between calls."""
    if method == "projection":
        return projection_core(kernels, s, features, solver, power_iters=power_iters)
    if method == "uniform":
        return uniform_core(kernels, s, rng, features)
    if method == "leverage":
        return leverage_core(kernels, s, rank, mix_beta, rng, features, basis)
    raise ValueError(f"unknown core method {method!r}; allowed: {', '.join(CORE_METHODS)}")
