"""The optimiser anchors (spec: Anchors): scikit-learn one-vs-rest LogisticRegression, RidgeClassifier and
LinearSVC(hinge) on the real set, and our projected-Adam trainer at the matched regularisation.

Matching: for a convex loss the penalised problem (sklearn, penalty on every weight, the bias column
included) and the constrained one (ours, ||w_j|| <= Lambda_j) have the same minimiser when Lambda_j is the
norm of the penalised solution, so both trainers must reach the same classifier. The spec's regularisation
constants are for standardised features; our feature map divides them by s = sqrt(D + 1), so an equivalent
penalty multiplies C by s^2 (logistic, hinge) and divides alpha by s^2 (ridge).
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import pandas as pd

from . import hypothesis, metrics, training

SKLEARN_FOR_LOSS = {
    "logistic": "sklearn_logistic",
    "squared": "sklearn_ridge",
    "hinge": "sklearn_svc",
}


def sklearn_weights(name: str, x: np.ndarray, y: np.ndarray, strength: float) -> np.ndarray:
    """One-vs-rest weights (D x c) of a scikit-learn linear model without a separate intercept."""
    from sklearn.linear_model import LogisticRegression, RidgeClassifier
    from sklearn.multiclass import OneVsRestClassifier
    from sklearn.svm import LinearSVC

    y01 = (y > 0).astype(int)
    if name == "sklearn_ridge":
        est = RidgeClassifier(alpha=strength, fit_intercept=False).fit(x, y)
        return np.atleast_2d(est.coef_).T
    if name == "sklearn_logistic":
        base = LogisticRegression(C=strength, fit_intercept=False, max_iter=5000, tol=1e-8)
    else:
        base = LinearSVC(
            loss="hinge", C=strength, fit_intercept=False, max_iter=20000, random_state=0
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = OneVsRestClassifier(base).fit(x, y01)
    return np.column_stack([e.coef_.ravel() for e in est.estimators_])


def anchor_comparison(
    x_tr: np.ndarray,
    y_tr: np.ndarray,
    x_te: np.ndarray,
    y_te: np.ndarray,
    anchors,
    steps: int,
    lr: float,
    seed: int,
) -> pd.DataFrame:
    """Train / test Hamming loss, 1 - Macro-AUC and fit seconds per label of each sklearn model and of ours."""
    scale2 = float(x_tr.shape[1])  # s^2 = D + 1 (the bias is one of the x_tr columns)
    strengths = {
        "sklearn_logistic": anchors.logistic_C * scale2,
        "sklearn_ridge": anchors.ridge_alpha / scale2,
        "sklearn_svc": anchors.svc_C * scale2,
    }
    rows = []
    c = y_tr.shape[1]
    for loss, name in SKLEARN_FOR_LOSS.items():
        started = time.process_time()
        w = sklearn_weights(name, x_tr, y_tr, strengths[name])
        sk_seconds = (time.process_time() - started) / c
        lam = np.linalg.norm(w, axis=0)
        started = time.process_time()
        ours = training.fit(
            x_tr, y_tr, loss, "linear", lam, 5, steps, lr, np.random.default_rng(seed)
        )
        our_seconds = (time.process_time() - started) / c
        for method, params, seconds in (
            (name, {"W": w}, sk_seconds),
            (f"ours_{loss}", ours, our_seconds),
        ):
            s_tr = hypothesis.scores(params, x_tr).astype(np.float64)
            s_te = hypothesis.scores(params, x_te).astype(np.float64)
            rows.append(
                {
                    "method": method, "loss": loss, "anchor": name, "n": len(x_tr), "c": c,
                    "strength": strengths[name],
                    "train_hamming": metrics.hamming_loss(s_tr, y_tr),
                    "test_hamming": metrics.hamming_loss(s_te, y_te),
                    "train_auc_loss": 1 - metrics.macro_auc(s_tr, y_tr),
                    "test_auc_loss": 1 - metrics.macro_auc(s_te, y_te),
                    "test_ranking": metrics.ranking_loss(s_te, y_te),
                    "seconds_per_label": seconds,
                    "mean_weight_norm": float(np.linalg.norm(params["W"], axis=0).mean()),
                }
            )  # fmt: skip
    return pd.DataFrame(rows)
