"""Base losses l(t) of the margin t = y_j f_j(x) and the multi-label surrogate built from them (spec: Setting).

Each loss has its value, its derivative and the two constants the bounds use: the Lipschitz constant rho on
the margins the class can produce, and the smoothness gamma (Lipschitz constant of l'), infinite for hinge.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

SMOOTH = ("squared", "logistic", "squared_hinge")
LOSSES = (*SMOOTH, "hinge")


def squared(t: np.ndarray) -> np.ndarray:
    """(1 - t)^2: gamma = 2 (for y in {-1, +1} it is (y - f)^2, the ridge loss)."""
    return (1.0 - t) ** 2


def d_squared(t: np.ndarray) -> np.ndarray:
    return -2.0 * (1.0 - t)


def logistic(t: np.ndarray) -> np.ndarray:
    """log(1 + e^-t): 1-Lipschitz and gamma = 1/4."""
    return np.logaddexp(0.0, -t)


def d_logistic(t: np.ndarray) -> np.ndarray:
    return -expit(-t)


def squared_hinge(t: np.ndarray) -> np.ndarray:
    """max(0, 1 - t)^2: gamma = 2."""
    return np.maximum(0.0, 1.0 - t) ** 2


def d_squared_hinge(t: np.ndarray) -> np.ndarray:
    return -2.0 * np.maximum(0.0, 1.0 - t)


def hinge(t: np.ndarray) -> np.ndarray:
    """max(0, 1 - t): 1-Lipschitz, not smooth (the Lipschitz-only baseline)."""
    return np.maximum(0.0, 1.0 - t)


def d_hinge(t: np.ndarray) -> np.ndarray:
    """A subgradient: -1 where t < 1, else 0."""
    return -(t < 1.0).astype(t.dtype)


def identity(t: np.ndarray) -> np.ndarray:
    """l(t) = t: turns the loss-class complexity into the hypothesis-class one (the ascent's anchor)."""
    return t


def d_identity(t: np.ndarray) -> np.ndarray:
    return np.ones_like(t)


@dataclass(frozen=True)
class BaseLoss:
    name: str
    value: object
    derivative: object
    gamma: float  # smoothness: l' is gamma-Lipschitz (inf: not smooth)

    def lipschitz(self, bound: float) -> float:
        """rho on margins |t| <= bound (B = Lambda * kappa): sup |l'(t)|."""
        if self.name in ("squared", "squared_hinge"):
            return 2.0 * (1.0 + bound)
        return 1.0

    def bound(self, bound: float) -> float:
        """M = sup l(t) on |t| <= bound (the loss's range on the class)."""
        return float(self.value(np.array([-bound]))[0])


_TABLE = {
    "squared": BaseLoss("squared", squared, d_squared, 2.0),
    "logistic": BaseLoss("logistic", logistic, d_logistic, 0.25),
    "squared_hinge": BaseLoss("squared_hinge", squared_hinge, d_squared_hinge, 2.0),
    "hinge": BaseLoss("hinge", hinge, d_hinge, float("inf")),
    "identity": BaseLoss("identity", identity, d_identity, 0.0),
}


def get_loss(name: str) -> BaseLoss:
    if name not in _TABLE:
        raise ValueError(f"unknown base loss {name!r}; choose one of {', '.join(_TABLE)}")
    return _TABLE[name]


def margins(scores: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """t_ij = y_ij f_j(x_i) for labels in {-1, +1}."""
    return labels * scores


def surrogate_per_label(scores: np.ndarray, labels: np.ndarray, loss: str) -> np.ndarray:
    """(1/n) sum_i l(y_ij f_j(x_i)) for each label j; their mean is the Hamming-type surrogate risk."""
    return get_loss(loss).value(margins(scores, labels)).mean(axis=0)


def surrogate_risk(scores: np.ndarray, labels: np.ndarray, loss: str) -> float:
    """L(f) = (1/n) sum_i (1/c) sum_j l(y_ij f_j(x_i)) (spec: Hamming-type surrogate)."""
    return float(surrogate_per_label(scores, labels, loss).mean())
