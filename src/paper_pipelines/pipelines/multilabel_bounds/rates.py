"""Rates read off the gap table (spec: fit_rates): least-squares slopes of log gap against log n and log c,
and the additive-slack c-trend gap(c_hi) - k gap(c_lo) (never a raw ratio: small gaps are noise-dominated).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CELL = ["block", "model", "loss", "eta", "n", "c"]


def loglog_slope(x: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of log y against log x over the points with y > 0 (NaN with fewer than two)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = (y > 0) & np.isfinite(y)
    if len(np.unique(x[keep])) < 2:
        return float("nan")
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0])


def cell_means(gaps: pd.DataFrame) -> pd.DataFrame:
    """Every measure averaged over replicates, splits and label subsets: one row per grid cell."""
    numeric = [c for c in gaps.columns if c.startswith(("train_", "test_", "gap_"))]
    return gaps.groupby(CELL, as_index=False)[numeric].mean()


def n_slopes(cells: pd.DataFrame, measure: str = "surrogate") -> pd.DataFrame:
    """Per (block, model, loss, eta, c): slope of log gap_<measure> against log n."""
    rows = []
    for key, group in cells.groupby(["block", "model", "loss", "eta", "c"]):
        group = group.sort_values("n")
        rows.append(
            {
                **dict(zip(["block", "model", "loss", "eta", "c"], key, strict=True)),
                "measure": measure,
                "slope_n": loglog_slope(group["n"], group[f"gap_{measure}"]),
                "points": int((group[f"gap_{measure}"] > 0).sum()),
            }
        )
    return pd.DataFrame(rows)


def c_trends(
    cells: pd.DataFrame, c_lo: int, c_hi: int, k: float, measure: str = "surrogate"
) -> pd.DataFrame:
    """Per (block, model, loss, eta, n): gap(c_hi) / gap(c_lo), gap(c_hi) - k gap(c_lo), slope against log c."""
    rows = []
    for key, group in cells.groupby(["block", "model", "loss", "eta", "n"]):
        by_c = group.set_index("c")[f"gap_{measure}"]
        lo, hi = by_c.get(c_lo, np.nan), by_c.get(c_hi, np.nan)
        rows.append(
            {
                **dict(zip(["block", "model", "loss", "eta", "n"], key, strict=True)),
                "measure": measure,
                "k": k,
                "ratio": hi / lo if lo and np.isfinite(lo) else np.nan,
                "excess": hi - k * lo,
                "slope_c": loglog_slope(by_c.index.to_numpy(), by_c.to_numpy()),
            }
        )
    return pd.DataFrame(rows)


def worst(values: pd.Series, how: str = "max") -> float:
    """max (or min) of the finite values; NaN when there are none (the claim then does not hold)."""
    finite = values[np.isfinite(values.astype(float))]
    if finite.empty:
        return float("nan")
    return float(finite.max() if how == "max" else finite.min())
