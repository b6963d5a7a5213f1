"""Ingest for {{ cookiecutter.pipeline_name }}: the paper's loaders and generators, seeded by argument."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.tables import standardise


def make_table(n: int, d: int, noise: float, rng: np.random.Generator) -> pd.DataFrame:
    """y = X w + noise with X ~ N(0, I) and w ~ N(0, I): replace with the paper's data."""
    x = rng.standard_normal((n, d))
    w = rng.standard_normal(d)
    frame = pd.DataFrame(x, columns=[f"x{j}" for j in range(d)])
    frame["y"] = x @ w + noise * rng.standard_normal(n)
    return frame


def split(table: pd.DataFrame, test_frac: float, rng: np.random.Generator) -> dict[str, Any]:
    """Random train/test split; features standardised with the training split's statistics."""
    order = rng.permutation(len(table))
    n_test = int(round(test_frac * len(table)))
    test, train = order[:n_test], order[n_test:]
    x = table.drop(columns="y").to_numpy(float)
    y = table["y"].to_numpy(float)
    x_train, mean, scale = standardise(x[train])
    x_test, _, _ = standardise(x[test], mean, scale)
    return {"X_train": x_train, "y_train": y[train], "X_test": x_test, "y_test": y[test]}
