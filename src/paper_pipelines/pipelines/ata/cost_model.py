"""Cost model of ATA (Sec. 2 of the paper): random task times, round time and total worker time.

A worker's task time is ``X_i = shift_i + spread_i * N`` with ``N`` a unit-mean noise of one family:

- ``shifted_exponential`` (the paper's experiments): ``N ~ Exp(1)``;
- ``lognormal``: ``N = exp(sigma * Z - sigma**2 / 2)``, ``Z ~ N(0, 1)``;
- ``pareto`` (heavy tail, Lomax): ``N = (shape - 1) * (U**(-1 / shape) - 1)``, ``U ~ U(0, 1)``.

so ``mu_i = shift_i + spread_i`` for every family.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy.optimize import brentq

FAMILIES = ("shifted_exponential", "lognormal", "pareto")


def mean_task_times(n: int, scale: float, shift_factor: float) -> np.ndarray:
    """The paper's generator: worker i (1-based) has mean ``scale * (1 + shift_factor) * i``.

    With ``shift_factor = 1`` this is ``X_i ~ scale*i + Exp(scale*i)``, i.e. the poster's ``29i + Exp(29i)``
    for ``scale = 29``.
    """
    if n < 1:
        raise ValueError(f"the number of workers n must be >= 1, got {n}")
    if scale <= 0:
        raise ValueError(f"scale must be > 0 (mean task times must be positive), got {scale}")
    return scale * (1.0 + shift_factor) * np.arange(1, n + 1, dtype=float)


def split_mean(mu: np.ndarray, shift_factor: float) -> tuple[np.ndarray, np.ndarray]:
    """Split each mean into a deterministic shift and the mean of the random part (spread)."""
    mu = np.asarray(mu, dtype=float)
    if np.any(~np.isfinite(mu)) or np.any(mu <= 0):
        raise ValueError(f"mean task times must be finite and > 0, got {mu.tolist()}")
    if shift_factor < 0:
        raise ValueError(f"shift_factor must be >= 0, got {shift_factor}")
    spread = mu / (1.0 + shift_factor)
    return mu - spread, spread


@cache
def psi1_norm_centred_exponential() -> float:
    """Orlicz norm ||E - 1||_psi1 for E ~ Exp(1): the C solving E exp(|E - 1| / C) = 2 (about 1.531).

    E exp(|E-1|/C) = e^{1/C} (1 - e^{-(1+1/C)}) / (1 + 1/C) + e^{-1} / (1 - 1/C) for C > 1.
    """

    def excess(c: float) -> float:
        t = 1.0 / c
        return np.exp(t) * (1.0 - np.exp(-(1.0 + t))) / (1.0 + t) + np.exp(-1.0) / (1.0 - t) - 2.0

    return float(brentq(excess, 1.0 + 1e-9, 100.0))


def unit_noise_std(family: str, lognormal_sigma: float = 1.0, pareto_shape: float = 3.0) -> float:
    """Standard deviation of the unit-mean noise N of a family."""
    check_family(family)
    if family == "shifted_exponential":
        return 1.0
    if family == "lognormal":
        return float(np.sqrt(np.expm1(lognormal_sigma**2)))
    if pareto_shape <= 2:
        raise ValueError(f"pareto_shape must be > 2 (finite variance), got {pareto_shape}")
    return float(np.sqrt(pareto_shape / (pareto_shape - 2.0)))


def sub_exponential_norms(
    spread: np.ndarray, family: str, lognormal_sigma: float = 1.0, pareto_shape: float = 3.0
) -> np.ndarray:
    """alpha_i = ||X_i - mu_i||_psi1 (Sec. 2, sub-exponential noise).

    Exact for the shifted exponential (``1.531 * spread_i``). Lognormal and Pareto noise are not
    sub-exponential (the norm is infinite); for them we use the value an exponential of the same standard
    deviation would have (``1.531 * sd_i``), i.e. ATA runs with a mis-specified alpha on purpose.
    """
    c = psi1_norm_centred_exponential()
    return c * unit_noise_std(family, lognormal_sigma, pareto_shape) * np.asarray(spread, float)


def check_family(family: str) -> None:
    """Fail clearly on an unknown time family."""
    if family not in FAMILIES:
        raise ValueError(f"unknown worker-time family {family!r}; allowed: {', '.join(FAMILIES)}")


def sample_unit_noise(
    family: str,
    size: tuple[int, ...],
    rng: np.random.Generator,
    lognormal_sigma: float = 1.0,
    pareto_shape: float = 3.0,
) -> np.ndarray:
    """Draw unit-mean noise N of the family (see the module docstring)."""
    check_family(family)
    if family == "shifted_exponential":
        return rng.standard_exponential(size)
    if family == "lognormal":
        s = lognormal_sigma
        return np.exp(s * rng.standard_normal(size) - 0.5 * s * s)
    a = pareto_shape
    return (a - 1.0) * (rng.random(size) ** (-1.0 / a) - 1.0)


def sample_task_times(
    shift: np.ndarray,
    spread: np.ndarray,
    family: str,
    n_rounds: int,
    max_tasks: int,
    rng: np.random.Generator,
    lognormal_sigma: float = 1.0,
    pareto_shape: float = 3.0,
) -> np.ndarray:
    """Task times X[k, i, u] of the u-th task of worker i in round k, shape (n_rounds, n, max_tasks)."""
    n = len(shift)
    noise = sample_unit_noise(family, (n_rounds, n, max_tasks), rng, lognormal_sigma, pareto_shape)
    return shift[None, :, None] + spread[None, :, None] * noise


def round_time(cum_times: np.ndarray, a: np.ndarray) -> float:
    """C(a) = max over {i : a_i > 0} of sum_{u <= a_i} X_i^u (Sec. 2); ``cum_times[i, u]`` = sum of the first u+1."""
    busy = a > 0
    return float(cum_times[busy, a[busy] - 1].max())


def worker_time(cum_times: np.ndarray, a: np.ndarray) -> float:
    """Total busy time of an allocation: each worker works exactly its a_i tasks, nothing is wasted."""
    busy = a > 0
    return float(cum_times[busy, a[busy] - 1].sum())
