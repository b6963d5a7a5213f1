"""The ten capability test suites (paper Sec. 4.3): level filters over the five complexity dimensions,
and per-capability scores with bootstrap confidence intervals."""

from __future__ import annotations

import numpy as np


def matches(levels: dict[str, str], rule: dict[str, list[str]]) -> bool:
    """A task belongs to a capability when each named dimension is at one of the allowed levels."""
    return all(levels[dim] in allowed for dim, allowed in rule.items())


def build_suites(
    tasks: list[dict],
    rules: dict[str, dict[str, list[str]]],
    per_capability: int,
    rng: np.random.Generator,
) -> dict[str, list[str]]:
    """Each capability's task ids: up to ``per_capability`` matching tasks, drawn without replacement."""
    suites = {}
    for name, rule in rules.items():
        ids = [t["task_id"] for t in tasks if matches(t["levels"], rule)]
        if len(ids) > per_capability:
            ids = [ids[i] for i in sorted(rng.choice(len(ids), per_capability, replace=False))]
        suites[name] = ids
    return suites


def bootstrap_ci(
    values: np.ndarray, n_boot: int, level: float, rng: np.random.Generator
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (NaN for an empty sample)."""
    values = np.asarray(values, dtype=float)
    if values.size == 0:
        return float("nan"), float("nan")
    means = rng.choice(values, size=(n_boot, values.size), replace=True).mean(axis=1)
    alpha = (1 - level) / 2
    return float(np.quantile(means, alpha)), float(np.quantile(means, 1 - alpha))
