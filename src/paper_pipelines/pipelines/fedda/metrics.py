"""The paper's measure: top-1 accuracy of each client's personalised model on its own test split,
averaged over clients ("Global test acc" = mean of local accuracies), here also over the last rounds
and the repeats."""

from __future__ import annotations

import numpy as np
import pandas as pd


def client_mean_by_round(runs: pd.DataFrame) -> pd.DataFrame:
    """Mean over clients of the accuracy, per (method, setting, repeat, round)."""
    keys = ["method", "setting", "repeat", "round"]
    return runs.groupby(keys, as_index=False, sort=False)["accuracy"].mean()


def last_rounds_mean(runs: pd.DataFrame, last: int) -> pd.DataFrame:
    """Per (method, setting, repeat): the client-mean accuracy averaged over the last ``last`` rounds."""
    curve = client_mean_by_round(runs)
    final = curve.groupby(["method", "setting"])["round"].transform("max")
    tail = curve[curve["round"] > final - last]
    return tail.groupby(["method", "setting", "repeat"], as_index=False, sort=False)[
        "accuracy"
    ].mean()


def per_client_last_rounds(runs: pd.DataFrame, last: int) -> pd.DataFrame:
    """Per (method, setting, client): accuracy over the last ``last`` rounds and all repeats."""
    final = runs.groupby(["method", "setting"])["round"].transform("max")
    tail = runs[runs["round"] > final - last]
    return tail.groupby(["method", "setting", "client"], as_index=False, sort=False)[
        "accuracy"
    ].mean()


def mean_and_std(values: np.ndarray) -> tuple[float, float]:
    """Mean and (population) standard deviation over repeats; NaN for no values."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return float("nan"), float("nan")
    return float(values.mean()), float(values.std())
