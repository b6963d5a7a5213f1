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


def lasso_constraints_gram(
    gram: np.ndarray,
    dta: np.ndarray,
    dtb: np.ndarray,
    n_obj: int,
    lam: float,
    active: np.ndarray,
    signs: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Rows (intercept, slope) of the Lee et al. polyhedron, intercept + slope * z <= 0.

    Works on the Gram matrix D^T D and D^T w = dta + dtb z only, so its cost is O(m |A|) whatever
    the number of rows (soft-IPOD's design is the n x n projector, where this matters).
    """
    inactive = np.setdiff1d(np.arange(gram.shape[0]), active)
    if len(active):
        gram_aa_inv = np.linalg.inv(gram[np.ix_(active, active)])
        ua_a = gram_aa_inv @ (dta[active] - n_obj * lam * signs)
        ua_b = gram_aa_inv @ dtb[active]
        g_ia = gram[np.ix_(inactive, active)]
        corr_a = (dta[inactive] - g_ia @ ua_a) / n_obj
        corr_b = (dtb[inactive] - g_ia @ ua_b) / n_obj
        sign_rows = (-signs * ua_a, -signs * ua_b)  # s_j u_j >= 0
    else:
        corr_a, corr_b = dta[inactive] / n_obj, dtb[inactive] / n_obj
        sign_rows = (np.empty(0), np.empty(0))
    intercept = np.concatenate([sign_rows[0], corr_a - lam, -corr_a - lam])
    slope = np.concatenate([sign_rows[1], corr_b, -corr_b])
    return intercept, slope


def lasso_constraints(
    design: np.ndarray,
    wa: np.ndarray,
    wb: np.ndarray,
    lam: float,
    active: np.ndarray,
    signs: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """The polyhedron from the design itself (see :func:`lasso_constraints_gram`)."""
    return lasso_constraints_gram(
        design.T @ design, design.T @ wa, design.T @ wb, design.shape[0], lam, active, signs
    )


def _active_from_coef(coef: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    active = np.flatnonzero(coef != 0.0)
    return active, np.sign(coef[active])


def _violation(gram, dtw, n_obj, lam, active, signs) -> tuple[float, np.ndarray]:
    """Largest KKT violation of (A, s) at the current response and the constraint rows."""
    intercept, _ = lasso_constraints_gram(gram, dtw, np.zeros_like(dtw), n_obj, lam, active, signs)
    return (float(intercept.max()) if intercept.size else -np.inf), intercept


def _repair(gram, dtw, n_obj, lam, active, signs, steps: int = 5):
    """One homotopy move per step: drop an active variable whose sign flipped, or add the inactive
    variable whose correlation exceeds lam (with that sign). Fixes active sets computed right at a
    breakpoint, where solvers round the entering/leaving variable the wrong way."""
    for _ in range(steps):
        worst, rows = _violation(gram, dtw, n_obj, lam, active, signs)
        if worst <= 0.0:
            break
        k = int(np.argmax(rows))
        inactive = np.setdiff1d(np.arange(gram.shape[0]), active)
        if k < len(active):  # sign constraint: remove the variable
            active, signs = np.delete(active, k), np.delete(signs, k)
            continue
        j = inactive[(k - len(active)) % len(inactive)]
        corr = dtw[j]
        if len(active):
            u_a = np.linalg.solve(gram[np.ix_(active, active)], dtw[active] - n_obj * lam * signs)
            corr = corr - gram[j, active] @ u_a
        order = np.argsort(np.append(active, j))
        active = np.append(active, j)[order]
        signs = np.append(signs, np.sign(corr))[order]
    return active, signs


def lasso_active_set(
    design: np.ndarray,
    w: np.ndarray,
    lam: float,
    hint: tuple[np.ndarray, np.ndarray] | None = None,
    gram: np.ndarray | None = None,
    dtw: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Active set and signs of the lasso solution at response w.

    KKT is sufficient for the convex lasso, so any (A, s) whose polyhedron contains w is the answer.
    Tried in order: ``hint`` (the answer at a nearby point of the line), sklearn coordinate descent
    (tol 1e-10, as in the reference experiments), a small homotopy repair of that set, the exact
    LARS-lasso path. A set violating KKT by < 1e-6 (rounding at a breakpoint) is accepted last.
    ``gram`` = D^T D and ``dtw`` = D^T w may be passed when the caller has them cheaply.
    """
    gram = design.T @ design if gram is None else gram
    dtw = design.T @ w if dtw is None else dtw
    n_obj, scale = design.shape[0], max(1.0, lam)
    if hint is not None:
        if _violation(gram, dtw, n_obj, lam, *hint)[0] <= 0.0:
            return hint
        # along the line the active set changes by one variable at a breakpoint: the homotopy move
        # from the previous answer is exact (KKT is sufficient) and far cheaper than a fresh fit
        moved = _repair(gram, dtw, n_obj, lam, *hint, steps=2)
        if _violation(gram, dtw, n_obj, lam, *moved)[0] <= 0.0:
            return moved
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model = Lasso(alpha=lam, fit_intercept=False, max_iter=5000, tol=1e-10)
        model.fit(np.asfortranarray(design), np.ascontiguousarray(w), check_input=False)
    candidates = [_active_from_coef(model.coef_)]
    candidates.append(_repair(gram, dtw, n_obj, lam, *candidates[0]))
    for active, signs in candidates:
        if _violation(gram, dtw, n_obj, lam, active, signs)[0] <= 1e-12 * scale:
            return active, signs
    _, _, coefs = lars_path(design, w, method="lasso", alpha_min=lam)
    candidates.append(_active_from_coef(coefs[:, -1]))
    candidates.append(_repair(gram, dtw, n_obj, lam, *candidates[-1]))
    worst = [_violation(gram, dtw, n_obj, lam, a, s_)[0] for a, s_ in candidates]
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
    gram: np.ndarray | None = None,
    dta: np.ndarray | None = None,
    dtb: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(active, signs, lo, hi): the lasso decision at w(z) = wa + wb z and the interval where it holds.

    ``memo`` (one dict per component and test) carries the last active set as a warm-start hint;
    ``gram``, ``dta``, ``dtb`` (D^T D, D^T wa, D^T wb) may be passed when known in closed form.
    """
    gram = design.T @ design if gram is None else gram
    dta = design.T @ wa if dta is None else dta
    dtb = design.T @ wb if dtb is None else dtb
    hint = memo.get("lasso") if memo is not None else None
    active, signs = lasso_active_set(design, wa + wb * z, lam, hint, gram, dta + dtb * z)
    if memo is not None:
        memo["lasso"] = (active, signs)
    intercept, slope = lasso_constraints_gram(gram, dta, dtb, design.shape[0], lam, active, signs)
    lo, hi = linear_interval(intercept, slope, z)
    return active, signs, lo, hi
