"""Base kernels and the preprocessing every MKC algorithm of the group applies (Sec. 2 of the spec).

Kernels are stacked as an array of shape (m, n, n). The group's MATLAB code centres each kernel
(``kcenter.m``) and then normalises it to unit diagonal (``knorm.m``); both steps live here. For n
too large to hold n x n kernels, ``nystrom_features`` gives per-kernel feature maps F_p (n x r) with
K_p ~ F_p F_p^T, centred and row-normalised so that they match ``kcenter`` + ``knorm`` of the
approximate kernel.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
from sklearn.metrics.pairwise import (
    euclidean_distances,
    linear_kernel,
    polynomial_kernel,
    rbf_kernel,
)

logger = logging.getLogger(__name__)

KERNEL_TYPES = ("rbf", "polynomial", "linear")


@dataclass(frozen=True)
class KernelSpec:
    """One base kernel: ``rbf`` exp(-||x-y||^2 / (t * med)), ``polynomial`` ((x.y)/d + c)^deg, ``linear``."""

    kind: str
    bandwidth_factor: float = 1.0
    degree: int = 2
    offset: float = 1.0

    @property
    def name(self) -> str:
        if self.kind == "rbf":
            return f"rbf_t{self.bandwidth_factor:g}"
        if self.kind == "polynomial":
            return f"poly_d{self.degree}"
        return "linear"


def kernel_specs(kinds: list[dict]) -> list[KernelSpec]:
    """KernelSpec objects from the ``kernels.base`` parameter list."""
    return [KernelSpec(**entry) for entry in kinds]


def median_sq_distance(x: np.ndarray, rng: np.random.Generator, max_points: int = 2000) -> float:
    """Median squared Euclidean distance between distinct points (on a subsample for large n)."""
    if x.shape[0] > max_points:
        x = x[rng.choice(x.shape[0], max_points, replace=False)]
    d2 = euclidean_distances(x, squared=True)
    upper = d2[np.triu_indices(x.shape[0], k=1)]
    med = float(np.median(upper))
    if med <= 0:
        raise ValueError(
            "all points coincide: the median squared distance is 0; check the features"
        )
    return med


def kernel_block(x: np.ndarray, y: np.ndarray, spec: KernelSpec, med: float) -> np.ndarray:
    """K(x_i, y_j) for one base kernel, as an (len(x), len(y)) block, by scikit-learn's kernel functions.

    ``rbf`` is ``rbf_kernel`` with gamma = 1 / (t * med); ``polynomial`` is ``polynomial_kernel`` with
    gamma = 1 / d and coef0 = offset; ``linear`` is ``linear_kernel``.
    """
    if spec.kind == "linear":
        return linear_kernel(x, y)
    if spec.kind == "polynomial":
        return polynomial_kernel(
            x, y, degree=spec.degree, gamma=1.0 / x.shape[1], coef0=spec.offset
        )
    if spec.kind == "rbf":
        return rbf_kernel(x, y, gamma=1.0 / (spec.bandwidth_factor * med))
    raise ValueError(f"unknown kernel kind {spec.kind!r}; allowed: {', '.join(KERNEL_TYPES)}")


def kcenter(kernel: np.ndarray) -> np.ndarray:
    """kcenter.m: (I - 11^T/n) K (I - 11^T/n), symmetrised, plus 1e-12 I."""
    row = kernel.mean(axis=1, keepdims=True)
    col = kernel.mean(axis=0, keepdims=True)
    centred = kernel - row - col + kernel.mean()
    centred = 0.5 * (centred + centred.T)
    centred[np.diag_indices_from(centred)] += 1e-12
    return centred


def knorm(kernel: np.ndarray) -> np.ndarray:
    """knorm.m: K_ij / sqrt(K_ii K_jj) (unit diagonal, so tr(K) = n)."""
    diag = np.diag(kernel).copy()
    if np.any(diag <= 0):
        raise ValueError(
            "a kernel has a non-positive diagonal entry after centring, so it cannot be normalised; "
            "drop duplicated points or the degenerate kernel"
        )
    scale = 1.0 / np.sqrt(diag)
    return kernel * scale[:, None] * scale[None, :]


def build_base_kernels(
    x: np.ndarray,
    specs: list[KernelSpec],
    rng: np.random.Generator,
    center: bool = True,
    normalize: bool = True,
    dtype: str | type = np.float64,
    out: np.ndarray | None = None,
) -> np.ndarray:
    """Stack (m, n, n) of preprocessed base kernels, one per spec (Sec. 'Small-scale plan' of the spec).

    Works in place on each n x n slice (no n x n temporaries), so n = 20 000 fits in memory in float32;
    ``out`` (an (m, n, n) slice of a larger stack) is filled instead of a new array.

    The formulas are scikit-learn's ``rbf_kernel`` / ``polynomial_kernel`` / ``linear_kernel`` (a test
    checks equality), but those return a new n x n array that would then be copied into the stack. Why we
    keep ours, measured side by side (benchmarks/core_kernel_sklearn_kernels.py, one BLAS thread, peak
    memory above the data, n = 20 000 float32 as in benchmarks/core_kernel_full_vs_core.py): RBF 1.58 GB
    / 8.1 s here vs 3.08 GB / 7.9-8.8 s through ``rbf_kernel``; polynomial + linear 3.11 GB / 14.6 s vs
    4.64 GB / 19.2 s; RBF at n = 10 000 float64 0.86 GB / 3.0 s vs 1.53 GB / 3.7 s. Each kernel
    through scikit-learn costs one more n x n array (+1.5 GB at n = 20 000) for the same result.
    Rectangular blocks (``kernel_block``) do use scikit-learn's functions.
    """
    med = median_sq_distance(x, rng)
    x = np.asarray(x, dtype=dtype)
    sq = np.sum(x * x, axis=1)
    shape = (len(specs), x.shape[0], x.shape[0])
    if out is None:
        out = np.empty(shape, dtype=dtype)
    elif out.shape != shape or out.dtype != np.dtype(dtype):
        raise ValueError(
            f"out must be a {shape} {np.dtype(dtype)} array, got {out.shape} {out.dtype}"
        )
    for p, spec in enumerate(specs):
        kernel = out[p]
        np.matmul(x, x.T, out=kernel)
        if spec.kind == "polynomial":
            kernel /= x.shape[1]
            kernel += spec.offset
            kernel **= spec.degree
        elif spec.kind == "rbf":
            kernel *= -2.0
            kernel += sq[:, None]
            kernel += sq[None, :]
            np.maximum(kernel, 0.0, out=kernel)
            kernel /= -(spec.bandwidth_factor * med)
            np.exp(kernel, out=kernel)
        elif spec.kind != "linear":
            raise ValueError(
                f"unknown kernel kind {spec.kind!r}; allowed: {', '.join(KERNEL_TYPES)}"
            )
        _symmetrize_inplace(kernel)
        if center:
            _kcenter_inplace(kernel)
        if normalize:
            _knorm_inplace(kernel)
    return out


def _symmetrize_inplace(kernel: np.ndarray, block: int = 2048) -> None:
    """K <- (K + K^T) / 2 block by block (BLAS products are symmetric only up to rounding)."""
    n = kernel.shape[0]
    for i in range(0, n, block):
        for j in range(i, n, block):
            upper = kernel[i : i + block, j : j + block]
            avg = 0.5 * (upper + kernel[j : j + block, i : i + block].T)
            kernel[i : i + block, j : j + block] = avg
            kernel[j : j + block, i : i + block] = avg.T


def _kcenter_inplace(kernel: np.ndarray) -> None:
    """kcenter.m on a symmetric kernel without temporaries (row means = column means)."""
    means = kernel.mean(axis=1, dtype=np.float64)
    total = means.mean()
    kernel -= means[:, None].astype(kernel.dtype)
    kernel -= means[None, :].astype(kernel.dtype)
    kernel += kernel.dtype.type(total)
    kernel[np.diag_indices_from(kernel)] += kernel.dtype.type(1e-12)


def _knorm_inplace(kernel: np.ndarray) -> None:
    diag = np.diag(kernel).astype(np.float64)
    if np.any(diag <= 0):
        raise ValueError(
            "a kernel has a non-positive diagonal entry after centring, so it cannot be normalised; "
            "drop duplicated points or the degenerate kernel"
        )
    scale = (1.0 / np.sqrt(diag)).astype(kernel.dtype)
    kernel *= scale[:, None]
    kernel *= scale[None, :]


def validate_kernels(
    kernels: np.ndarray | list[np.ndarray], k: int, psd_tol: float = 1e-8
) -> np.ndarray:
    """Check a kernel stack before any MKC run: same square size, finite, PSD, and k <= n.

    Returns the stack as an (m, n, n) float array. Fails with a message naming the problem.
    """
    if isinstance(kernels, list | tuple):
        shapes = [np.shape(kp) for kp in kernels]
        if len(set(shapes)) != 1:
            raise ValueError(f"base kernels must all have the same n x n size, got shapes {shapes}")
        kernels = np.stack([np.asarray(kp, dtype=float) for kp in kernels])
    kernels = np.asarray(kernels)
    if kernels.ndim != 3 or kernels.shape[1] != kernels.shape[2]:
        raise ValueError(
            f"kernels must be an (m, n, n) stack of square matrices, got shape {kernels.shape}"
        )
    m, n, _ = kernels.shape
    if m < 1:
        raise ValueError("at least one base kernel is needed, got 0")
    if not np.all(np.isfinite(kernels)):
        bad = [p for p in range(m) if not np.all(np.isfinite(kernels[p]))]
        raise ValueError(f"kernel(s) {bad} contain NaN or infinite entries")
    if not 1 <= k <= n:
        raise ValueError(f"number of clusters k must be in [1, n] = [1, {n}], got k={k}")
    for p in range(m):
        if not np.allclose(
            kernels[p], kernels[p].T, atol=1e-8 * max(1.0, np.abs(kernels[p]).max())
        ):
            raise ValueError(f"kernel {p} is not symmetric; a kernel matrix must satisfy K = K^T")
        # PSD up to rounding: K + tol * tr(K) * I must admit a Cholesky factorisation.
        shift = psd_tol * max(float(np.trace(kernels[p])), 1.0)
        try:
            np.linalg.cholesky(kernels[p] + shift * np.eye(n))
        except np.linalg.LinAlgError:
            lowest = float(np.linalg.eigvalsh(kernels[p])[0]) if n <= 2000 else float("nan")
            raise ValueError(
                f"kernel {p} is not positive semi-definite (smallest eigenvalue {lowest:.3g}, "
                f"tolerance {-shift:.3g}); use a valid kernel function"
            ) from None
    return kernels


def nystrom_features(
    x: np.ndarray,
    specs: list[KernelSpec],
    pilot: np.ndarray,
    rng: np.random.Generator,
    block: int = 20000,
    dtype: type = np.float64,
) -> np.ndarray:
    """Per-kernel Nystrom feature maps F_p = K_p[:, P] K_p[P, P]^{-1/2}, shape (m, n, r), never n x n.

    Each F_p is centred (column means removed) and row-normalised: F_p F_p^T is then exactly
    ``knorm(kcenter(.))`` of the Nystrom kernel, the large-n stand-in for the group's preprocessing.
    """
    med = median_sq_distance(x, rng)
    xp = x[pilot]
    out = np.empty((len(specs), x.shape[0], len(pilot)), dtype=dtype)
    for p, spec in enumerate(specs):
        w = kernel_block(xp, xp, spec, med)
        vals, vecs = np.linalg.eigh(0.5 * (w + w.T))
        keep = vals > 1e-10 * vals[-1]
        inv_sqrt = (vecs[:, keep] / np.sqrt(vals[keep])) @ vecs[:, keep].T
        for start in range(0, x.shape[0], block):
            stop = min(start + block, x.shape[0])
            out[p, start:stop] = kernel_block(x[start:stop], xp, spec, med) @ inv_sqrt
        out[p] -= out[p].mean(axis=0, keepdims=True)
        norms = np.linalg.norm(out[p], axis=1, keepdims=True)
        out[p] /= np.maximum(norms, 1e-12)
    return out
