"""The paper's measures (Sec. 6): rejection rates at alpha (type-I error under the null, power otherwise)
and a Kolmogorov-Smirnov test of the uniformity of the p-values; pure functions of a p-value table."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats


def rejection_summary(table: pd.DataFrame, alpha: float) -> dict[str, float]:
    """Rejection rates at alpha (FPR under the null, power otherwise) and a KS test of uniformity."""
    if table.empty:
        return {"n_tests": 0}
    out = {
        "n_tests": int(len(table)),
        "parametric": float(np.mean(table["p_parametric"] <= alpha)),
        "oc": float(np.mean(table["p_oc"] <= alpha)),
        "naive": float(np.mean(table["p_naive"] <= alpha)),
        "mean_cpu_seconds_parametric": float(table["cpu_seconds"].mean()),
        "mean_cpu_seconds_oc": float(table["cpu_seconds_oc"].mean()),
        "mean_search_count": float(table["search_count"].mean()),
    }
    for col, key in (("p_parametric", "ks_parametric"), ("p_oc", "ks_oc"), ("p_naive", "ks_naive")):
        out[key] = float(stats.kstest(table[col], "uniform").pvalue)
    return out


def rejection_rate(p_values: pd.Series, alpha: float) -> float:
    """Share of tests with p <= alpha."""
    return float(np.mean(p_values <= alpha))
