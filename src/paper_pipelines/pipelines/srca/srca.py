"""SRCA end to end (official `SRCA.m`): rotate, choose axes, fit (c, r), project onto the sphere.

Model of a fitted SRCA: mean mu (D,), rotation R (D x D), axis set I (k + 1 axes), centre c (rotated
frame, zero off I), radius r, and optionally a weight W (ellipsoid variant). A point x maps to
y = R^T (x - mu); its image is z = c + r P_I(y - c) / ||P_I(y - c)||_W (zero off I); x_hat = R z + mu.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from paper_pipelines.pipelines.srca.ellipsoid import minimum_volume_ellipsoid
from paper_pipelines.pipelines.srca.geometric_loss import fit_sphere_weighted
from paper_pipelines.pipelines.srca.parameters import ModelParams
from paper_pipelines.pipelines.srca.rotation import principal_rotation
from paper_pipelines.pipelines.srca.subset_search import search_axes

logger = logging.getLogger(__name__)

WEIGHTS = ("identity", "mve")


@dataclass
class SRCAModel:
    """A fitted SRCA: everything needed to project new points (out-of-sample) onto the sphere."""

    mean: np.ndarray
    rotation: np.ndarray
    axes: tuple[int, ...]
    center_rotated: np.ndarray
    radius: float
    loss: float
    k: int
    search: str
    n_subsets: int
    weight: np.ndarray | None = field(default=None)
    fit_seconds: float = 0.0

    @property
    def center(self) -> np.ndarray:
        """Centre in the original coordinates (official output `center`)."""
        return self.rotation @ self.center_rotated + self.mean

    def as_dict(self) -> dict:
        """Plain arrays and numbers, for versioned storage."""
        return {
            "mean": self.mean,
            "rotation": self.rotation,
            "axes": list(self.axes),
            "center": self.center,
            "center_rotated": self.center_rotated,
            "radius": self.radius,
            "loss": self.loss,
            "k": self.k,
            "search": self.search,
            "n_subsets": self.n_subsets,
            "weight": self.weight,
            "fit_seconds": self.fit_seconds,
        }


def check_data(X: np.ndarray, k: int, name: str = "X") -> np.ndarray:
    """Reject inputs SRCA cannot use, naming the problem: NaN/inf, constant columns, k >= D, too few points."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n points x D features), got shape {X.shape}")
    n, D = X.shape
    if not np.all(np.isfinite(X)):
        bad = sorted(set(np.where(~np.isfinite(X))[1].tolist()))[:10]
        raise ValueError(
            f"{name} contains NaN or infinite values (columns {bad}); impute or drop them"
        )
    const = np.where(np.ptp(X, axis=0) == 0)[0]
    if const.size:
        raise ValueError(
            f"{name} has constant columns {const[:10].tolist()} (no variance, and standardising would "
            "divide by zero); drop them before SRCA"
        )
    if not 1 <= k < D:
        raise ValueError(
            f"target dimension k must satisfy 1 <= k < D = {D} (a k-sphere needs k + 1 axes), got k={k}"
        )
    if n < k + 2:
        raise ValueError(
            f"SRCA with k={k} needs at least k + 2 = {k + 2} points to fit a {k}-sphere, got n={n}"
        )
    return X


def fit_srca(
    X: np.ndarray,
    k: int,
    subset_search: str = "auto",
    max_subsets: int = 30000,
    rotation: str = "pca",
    weight: str = "identity",
    lambda_penalty: float = 0.0,
    tol: float = 1e-10,
    max_iter: int = 10_000,
    prune: bool = True,
) -> SRCAModel:
    """Fit a k-dimensional SRCA sphere (retain_dim = k + 1 axes) to the rows of X (Sec. 2, `SRCA.m`).

    Steps: (1) centre; (2) rotate onto principal axes; (3) search I and fit (c, r) by the geometric loss;
    (4) keep c on I only (the optimal c off I is the mean, 0, for W = identity).
    ``weight='mve'`` is the ellipsoid variant: W is the minimum-volume enclosing ellipsoid of the rotated
    data, (c, r) minimise the W-weighted loss on the chosen I, and points project radially onto the
    ellipsoid {u : u^T W_II u = r^2}. ``prune=False`` turns off the exact lower-bound pruning of the
    searches (same result for exhaustive, more sphere fits; for timing comparisons).
    """
    X = check_data(X, k)
    if weight not in WEIGHTS:
        raise ValueError(f"weight must be one of {WEIGHTS}, got {weight!r}")
    mean, R = principal_rotation(X, rotation)
    Y = (X - mean) @ R
    size = k + 1
    best, used, count = search_axes(
        Y,
        size,
        search=subset_search,
        max_subsets=max_subsets,
        tol=tol,
        max_iter=max_iter,
        lambda_penalty=lambda_penalty,
        prune=prune,
    )
    W = None
    if weight == "mve":
        W, _ = minimum_volume_ellipsoid(Y)
        best = fit_sphere_weighted(Y, best.axes, W, lambda_penalty=lambda_penalty, tol=tol)
    center = np.zeros(X.shape[1])
    center[list(best.axes)] = best.center[list(best.axes)]
    logger.info(
        "SRCA k=%d: %s search over %d axis sets chose axes %s, radius %.4g, loss/n %.4g",
        k,
        used,
        count,
        list(best.axes),
        best.radius,
        best.loss / X.shape[0],
    )
    return SRCAModel(
        mean=mean,
        rotation=R,
        axes=tuple(best.axes),
        center_rotated=center,
        radius=float(best.radius),
        loss=float(best.loss),
        k=k,
        search=used,
        n_subsets=count,
        weight=W,
    )


