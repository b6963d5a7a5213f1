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


def _inactive(m: int, active: np.ndarray) -> np.ndarray:
    """Sorted indices of 0 .. m - 1 outside ``active`` (np.setdiff1d without its sort)."""
    keep = np.ones(m, dtype=bool)
    keep[active] = False
    return np.flatnonzero(keep)


def _pieces(gram: np.ndarray, active: np.ndarray, cache: dict | None = None):
    """(inactive, (G_AA)^{-1}, G_IA) of an active set: what its polyhedron needs besides D^T w.

    ``cache`` (one dict per design) keeps them per active set: along a line the same few sets recur.
    """
    key = active.tobytes()
    if cache is not None and key in cache:
        return cache[key]
    inactive = _inactive(gram.shape[0], active)
    inv = g_ia = None
    if len(active):
        # columns first: soft-IPOD's Gram is n x n and only its |A| active columns are needed
        g_a = gram[:, active]
        inv, g_ia = np.linalg.inv(g_a[active]), g_a[inactive]
    if cache is not None:
        cache[key] = (inactive, inv, g_ia)
    return inactive, inv, g_ia


def _polyhedron(gram, dta, dtb, n_obj, lam, active, signs, cache=None):
    """Intercept rows of the Lee et al. polyhedron and, unless ``dtb`` is None, its slope rows."""
    inactive, gram_aa_inv, g_ia = _pieces(gram, active, cache)
    if len(active):
        ua_a = gram_aa_inv @ (dta[active] - n_obj * lam * signs)
        corr_a = (dta[inactive] - g_ia @ ua_a) / n_obj
        sign_a = -signs * ua_a  # s_j u_j >= 0
    else:
        corr_a, sign_a = dta[inactive] / n_obj, np.empty(0)
    intercept = np.concatenate([sign_a, corr_a - lam, -corr_a - lam])
    if dtb is None:
        return intercept, None
    if len(active):
        ua_b = gram_aa_inv @ dtb[active]
        corr_b = (dtb[inactive] - g_ia @ ua_b) / n_obj
        sign_b = -signs * ua_b
    else:
        corr_b, sign_b = dtb[inactive] / n_obj, np.empty(0)
    return intercept, np.concatenate([sign_b, corr_b, -corr_b])


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
    return _polyhedron(gram, dta, dtb, n_obj, lam, active, signs)


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


def _violation(gram, dtw, n_obj, lam, active, signs, cache=None) -> tuple[float, np.ndarray]:
    """Largest KKT violation of (A, s) at the current response and the constraint rows."""
    intercept, _ = _polyhedron(gram, dtw, None, n_obj, lam, active, signs, cache)  # no slope
    return (float(intercept.max()) if intercept.size else -np.inf), intercept


def _repair(gram, dtw, n_obj, lam, active, signs, steps: int = 5, cache=None):
    """One homotopy move per step: drop an active variable whose sign flipped, or add the inactive
    variable whose correlation exceeds lam (with that sign). Fixes active sets computed right at a
    breakpoint, where solvers round the entering/leaving variable the wrong way."""
    for _ in range(steps):
        worst, rows = _violation(gram, dtw, n_obj, lam, active, signs, cache)
        if worst <= 0.0:
            break
        k = int(np.argmax(rows))
        inactive = _inactive(gram.shape[0], active)
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
    cache: dict | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Active set and signs of the lasso solution at response w.

    KKT is sufficient for the convex lasso, so any (A, s) whose polyhedron contains w is the answer.
    Tried in order: ``hint`` (the answer at a nearby point of the line), sklearn coordinate descent
    (tol 1e-10, as in the reference experiments), a small homotopy repair of that set, the exact
    LARS-lasso path. A set violating KKT by < 1e-6 (rounding at a breakpoint) is accepted last.
    ``gram`` = D^T D and ``dtw`` = D^T w may be passed when the caller has them cheaply, and a
    ``cache`` dict of the design's per-active-set pieces (see :func:`_pieces`).
    """
    gram = design.T @ design if gram is None else gram
    dtw = design.T @ w if dtw is None else dtw
    n_obj, scale = design.shape[0], max(1.0, lam)
    if hint is not None:
        if _violation(gram, dtw, n_obj, lam, *hint, cache)[0] <= 0.0:
            return hint
        # along the line the active set changes by one variable at a breakpoint: the homotopy move
        # from the previous answer is exact (KKT is sufficient) and far cheaper than a fresh fit
        moved = _repair(gram, dtw, n_obj, lam, *hint, steps=2, cache=cache)
        if _violation(gram, dtw, n_obj, lam, *moved, cache)[0] <= 0.0:
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


def _hint(memo: dict | None, z: float, key: object, labels: np.ndarray):
    """Warm start from earlier answers: the one at the nearest point of this line with the same
    design, else the latest one (from another design or line), its variables matched by label.

    The search alternates between the two edges of its block, so the previous point often lies
    on the far side; the nearest point's active set is at most one homotopy move away."""
    if memo is None or not memo.get("last"):
        return None
    same = [ans for ans in memo.get("answers", ()) if ans[1] == key]
    _, _, act_labels, signs = min(same, key=lambda ans: abs(ans[0] - z)) if same else memo["last"]
    pos = np.minimum(np.searchsorted(labels, act_labels), len(labels) - 1)
    found = labels[pos] == act_labels
    return pos[found], signs[found]


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
    labels: np.ndarray | None = None,
    key: object = None,
    cache: dict | None = None,
) -> tuple[np.ndarray, np.ndarray, float, float]:
    """(active, signs, lo, hi): the lasso decision at w(z) = wa + wb z and the interval where it holds.

    ``memo`` (one dict per component and test) keeps the answers so far as warm-start hints
    (``memo["answers"]``: this line's, ``memo["last"]``: the latest on any line); ``labels`` (sorted,
    default 0 .. m - 1) name the design's columns and ``key`` the design, so that a hint from another
    design maps by label. A hint is only a start: the answer is certified by KKT (see
    :func:`lasso_active_set`). ``gram``, ``dta``, ``dtb`` (D^T D, D^T wa, D^T wb) may be passed when
    known in closed form; ``cache``, a dict kept for this design and line, holds each active set's
    pieces and polyhedron (the same arithmetic, done once).
    """
    gram = design.T @ design if gram is None else gram
    dta = design.T @ wa if dta is None else dta
    dtb = design.T @ wb if dtb is None else dtb
    labels = np.arange(gram.shape[0]) if labels is None else np.asarray(labels)
    hint = _hint(memo, z, key, labels)
    active, signs = lasso_active_set(design, wa + wb * z, lam, hint, gram, dta + dtb * z, cache)
    if memo is not None:
        answer = (float(z), key, labels[active], signs)
        answers = memo.setdefault("answers", [])
        answers.append(answer)
        del answers[:-64]  # the nearest of the recent points is as good a start
        memo["last"] = answer
    rows_key = ("rows", active.tobytes(), signs.tobytes())
    rows = cache.get(rows_key) if cache is not None else None
    if rows is None:
        rows = _polyhedron(gram, dta, dtb, design.shape[0], lam, active, signs, cache)
        if cache is not None:
            cache[rows_key] = rows
    lo, hi = linear_interval(*rows, z)
    return active, signs, lo, hi
