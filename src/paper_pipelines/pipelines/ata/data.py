"""Ingest and preprocess: sklearn digits (the optimisation problem) and the worker instance (the timing layer).

Randomness comes in by argument: a NumPy generator for the worker-id shuffle, an integer seed for the
scikit-learn split.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.tables import load_sklearn_table, standardise
from paper_pipelines.pipelines.ata import cost_model
from paper_pipelines.pipelines.ata.allocation import proxy_loss
from paper_pipelines.pipelines.ata.baselines import fta_allocation


def load_digits_frame() -> pd.DataFrame:
    """sklearn's digits (1797 x 64 pixels, 10 classes; shipped inside the wheel, no download)."""
    X, y = load_sklearn_table("digits")
    frame = pd.DataFrame(X, columns=[f"pixel_{j}" for j in range(X.shape[1])])
    frame["label"] = y.astype(np.int64)
    return frame


def split_and_scale(frame: pd.DataFrame, holdout_frac: float, seed: int) -> dict[str, np.ndarray]:
    """Stratified train/holdout split, features standardised with the training statistics."""
    from sklearn.model_selection import train_test_split

    if "label" not in frame.columns or frame.shape[1] < 2:
        raise ValueError(
            f"the data must have a 'label' column and features, got {list(frame.columns)}"
        )
    X = frame.drop(columns="label").to_numpy(np.float32)
    y = frame["label"].to_numpy(np.int64)
    X_tr, X_ho, y_tr, y_ho = train_test_split(
        X, y, test_size=holdout_frac, random_state=seed, stratify=y
    )
    # The holdout reuses the training mean and scale (a zero-variance pixel keeps scale 1).
    X_tr, mean, scale = standardise(X_tr)
    X_ho, _, _ = standardise(X_ho, mean, scale)
    return {"X_train": X_tr, "y_train": y_tr, "X_holdout": X_ho, "y_holdout": y_ho}


def worker_profiles(
    n: int,
    B: int,
    family: str,
    scale: float,
    shift_factor: float,
    means: list[float] | None,
    lognormal_sigma: float,
    pareto_shape: float,
    rng: np.random.Generator | None,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Per-worker shift, spread, mean mu_i and alpha_i; instance constants alpha, eta, a* (Sec. 2).

    ``rng`` shuffles the worker ids (None keeps them in speed order).
    """
    mu = (
        np.asarray(means, dtype=float)
        if means is not None
        else cost_model.mean_task_times(n, scale, shift_factor)
    )
    speed_rank = np.arange(1, n + 1)
    if rng is not None:
        # Worker ids carry no information about speed (guards against index-order tie advantages).
        perm = rng.permutation(n)
        mu, speed_rank = mu[perm], speed_rank[perm]
    shift, spread = cost_model.split_mean(mu, shift_factor)
    alpha_i = cost_model.sub_exponential_norms(spread, family, lognormal_sigma, pareto_shape)
    profiles = pd.DataFrame(
        {
            "worker": np.arange(n),
            "input_order": speed_rank,
            "shift": shift,
            "spread": spread,
            "mu": mu,
            "alpha": alpha_i,
        }
    )
    a_star = fta_allocation(mu, B)
    meta = {
        "n": n,
        "B": B,
        "family": family,
        "alpha": float(alpha_i.max()),
        "eta": float((alpha_i / mu).max()),
        "a_star": a_star.tolist(),
        "proxy_star": proxy_loss(a_star, mu),
        "sandwich_upper": float(1.0 + 4.0 * (alpha_i / mu).max() * np.log(B)),
    }
    return profiles, meta