def _sphere_image(model: SRCAModel, X: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rotated coordinates of the projections (n x D) and the in-I offsets from the centre (n x (k+1))."""
    X = np.asarray(X, dtype=float)
    if X.ndim != 2 or X.shape[1] != model.mean.shape[0]:
        raise ValueError(
            f"points to project must have shape (n, {model.mean.shape[0]}), got {np.shape(X)}"
        )
    Y = (X - model.mean) @ model.rotation
    idx = list(model.axes)
    u = Y[:, idx] - model.center_rotated[idx]
    if model.weight is None:
        norms = np.linalg.norm(u, axis=1)
    else:
        W_II = model.weight[np.ix_(idx, idx)]
        norms = np.sqrt(np.clip(np.einsum("ij,jk,ik->i", u, W_II, u), 0.0, None))
    # A point exactly at the centre has no direction; send it to an arbitrary pole.
    zero = norms == 0
    if zero.any():
        u = u.copy()
        u[zero] = 0.0
        u[zero, 0] = 1.0
        pole = 1.0 if model.weight is None else float(np.sqrt(model.weight[idx[0], idx[0]]))
        norms = np.where(zero, pole, norms)
    offsets = model.radius * u / norms[:, None]
    Z = np.zeros_like(Y)
    Z[:, idx] = model.center_rotated[idx] + offsets
    return Z, offsets


def project(model: SRCAModel, X: np.ndarray) -> np.ndarray:
    """Step 4 / `SRCA_projection`: map points (in- or out-of-sample) onto the fitted sphere, in R^D."""
    Z, _ = _sphere_image(model, X)
    return Z @ model.rotation.T + model.mean


def reduced_coordinates(model: SRCAModel, X: np.ndarray) -> np.ndarray:
    """Official `reduced_matrix`: sphere points relative to the centre on the k + 1 chosen axes (n x (k+1))."""
    _, offsets = _sphere_image(model, X)
    return offsets


# ----------------------------------------------------------------------------- every data set and k


def fit_key(name: str, k: int, split: str) -> str:
    """Key of one fit: data set, target dimension and the data it saw ('full' or 'train')."""
    return f"{name}/k{k}/{split}"


def fit_splits(d: dict, out_of_sample: bool) -> list[tuple[str, np.ndarray]]:
    """The data each model is fitted on: all points (Table 4.1), and the training half (Table H.1)."""
    out = [("full", d["X"])]
    if out_of_sample:
        out.append(("train", d["X"][d["train"]]))
    return out


def fit_srca_models(
    prepared: dict[str, dict[str, Any]], model: ModelParams
) -> dict[str, SRCAModel]:
    """SRCA for every data set and k of ``srca.model.k``, on all points and on the training half."""
    fits: dict[str, SRCAModel] = {}
    for name, d in prepared.items():
        ks = model.k.get(name)
        if not ks:
            raise ValueError(
                f"parameter srca.model.k has no entry for data set {name!r}; add k: [1]"
            )
        search = model.search_overrides.get(name, model.subset_search)
        for k in ks:
            for split, X in fit_splits(d, model.out_of_sample):
                start = time.perf_counter()
                m = fit_srca(
                    X,
                    k,
                    subset_search=search,
                    max_subsets=model.max_subsets,
                    rotation=model.rotation,
                    weight=model.weight,
                    lambda_penalty=model.lambda_penalty,
                    tol=model.tol,
                    max_iter=model.max_iter,
                    prune=model.prune,
                )
                m.fit_seconds = time.perf_counter() - start
                fits[fit_key(name, k, split)] = m
                logger.info("SRCA %s fitted in %.2f s", fit_key(name, k, split), m.fit_seconds)
    return fits


def srca_embeddings(
    prepared: dict[str, dict[str, Any]], srca_models: dict[str, SRCAModel]
) -> dict[str, dict[str, np.ndarray]]:
    """The low-dimensional SRCA representation of every data set (official `reduced_matrix`)."""
    out = {}
    for key, m in srca_models.items():
        name, _, split = key.split("/")
        if split == "full":
            out[key] = {
                "reduced": reduced_coordinates(m, prepared[name]["X"]),
                "center": m.center,
                "radius": np.array(m.radius),
                "axes": np.array(m.axes),
            }
    return out
