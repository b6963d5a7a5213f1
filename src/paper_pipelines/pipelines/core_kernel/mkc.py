"""The three multiple kernel clustering (MKC) algorithms, as the group's official MATLAB code defines them.

All work on a stack of preprocessed kernels (m, n, n) and use squared weights in the consensus
kernel K_gamma = sum_p gamma_p^2 K_p. They run unchanged on full kernels (n x n) and on core
kernels (s x s); that is the point of a core kernel.

- MKKM (Huang et al. 2012; ``mkkmeans_train.m``): min_{gamma, H} tr(K_gamma (I - H H^T)).
- SimpleMKKM (Liu 2022; ``simpleMKKM.m``): min_gamma max_H tr(H^T K_gamma H), reduced gradient.
- One-pass late fusion (Liu et al. 2021; ``onePassLateFusionMVCBeta.m``): max tr((YC)^T sum beta_p H_p W_p),
  with a continuous variant (late fusion alignment, H^T H = I instead of the discrete Y C).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field

import numpy as np
from scipy.linalg import eigh
from scipy.sparse.linalg import eigsh
from sklearn.cluster import KMeans

from .core import CoreKernels

logger = logging.getLogger(__name__)

# ``latefusion_discrete`` is the official one-pass late fusion (discrete Y, C) reported beside
# ``latefusion``, whose variant comes from the settings (continuous by default).
ALGORITHMS = ("mkkm", "simplemkkm", "latefusion", "latefusion_discrete")


@dataclass
class MKCResult:
    """Output of one MKC run: weights (simplex, or unit L2 norm for late fusion), embedding H, history."""

    weights: np.ndarray
    embedding: np.ndarray
    objective: list[float] = field(default_factory=list)
    n_iter: int = 0


def top_eigen(
    kernel: np.ndarray, k: int, dense_max_n: int = 200, v0: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Top-k eigenpairs of a symmetric matrix (``eigs(K, k, 'LA')``), eigenvalues in decreasing order.

    Dense LAPACK for n <= dense_max_n, ARPACK (Lanczos) above; the start vector is fixed so runs are
    deterministic (the all-ones vector is useless here: it spans the null space of a centred kernel).
    """
    n = kernel.shape[0]
    # mykernelkmeans.m symmetrises first; our kernels are exactly symmetric already, except products
    # of small matrices, so only small inputs are re-symmetrised (no n x n copies at large n).
    sym = 0.5 * (kernel + kernel.T) if n <= 5000 else kernel
    if n <= dense_max_n or k >= n - 1:
        vals, vecs = eigh(sym, subset_by_index=[n - k, n - 1])
    else:
        if v0 is None:
            v0 = np.random.default_rng(0).standard_normal(n)
        # ARPACK in float32 cannot reach 1e-10; ask for what the precision allows.
        tol = 1e-10 if sym.dtype == np.float64 else 1e-6
        vals, vecs = eigsh(sym, k=k, which="LA", v0=v0.astype(sym.dtype), tol=tol)
    order = np.argsort(vals)[::-1]
    return vals[order], vecs[:, order]


