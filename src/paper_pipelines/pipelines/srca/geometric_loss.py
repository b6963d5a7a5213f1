"""Step 3 of SRCA: centre and radius of the sphere on an axis set I by the geometric loss.

The official loss (`lossFunction_I.m`), for rotated data y_i, axis indicator v (D_I = diag(v)), weight W:

    L(I, c, r) = sum_i [ (y_i - c)^T W (y_i - c) + r^2 - 2 r sqrt((y_i - c)^T W D_I (y_i - c)) ] + lambda ||v||_1

With W = identity this is sum_i ( ||P_notI (y_i - c)||^2 + (||P_I (y_i - c)|| - r)^2 ) + lambda |I|: the sum of
squared Euclidean distances from each point to the sphere {c + u : u in span(e_I), ||u|| = r}.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.optimize import least_squares, minimize


def geometric_loss(
    Y: np.ndarray,
    indicator: np.ndarray,
    c: np.ndarray,
    r: float,
    W: np.ndarray | None = None,
    lambda_penalty: float = 0.0,
) -> float:
    """The SRCA geometric loss L(I, c, r) exactly as `lossFunction_I.m` writes it (W = I when None).

    ``indicator`` is the 0/1 (or relaxed, in [0, 1]) vector v; a negative quadratic form under the square
    root (possible only for a non-diagonal W) is clipped at 0.
    """
    Y = np.asarray(Y, dtype=float)
    v = np.asarray(indicator, dtype=float)
    diff = Y - np.asarray(c, dtype=float)
    n = Y.shape[0]
    if W is None:
        quad = np.einsum("ij,ij->i", diff, diff)
        quad_I = (diff**2) @ v
    else:
        Wd = diff @ W
        quad = np.einsum("ij,ij->i", Wd, diff)
        quad_I = np.einsum("ij,ij->i", Wd * v, diff)
    return float(
        quad.sum()
        + n * r * r
        - 2.0 * r * np.sqrt(np.clip(quad_I, 0.0, None)).sum()
        + lambda_penalty * np.abs(v).sum()
    )


def squared_distance_to_sphere(
    Y: np.ndarray, axes: np.ndarray, c: np.ndarray, r: float
) -> np.ndarray:
    """Per-point squared Euclidean distance from y_i to the sphere {c + u : u in span(e_I), ||u|| = r}.

    ``c`` is the full D-vector; the sphere's affine span is c + span(e_I), so the distance has an
    off-I part ||P_notI(y - c)||^2 and an in-I part (||P_I(y - c)|| - r)^2.
    """
    diff = np.asarray(Y, dtype=float) - c
    mask = np.zeros(diff.shape[1], dtype=bool)
    mask[np.asarray(axes, dtype=int)] = True
    off = (diff[:, ~mask] ** 2).sum(axis=1)
    radial = np.linalg.norm(diff[:, mask], axis=1)
    return off + (radial - r) ** 2


def _radial_residuals(c: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Residuals of the in-I loss with the radius profiled out: ||z_i - c|| - mean_j ||z_j - c||.

    For fixed c the optimal radius is r*(c) = mean_i ||z_i - c||, so the in-I part of L is the sum of
    squares of these residuals (variable projection).
    """
    s = np.linalg.norm(Z - c, axis=1)
    return s - s.mean()


