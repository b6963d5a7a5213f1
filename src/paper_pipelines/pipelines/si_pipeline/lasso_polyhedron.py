"""The lasso and its selection event (Lee, Sun, Sun & Taylor 2016), shared by Lasso FS and soft-IPOD.

Objective (scikit-learn's scaling): (1 / (2 N)) ||w - D u||^2 + lam ||u||_1, no intercept.
Given the active set A and signs s, KKT gives u_A = (D_A^T D_A)^{-1} (D_A^T w - N lam s); the event
{active set and signs unchanged} is the polyhedron s * u_A > 0, |D_I^T (w - D_A u_A)| / N < lam,
which is linear in w, hence linear in z when w = wa + wb z.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Lasso, lars_path

from .intervals import linear_interval

logger = logging.getLogger(__name__)

# Rounding right at a breakpoint (the search steps 1e-6 past an edge) leaves violations ~1e-8;
# anything above this is a genuinely wrong active set.
KKT_TOL = 1e-6


class LassoEventError(RuntimeError):
    """The polyhedron of the computed active set does not contain the current point, even after the exact path."""


def lasso_constraints(
    design: np.ndarray,
    wa: np.ndarray,
    wb: np.ndarray,
    lam: float,
    active: np.ndarray,
    signs: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Rows (intercept, slope) of the Lee et al. polyhedron: intercept + slope * z <= 0."""
    n_obj = design.shape[0]
    inactive = np.setdiff1d(np.arange(design.shape[1]), active)
    if len(active):
        da = design[:, active]
        gram_inv = np.linalg.inv(da.T @ da)
        ua_a = gram_inv @ (da.T @ wa - n_obj * lam * signs)
        ua_b = gram_inv @ (da.T @ wb)
        res_a, res_b = wa - da @ ua_a, wb - da @ ua_b
        sign_rows = (-signs * ua_a, -signs * ua_b)  # s_j u_j >= 0
    else:
        res_a, res_b = wa, wb
        sign_rows = (np.empty(0), np.empty(0))
    corr_a = design[:, inactive].T @ res_a / n_obj
    corr_b = design[:, inactive].T @ res_b / n_obj
    intercept = np.concatenate([sign_rows[0], corr_a - lam, -corr_a - lam])
    slope = np.concatenate([sign_rows[1], corr_b, -corr_b])
    return intercept, slope


def _active_from_coef(coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    active = np.flatnonzero(coef != 0.0)
    return active, np.sign(coef[active])


def _violation(design, w, lam, active, signs) -> tuple[float, np.ndarray]:
    """Largest KKT violation of (A, s) at w and the constraint rows (intercepts at b = 0)."""
    intercept, _ = lasso_constraints(design, w, np.zeros_like(w), lam, active, signs)
    return (float(intercept.max()) if intercept.size else -np.inf), intercept


def _repair(design, w, lam, active, signs, steps: int = 5):
    """One homotopy move per step: drop an active variable whose sign flipped, or add the inactive
    variable whose correlation exceeds lam (with that sign). Fixes active sets computed right at a
    breakpoint, where solvers round the entering/leaving variable the wrong way."""
    n_obj = design.shape[0]
    for _ in range(steps):
        worst, rows = _violation(design, w, lam, active, signs)
        if worst <= 0.0:
            break
        k = int(np.argmax(rows))
        inactive = np.setdiff1d(np.arange(design.shape[1]), active)
        if k < len(active):  # sign constraint: remove the variable
            active, signs = np.delete(active, k), np.delete(signs, k)
        else:
            j = inactive[(k - len(active)) % len(inactive)]
            if len(active):
                da = design[:, active]
                u_a = np.linalg.solve(da.T @ da, da.T @ w - n_obj * lam * signs)
                resid = w - da @ u_a
            else:
                resid = w
            order = np.argsort(np.append(active, j))
            active = np.append(active, j)[order]
            signs = np.append(signs, np.sign(design[:, j] @ resid))[order]
    return active, signs


def lasso_active_set(
    design: np.ndarray, w: np.ndarray, lam: float, hint: tuple[np.ndarray, np.ndarray] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Active set and signs of the lasso solution at response w.

    KKT is sufficient for the convex lasso, so any (A, s) whose polyhedron contains w is the answer.
    Tried in order: ``hint`` (the answer at a nearby point of the line), sklearn coordinate descent
    (tol 1e-10, as in the reference experiments), a small homotopy repair of that set, the exact
    LARS-lasso path. A set violating KKT by < 1e-6 (rounding at a breakpoint) is accepted last.
    """
    scale = max(1.0, lam)
    if hint is not None and _violation(design, w, lam, *hint)[0] <= 0.0:
        return hint
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = Lasso(alpha=lam, fit_intercept=False, max_iter=5000, tol=1e-10)
        model.fit(np.asfortranarray(design), np.ascontiguousarray(w), check_input=False)
    candidates = [_active_from_coef(model.coef_)]
    candidates.append(_repair(design, w, lam, *candidates[0]))
    for active, signs in candidates:
        if _violation(design, w, lam, active, signs)[0] <= 1e-12 * scale:
            return active, signs
    _, _, coefs = lars_path(design, w, method="lasso", alpha_min=lam)
    candidates.append(_active_from_coef(coefs[:, -1]))
    candidates.append(_repair(design, w, lam, *candidates[-1]))
    worst = [_violation(design, w, lam, a, s_)[0] for a, s_ in candidates]
    best = int(np.argmin(worst))
    if worst[best] <= KKT_TOL * scale:
        logger.debug("lasso active set accepted with KKT violation %.2e", worst[best])
        return candidates[best]
    raise LassoEventError(
        f"lasso (lam={lam}) active set violates KKT by {worst[best]:.2e} after coordinate descent, "
        "homotopy repair and the exact path"
    )


def lasso_event(
    design: np.ndarray,
    wa: np.ndarray,
    wb: np.ndarray,
    z: float,
    lam: float,
    memo: dict | None = None,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(active, signs, lo, hi): the lasso decision at w(z) = wa + wb z and the interval where it holds.

    ``memo`` (one dict per component and test) carries the last active set as a warm-start hint.
    """
    hint = memo.get("lasso") if memo is not None else None
    active, signs = lasso_active_set(design, wa + wb * z, lam, hint)
    if memo is not None:
        memo["lasso"] = (active, signs)
    intercept, slope = lasso_constraints(design, wa, wb, lam, active, signs)
    lo, hi = linear_interval(intercept, slope, z)
    return active, signs, lo, hi