def combine_kernels(kernels: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Consensus kernel K_gamma = sum_p gamma_p^2 K_p (``sumKbeta(KH, Sigma.^2)``)."""
    # Scalars cast to the kernels' dtype so float32 kernels never get an n x n float64 copy.
    cast = kernels.dtype.type
    out = cast(weights[0] ** 2) * kernels[0]
    for w, kp in zip(weights[1:], kernels[1:], strict=True):
        if w != 0:
            out += cast(w**2) * kp
    return out


def quadratic_traces(kernels: np.ndarray, embedding: np.ndarray) -> np.ndarray:
    """tr(H^T K_p H) for every p, via BLAS products (m n^2 k flops)."""
    return np.sum((kernels @ embedding) * embedding, axis=(1, 2))


def kernel_kmeans_relaxed(
    kernel: np.ndarray, k: int, dense_max_n: int = 200, v0: np.ndarray | None = None
) -> tuple[np.ndarray, float]:
    """Relaxed kernel k-means (``mykernelkmeans.m``): H = top-k eigenvectors, objective tr(H^T K H)."""
    vals, vecs = top_eigen(kernel, k, dense_max_n, v0)
    return vecs, float(vals.sum())


# ----------------------------------------------------------------------------------------------
# MKKM
# ----------------------------------------------------------------------------------------------


def mkkm_weight_update(
    embedding: np.ndarray, kernels: np.ndarray, traces: np.ndarray
) -> np.ndarray:
    """``updateabsentkernelweightsV3.m``: a_p = tr(K_p) - tr(H^T K_p H), gamma = (1/a) / sum(1/a).

    ``traces`` are the tr(K_p) of the FULL kernels, passed explicitly: on a projection core they are
    not the traces of the s x s kernels given here (see :func:`mkkm`).
    """
    a = np.asarray(traces, float) - quadratic_traces(kernels, embedding)
    if np.any(a <= 0):
        raise ValueError(f"MKKM residuals tr(K_p) - tr(H^T K_p H) must be positive, got {a}")
    gamma = (1.0 / a) / np.sum(1.0 / a)
    gamma[gamma < np.finfo(float).eps] = 0.0
    return gamma / gamma.sum()


def _unit_diagonal(kernels: np.ndarray) -> bool:
    """Every kernel has K_ii = 1 (knorm), to float32 precision."""
    diag = np.einsum("pii->pi", kernels)
    return bool(np.allclose(diag, 1.0, rtol=0.0, atol=1e-4))


def mkkm_traces(kernels: np.ndarray | CoreKernels, traces: np.ndarray | None) -> np.ndarray:
    """The tr(K_p) MKKM must use, decided so that no call can silently use the wrong ones.

    A :class:`CoreKernels` brings its own: the exact full traces for the projection core (its s x s
    kernels have tr(U^T K_p U) < tr(K_p), a 45 % weight error on digits at s = 80 when used), and the
    sampled core's own traces for uniform / leverage (unbiased for tr(K_p)). A bare stack without
    ``traces`` must be normalised (unit diagonal, so tr(K_p) = n): anything else is either a core
    passed without its traces or an unnormalised kernel, and is refused.
    """
    if isinstance(kernels, CoreKernels):
        if traces is not None:
            raise ValueError(
                "pass either a CoreKernels (it carries its traces) or traces, not both"
            )
        stack = kernels.kernels
        return np.einsum("pii->p", stack) if kernels.traces is None else kernels.traces
    if traces is not None:
        traces = np.asarray(traces, float)
        if traces.shape != (kernels.shape[0],):
            raise ValueError(
                f"MKKM traces must hold one tr(K_p) per kernel, shape ({kernels.shape[0]},), "
                f"got {traces.shape}"
            )
        return traces
    if not _unit_diagonal(kernels):
        diag = np.einsum("pii->pi", kernels)
        raise ValueError(
            f"MKKM on kernels whose diagonal is not 1 (K_ii in [{diag.min():.4g}, {diag.max():.4g}]) "
            "without traces: for a core kernel pass the CoreKernels object itself "
            "(run_mkc(algorithm, core, k, settings)), which carries the exact full traces; for full "
            "kernels normalise them first (kernels.knorm; core_kernel.kernels.normalize: true) or "
            "pass traces=np.einsum('pii->p', kernels) on purpose"
        )
    return np.einsum("pii->p", kernels).astype(float)


def mkkm(
    kernels: np.ndarray | CoreKernels,
    k: int,
    tol: float = 1e-4,
    max_iter: int = 50,
    traces: np.ndarray | None = None,
    dense_max_n: int = 200,
) -> MKCResult:
    """``mkkmeans_train.m``: alternate H <- top-k eigvecs of K_gamma and the closed-form gamma update.

    ``kernels``: a normalised (m, n, n) stack, or a :class:`CoreKernels` (its traces are used).
    ``traces`` overrides tr(K_p) for a bare stack; see :func:`mkkm_traces` for what is refused.
    """
    full_traces = mkkm_traces(kernels, traces)
    if isinstance(kernels, CoreKernels):
        kernels = kernels.kernels
    m = kernels.shape[0]
    gamma = np.full(m, 1.0 / m)
    objective: list[float] = []
    it = 0
    while True:
        it += 1
        h, _ = kernel_kmeans_relaxed(combine_kernels(kernels, gamma), k, dense_max_n)
        gamma = mkkm_weight_update(h, kernels, full_traces)
        k_gamma = combine_kernels(kernels, gamma)
        # tr(K_gamma) uses the (possibly exact full) traces: sum gamma_p^2 tr(K_p).
        objective.append(float(gamma**2 @ full_traces - np.sum((k_gamma @ h) * h)))
        if it > 2 and (abs((objective[-2] - objective[-1]) / objective[-2]) < tol or it > max_iter):
            break
    h, _ = kernel_kmeans_relaxed(combine_kernels(kernels, gamma), k, dense_max_n)
    return MKCResult(gamma, h, objective, it)


# ----------------------------------------------------------------------------------------------
# SimpleMKKM
# ----------------------------------------------------------------------------------------------


def simple_mkkm_cost(
    kernels: np.ndarray,
    gamma: np.ndarray,
    k: int,
    dense_max_n: int = 200,
    v0: np.ndarray | None = None,
) -> tuple[float, np.ndarray]:
    """``costSimpleMKKM.m``: J(gamma) = max_{H^T H = I} tr(H^T K_gamma H) = sum of top-k eigenvalues."""
    h, cost = kernel_kmeans_relaxed(combine_kernels(kernels, gamma), k, dense_max_n, v0)
    return cost, h


def simple_mkkm_gradient(
    kernels: np.ndarray, embedding: np.ndarray, gamma: np.ndarray
) -> np.ndarray:
    """``simpleMKKMGrad.m``: dJ/dgamma_p = 2 gamma_p tr(H*^T K_p H*)."""
    return 2.0 * gamma * quadratic_traces(kernels, embedding)


def reduced_descent_direction(gamma: np.ndarray, grad: np.ndarray) -> tuple[np.ndarray, int]:
    """Reduced gradient on the simplex: reference mu = argmax gamma, d_p = -(g_p - g_mu), d_mu = -sum."""
    g = grad / np.sqrt(grad @ grad)
    mu = int(np.argmax(gamma))
    g = g - g[mu]
    desc = -g * ((gamma > 0) | (g < 0))
    desc[mu] = -desc.sum()
    return desc, mu


def simple_mkkm_update(
    kernels: np.ndarray,
    gamma: np.ndarray,
    grad: np.ndarray,
    cost_old: float,
    k: int,
    golden_tol: float = 1e-3,
    max_step: float = 0.1,
    precision: float = 1e-16,
    dense_max_n: int = 200,
    v0: np.ndarray | None = None,
) -> tuple[np.ndarray, float, int]:
    """``simpleMKKMupdate.m``: projected steps while the cost decreases, then golden-section search.

    Returns the new weights, their cost and the number of cost evaluations.
    """
    gold = (math.sqrt(5.0) + 1.0) / 2.0
    desc, mu = reduced_descent_direction(gamma, grad)
    calls = 0

    cache: dict[float, float] = {}

    def cost_at(step: float) -> float:
        # The golden section re-visits one probe whenever the bracket shrinks from the right.
        nonlocal calls
        if step not in cache:
            calls += 1
            cache[step] = simple_mkkm_cost(kernels, base + step * desc, k, dense_max_n, v0)[0]
        return cache[step]

    base = gamma.copy()
    ind = desc < 0
    if not np.any(ind):
        return gamma, cost_old, calls
    step_max = float(np.min(-base[ind] / desc[ind]))
    delt_max = step_max
    if step_max == 0:
        return gamma, cost_old, calls
    step_max = min(step_max, max_step)
    step_min, cost_min, cost_max = 0.0, cost_old, 0.0

    # Projected gradient: keep the full step while the cost decreases, re-projecting the direction.
    while cost_max < cost_min:
        cost_max = cost_at(step_max)
        if cost_max < cost_min:
            cost_min = cost_max
            cache.clear()
            base = base + step_max * desc
            base[base < precision] = 0.0
            base = base / base.sum()
            desc = desc * ((base > precision) | (desc > 0))
            desc[mu] = -(desc.sum() - desc[mu])
            ind = desc < 0
            if np.any(ind):
                step_max = float(np.min(-base[ind] / desc[ind]))
                delt_max = step_max
                cost_max = 0.0
            else:
                step_max = delt_max = 0.0

    # Golden-section line search on [step_min, step_max].
    steps, costs = [step_min, step_max], [cost_min, cost_max]
    best = int(np.argmin(costs))
    while (step_max - step_min) > golden_tol * abs(delt_max) and step_max > np.finfo(float).eps:
        step_r = step_min + (step_max - step_min) / gold
        step_l = step_min + (step_r - step_min) / gold
        cost_r, cost_l = cost_at(step_r), cost_at(step_l)
        steps = [step_min, step_l, step_r, step_max]
        costs = [cost_min, cost_l, cost_r, cost_max]
        best = int(np.argmin(costs))
        if best == 0:
            step_max, cost_max = step_l, cost_l
        elif best == 1:
            step_max, cost_max = step_r, cost_r
        elif best == 2:
            step_min, cost_min = step_l, cost_l
        else:
            step_min, cost_min = step_r, cost_r
    cost_new = costs[best]
    if cost_new < cost_old:
        base = base + steps[best] * desc
        return base, cost_new, calls
    return base, cost_old, calls


def simple_mkkm(
    kernels: np.ndarray,
    k: int,
    tol: float = 1e-5,
    max_iter: int = 200,
    golden_tol: float = 1e-3,
    max_step: float = 0.1,
    dense_max_n: int = 200,
) -> MKCResult:
    """``simpleMKKM.m``: min_gamma max_H tr(H^T K_gamma H) by reduced-gradient descent from gamma = 1/m.

    Stops when max|gamma - gamma_old| < tol. Deviation: the gradient is taken at the eigenvectors of
    the accepted weights (the MATLAB code reuses those of the last line-search probe).
    """
    m = kernels.shape[0]
    gamma = np.full(m, 1.0 / m)
    cost, h = simple_mkkm_cost(kernels, gamma, k, dense_max_n)
    objective = [cost]
    it = 0
    while it < max_iter:
        it += 1
        grad = simple_mkkm_gradient(kernels, h, gamma)
        new_gamma, cost, _ = simple_mkkm_update(
            kernels, gamma, grad, cost, k, golden_tol, max_step, dense_max_n=dense_max_n
        )
        cost, h = simple_mkkm_cost(kernels, new_gamma, k, dense_max_n)
        objective.append(cost)
        change = float(np.max(np.abs(new_gamma - gamma)))
        gamma = new_gamma
        if change < tol:
            break
    return MKCResult(gamma, h, objective, it)


# ----------------------------------------------------------------------------------------------
# One-pass late fusion
# ----------------------------------------------------------------------------------------------


def base_partitions(kernels: np.ndarray, k: int, dense_max_n: int = 200) -> np.ndarray:
    """``myInitialiHp.m``: H_p = top-k eigenvectors of (K_p + K_p^T)/2 + 1e-8 I, stacked (m, n, k).

    The 1e-8 I shift moves eigenvalues, not eigenvectors, so it is left out.
    """
    return np.stack([top_eigen(kp, k, dense_max_n)[1] for kp in kernels])


def orthogonal_procrustes(target: np.ndarray) -> np.ndarray:
    """argmax_{W^T W = I} tr(W^T T) = U V^T from the SVD of T (used for C, W_p and continuous H)."""
    u, _, vt = np.linalg.svd(target, full_matrices=False)
    return u @ vt


def late_fusion_beta(
    partitions: np.ndarray, rotations: np.ndarray, consensus: np.ndarray
) -> np.ndarray:
    """``updateBetaOPLFMVC.m``: beta_p ~ tr(H*^T H_p W_p), normalised to unit L2 norm."""
    align = np.sum((partitions @ rotations) * consensus, axis=(1, 2))
    beta = align / np.linalg.norm(align)
    beta[beta < np.finfo(float).eps] = 0.0
    return beta / np.linalg.norm(beta)


def late_fusion(
    kernels: np.ndarray,
    k: int,
    variant: str = "continuous",
    tol: float = 1e-4,
    max_iter: int = 100,
    seed: int = 0,
    kmeans_replicates: int = 30,
    dense_max_n: int = 200,
) -> MKCResult:
    """One-pass late fusion MKC (``onePassLateFusionMVCBeta.m``); returns beta with ||beta||_2 = 1.

    ``discrete``: the official Y (one-hot) and C (k x k orthogonal) updates, C initialised by k-means
    on the spectral embedding of the average kernel. ``continuous``: late fusion alignment, the
    consensus is H = U V^T from SVD(sum beta_p H_p W_p), initialised with that same embedding.
    """
    if variant not in ("continuous", "discrete"):
        raise ValueError(f"late fusion variant must be 'continuous' or 'discrete', got {variant!r}")
    m = kernels.shape[0]
    partitions = base_partitions(kernels, k, dense_max_n)
    rotations = np.broadcast_to(np.eye(k), (m, k, k)).copy()
    beta = np.full(m, math.sqrt(1.0 / m))
    avg_embedding, _ = kernel_kmeans_relaxed(kernels.mean(axis=0), k, dense_max_n)
    objective: list[float] = []
    if variant == "discrete":
        normed = avg_embedding / np.maximum(
            np.linalg.norm(avg_embedding, axis=1, keepdims=True), 1e-12
        )
        centroids = (
            KMeans(k, n_init=kmeans_replicates, max_iter=200, random_state=seed)
            .fit(normed)
            .cluster_centers_
        )
        c = np.linalg.svd(centroids, full_matrices=False)[0]  # MATLAB orth(C)
        consensus = None
    else:
        consensus = avg_embedding
        rotations = np.stack([orthogonal_procrustes(hp.T @ consensus) for hp in partitions])
    fused = np.tensordot(beta, partitions @ rotations, axes=1)
    it = 0
    while True:
        it += 1
        if variant == "discrete":
            labels = np.argmax(fused @ c.T, axis=1)
            y = np.eye(k)[labels]
            c = orthogonal_procrustes(y.T @ fused)
            consensus = y @ c
        else:
            consensus = orthogonal_procrustes(fused)
        beta = late_fusion_beta(partitions, rotations, consensus)
        rotations = np.stack([orthogonal_procrustes(hp.T @ consensus) for hp in partitions])
        fused = np.tensordot(beta, partitions @ rotations, axes=1)
        objective.append(float(np.sum(consensus * fused)))
        if it > 2 and (abs((objective[-1] - objective[-2]) / objective[-1]) < tol or it > max_iter):
            break
    return MKCResult(beta, consensus, objective, it)


def run_mkc(
    algorithm: str,
    kernels: np.ndarray | CoreKernels,
    k: int,
    settings: dict,
    traces: np.ndarray | None = None,
) -> MKCResult:
    """Dispatch by name with a settings dict (the ``mkc.<algorithm>`` parameter block).

    ``kernels`` is a full stack or a :class:`CoreKernels`; MKKM takes a core's traces from it.
    """
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unknown MKC algorithm {algorithm!r}; allowed: {', '.join(ALGORITHMS)}")
    if algorithm == "mkkm":
        return mkkm(kernels, k, traces=traces, **settings)
    stack = kernels.kernels if isinstance(kernels, CoreKernels) else kernels
    if algorithm == "simplemkkm":
        return simple_mkkm(stack, k, **settings)
    if algorithm == "latefusion_discrete":
        settings = {**settings, "variant": "discrete"}
    return late_fusion(stack, k, **settings)
