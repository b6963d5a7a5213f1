"""Ellipsoid variant of SRCA: the weight W from the minimum-volume enclosing ellipsoid (W = 'est').

`SRCA.m` calls ``MinVolEllipse(X', 0.01)`` (Khachiyan's algorithm, MATLAB File Exchange, not in the repo)
and uses its shape matrix A, {x : (x - c)^T A (x - c) <= 1}, as W in the geometric loss.
"""

from __future__ import annotations

import numpy as np


def minimum_volume_ellipsoid(
    X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000
) -> tuple[np.ndarray, np.ndarray]:
    """Khachiyan's algorithm: (A, c) of the minimum-volume ellipsoid enclosing the rows of X.

    Needs n > D points in general position (otherwise the ellipsoid is degenerate), as the official
    code notes.
    """
    P = np.asarray(X, dtype=float)
    n, D = P.shape
    if n <= D:
        raise ValueError(
            f"the minimum-volume ellipsoid (W = 'mve') needs more points than dimensions, got n={n}, D={D}"
        )
    Q = np.vstack([P.T, np.ones(n)])  # (D + 1, n)
    u = np.full(n, 1.0 / n)
    err = np.inf
    it = 0
    while err > tol and it < max_iter:
        Xm = (Q * u) @ Q.T
        M = np.einsum("ij,ji->i", Q.T, np.linalg.solve(Xm, Q))
        j = int(np.argmax(M))
        step = (M[j] - D - 1.0) / ((D + 1.0) * (M[j] - 1.0))
        new_u = (1.0 - step) * u
        new_u[j] += step
        err = float(np.linalg.norm(new_u - u))
        u = new_u
        it += 1
    c = P.T @ u
    cov = (P.T * u) @ P - np.outer(c, c)
    A = np.linalg.inv(cov) / D
    return 0.5 * (A + A.T), c
