"""Large-scale extension: learn weights on core kernels, then embed all n points (never an n x n kernel).

- Projection core: H = U_s G, where G = top-k eigenvectors of the weighted core kernel K~_gamma
  (U_s K~_gamma U_s^T is the rank-s approximation of K_gamma in the span of U_s).
- Sampled cores (and any weights): the Nystrom formula of ``MKC_approximation.m``,
  H = P U Lambda^{-1}, P = sum_p alpha_p^2 K_p[:, S], (U, Lambda) = top-k eigenpairs of sum alpha_p^2 K_p[S, S].
"""

from __future__ import annotations

import numpy as np

from .core import submatrices
from .mkc import combine_kernels, top_eigen


def projection_embedding(
    basis: np.ndarray, core_kernels: np.ndarray, weights: np.ndarray, k: int
) -> np.ndarray:
    """H = U_s G with G the top-k eigenvectors of sum_p gamma_p^2 K~_p (n x k)."""
    _, g = top_eigen(combine_kernels(core_kernels, weights), k)
    return basis @ g


def nystrom_embedding(
    kernels: np.ndarray, landmarks: np.ndarray, weights: np.ndarray, k: int, features: bool = False
) -> np.ndarray:
    """``MKC_approximation.m``: H = P_alpha U Lambda^{-1} for all n points from landmark set S."""
    landmarks = np.unique(landmarks)
    n = kernels.shape[1]
    small = combine_kernels(submatrices(kernels, landmarks, landmarks, features), weights)
    vals, vecs = top_eigen(small, k)
    if np.any(vals <= 0):
        raise ValueError(
            f"the weighted landmark kernel has non-positive top-{k} eigenvalues {vals}; use more landmarks"
        )
    cols = np.arange(n)
    p_alpha = combine_kernels(submatrices(kernels, cols, landmarks, features), weights)
    return p_alpha @ vecs / vals