def _radial_jacobian(c: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Jacobian of `_radial_residuals` in c: -(u_i - mean u), u_i = (z_i - c) / ||z_i - c||."""
    diff = Z - c
    s = np.linalg.norm(diff, axis=1)
    u = diff / np.where(s > 0, s, 1.0)[:, None]
    return -(u - u.mean(axis=0))


def _algebraic_centre(Z: np.ndarray) -> np.ndarray:
    """Least-squares (Kasa) centre: ||z||^2 = 2 c.z + b; a cheap starting point for the geometric fit."""
    A = np.hstack([2.0 * Z, np.ones((Z.shape[0], 1))])
    rhs = np.einsum("ij,ij->i", Z, Z)
    sol, *_ = np.linalg.lstsq(A, rhs, rcond=None)
    return sol[:-1]


def plane_limit(Z: np.ndarray, far: float = 1e4) -> tuple[np.ndarray, float, float]:
    """A sphere of huge radius tangent to the best hyperplane of span(I): the k-plane limit of k-spheres.

    Returns (c_I, r, in-I loss). The normal is the least-variance direction of Z; the radius is
    `far` x the RMS norm of Z, and the loss is computed without cancellation:
    ||z - c|| - R = (||z||^2 + 2 R z.n) / (||z - c|| + R).
    """
    scatter = Z.T @ Z
    _, vecs = np.linalg.eigh(scatter)
    normal = vecs[:, 0]
    R = far * (float(np.sqrt(np.einsum("ij,ij->i", Z, Z).mean())) or 1.0)
    c = -R * normal
    s = np.linalg.norm(Z - c, axis=1)
    d = (np.einsum("ij,ij->i", Z, Z) + 2.0 * R * (Z @ normal)) / (s + R)
    dev = d - d.mean()
    return c, R + float(d.mean()), float(dev @ dev)


@dataclass(frozen=True)
class SphereFit:
    """Result of fitting (c, r) on one axis set: full D-dim centre (zero off I), radius, loss, cost."""

    axes: tuple[int, ...]
    center: np.ndarray
    radius: float
    loss: float
    n_evals: int


def fit_sphere_on_axes(
    Y: np.ndarray,
    axes: tuple[int, ...] | list[int],
    tol: float = 1e-10,
    max_iter: int = 10_000,
    lambda_penalty: float = 0.0,
    offI_sq: float | None = None,
) -> SphereFit:
    """Minimise L(I, c, r) over (c, r) for W = identity (the official default), Sec. 2 / `EstimateSphere.m`.

    Exact reduction used here: ``Y`` is centred (rotated PCA scores), so the optimal centre outside I is
    the column mean, 0, and for fixed c the optimal radius is r = mean_i ||P_I(y_i - c)||; only c_I is
    searched, by Levenberg-Marquardt on the radial residuals (the official code uses MATLAB's
    quasi-Newton fminunc on (c, r) from c = 1, r = 1). Starts: the centroid and the algebraic (Kasa)
    centre; the k-plane limit (a huge sphere tangent to the best hyperplane of span(I)) is a third
    candidate, so flat data is never fitted worse than by that plane.
    ``offI_sq`` (sum of squared coordinates off I) may be passed in when the caller has it.
    """
    Y = np.asarray(Y, dtype=float)
    axes = tuple(int(a) for a in axes)
    Z = Y[:, list(axes)]
    n, D = Y.shape
    if offI_sq is None:
        offI_sq = float((Y**2).sum() - (Z**2).sum())
    best_c, best_r, best_val = None, 0.0, np.inf
    evals = 0
    for c0 in (np.zeros(len(axes)), _algebraic_centre(Z)):
        if not np.all(np.isfinite(c0)):
            continue
        res = least_squares(
            _radial_residuals,
            c0,
            jac=_radial_jacobian,
            args=(Z,),
            method="lm",
            xtol=tol,
            ftol=tol,
            gtol=tol,
            max_nfev=max_iter,
        )
        evals += int(res.nfev)
        resid = _radial_residuals(res.x, Z)
        val = float(resid @ resid)
        if val < best_val:
            best_c, best_val = res.x, val
            best_r = float(np.linalg.norm(Z - res.x, axis=1).mean())
    c_far, r_far, val_far = plane_limit(Z)
    if val_far < best_val:
        best_c, best_r, best_val = c_far, r_far, val_far
    center = np.zeros(D)
    center[list(axes)] = best_c
    loss = offI_sq + best_val + lambda_penalty * len(axes)
    return SphereFit(axes=axes, center=center, radius=best_r, loss=float(loss), n_evals=evals)


def fit_sphere_weighted(
    Y: np.ndarray,
    axes: tuple[int, ...] | list[int],
    W: np.ndarray,
    lambda_penalty: float = 0.0,
    tol: float = 1e-10,
    max_iter: int = 10_000,
) -> SphereFit:
    """Minimise the official L(I, c, r) with a general weight W (ellipsoid variant) over all D + 1 of (c, r).

    Starts from the W = identity solution. Gradient: dL/dc = -2 W sum(y - c) + 2 r sum S(y - c)/sqrt(p),
    dL/dr = 2 n r - 2 sum sqrt(p), with S = (W D_I + D_I W)/2 and p_i = (y_i - c)^T S (y_i - c).
    """
    Y = np.asarray(Y, dtype=float)
    n, D = Y.shape
    axes = tuple(int(a) for a in axes)
    v = np.zeros(D)
    v[list(axes)] = 1.0
    W = np.asarray(W, dtype=float)
    S = 0.5 * (W * v[None, :] + v[:, None] * W)
    start = fit_sphere_on_axes(Y, axes, tol=tol, max_iter=max_iter)
    # Rescale the Euclidean radius into the W metric on I as the starting radius.
    z = (Y - start.center)[:, list(axes)]
    W_II = W[np.ix_(axes, axes)]
    r0 = float(np.sqrt(np.clip(np.einsum("ij,jk,ik->i", z, W_II, z), 0, None)).mean())

    def fun(x: np.ndarray) -> tuple[float, np.ndarray]:
        c, r = x[:-1], x[-1]
        diff = Y - c
        Wd = diff @ W
        q = np.einsum("ij,ij->i", Wd, diff)
        Sd = diff @ S
        p = np.clip(np.einsum("ij,ij->i", Sd, diff), 0.0, None)
        sp = np.sqrt(p)
        value = q.sum() + n * r * r - 2.0 * r * sp.sum() + lambda_penalty * len(axes)
        safe = np.where(sp > 0, sp, 1.0)
        gc = -2.0 * Wd.sum(axis=0) + 2.0 * r * (Sd / safe[:, None]).sum(axis=0)
        gr = 2.0 * n * r - 2.0 * sp.sum()
        return float(value), np.append(gc, gr)

    x0 = np.append(start.center, r0)
    res = minimize(
        fun, x0, jac=True, method="L-BFGS-B", options={"maxiter": max_iter, "ftol": tol * 1e-3}
    )
    center = res.x[:-1].copy()
    return SphereFit(
        axes=axes,
        center=center,
        radius=float(res.x[-1]),
        loss=float(res.fun),
        n_evals=int(res.nfev) + start.n_evals,
    )
