"""Ingest: scikit-learn's shipped tables (digits, wine, breast cancer, iris) and a multi-view generator.

Both are seeded by argument (a NumPy Generator, a sub-stream of ``core_kernel.seed``).
"""

from __future__ import annotations

import numpy as np

from paper_pipelines.common.tables import load_sklearn_table, standardise


def load_sklearn(
    name: str, n: int | None, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """Standardised features and labels of a shipped table; a uniform subsample of n points if n is set."""
    x, y = load_sklearn_table(name)
    y = y.astype(int)
    if n is not None and n < len(y):
        idx = np.sort(rng.choice(len(y), n, replace=False))
        x, y = x[idx], y[idx]
    x, _, _ = standardise(x)
    return x, y


def make_multiview_blobs(
    n: int,
    k: int,
    views: int,
    dim: int,
    separation: float,
    noise: list[float] | None,
    irrelevant_dims: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, list[slice]]:
    """k Gaussian clusters seen through ``views`` views; view v has its own means and noise level.

    Returns the concatenated features, labels and the column slice of each view. View v's noise
    grows with v (default 1, 1.5, 2, ...) and each view carries ``irrelevant_dims`` pure-noise columns,
    so the views are unequally informative and the kernel weights matter.
    """
    labels = rng.integers(0, k, n)
    noise = noise or [1.0 + 0.5 * v for v in range(views)]
    blocks, slices, start = [], [], 0
    for v in range(views):
        means = rng.standard_normal((k, dim)) * separation
        view = means[labels] + rng.standard_normal((n, dim)) * noise[v % len(noise)]
        view = np.hstack([view, rng.standard_normal((n, irrelevant_dims))])
        blocks.append(view)
        slices.append(slice(start, start + view.shape[1]))
        start += view.shape[1]
    return np.hstack(blocks), labels, slices
