"""scikit-learn's shipped tables (no download) and one `standardise` with a zero-variance guard."""

from __future__ import annotations

import numpy as np

# The loaders that read files inside the scikit-learn wheel; the fetch_* functions download and are banned.
SKLEARN_TABLES = ("digits", "iris", "wine", "breast_cancer", "diabetes", "linnerud")


def load_sklearn_table(name: str, dtype: type = float) -> tuple[np.ndarray, np.ndarray]:
    """(X, y) of one of scikit-learn's bundled datasets, as NumPy arrays (y as shipped)."""
    if name not in SKLEARN_TABLES:
        raise ValueError(
            f"unknown scikit-learn table {name!r}; choose one of {', '.join(SKLEARN_TABLES)} "
            "(the fetch_* datasets download and cannot be used offline)"
        )
    from sklearn import datasets

    bunch = getattr(datasets, f"load_{name}")()
    return np.asarray(bunch.data, dtype=dtype), np.asarray(bunch.target)


def standardise(
    x: np.ndarray,
    mean: np.ndarray | None = None,
    scale: np.ndarray | None = None,
    ddof: int = 0,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x - mean) / std per column, with statistics from ``x`` unless given (e.g. the training split's).

    A constant column (std 0) is centred and left unscaled instead of becoming NaN. Returns the
    standardised array and the (mean, scale) used, so a test split can reuse them.
    """
    if mean is None:
        mean = x.mean(axis=0)
    if scale is None:
        std = x.std(axis=0, ddof=ddof)
        scale = np.where(std > 0, std, 1.0).astype(x.dtype, copy=False)
    return (x - mean) / scale, mean, scale
