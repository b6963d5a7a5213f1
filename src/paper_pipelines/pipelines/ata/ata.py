"""ATA and ATA-Empirical (Algorithm 1, ICML 2025 version): optimistic allocation from lower confidence bounds.

Both keep, per worker, the number of observed task times K_i and their empirical mean mu_hat_i (semi-bandit
feedback: every task a worker finishes reveals its own time), and in round k play the water-filling
minimiser of the proxy loss with a lower confidence bound s_i in place of the unknown mean mu_i.
"""

from __future__ import annotations

import numpy as np

from paper_pipelines.pipelines.ata.allocation import TIE_BREAKS, water_filling


def confidence_level(k: int) -> float:
    """ln(2 k^2): the anytime (union over rounds) confidence level of round k >= 1."""
    return float(np.log(2.0 * k * k))


def _relative_width(counts: np.ndarray, k: int) -> np.ndarray:
    """sqrt(ln(2k^2)/K_i) + ln(2k^2)/K_i; the callers set s_i = 0 where K_i = 0 (infinite width)."""
    ratio = confidence_level(k) / np.maximum(counts, 1)
    return np.sqrt(ratio) + ratio


def lcb_ata(
    mu_hat: np.ndarray, counts: np.ndarray, k: int, alpha: float, conf_scale: float = 2.0
) -> np.ndarray:
    """ATA's bound: s_i = max(mu_hat_i - c * alpha * (sqrt(ln(2k^2)/K_i) + ln(2k^2)/K_i), 0), c = 2 (ICML).

    Unobserved workers get s_i = 0 (infinite width).
    """
    width = conf_scale * alpha * _relative_width(counts, k)
    return np.where(counts > 0, np.maximum(mu_hat - width, 0.0), 0.0)


def lcb_ata_empirical(
    mu_hat: np.ndarray, counts: np.ndarray, k: int, eta: float, conf_scale: float = 2.0
) -> np.ndarray:
    """ATA-Empirical's scale-free bound: s_i = mu_hat_i * max(1 - c * eta * (sqrt(.) + .), 0).

    Needs only eta = max_i alpha_i / mu_i; unobserved workers get s_i = 0.
    """
    shrink = np.maximum(1.0 - conf_scale * eta * _relative_width(counts, k), 0.0)
    return np.where(counts > 0, mu_hat * shrink, 0.0)


class AdaptiveAllocator:
    """ATA (``bound="lcb"``) or ATA-Empirical (``bound="empirical"``): allocate, then observe, each round."""

    def __init__(
        self,
        n: int,
        B: int,
        bound: str,
        width: float,
        conf_scale: float = 2.0,
        tie_break: str = "spread",
        rng: np.random.Generator | None = None,
    ) -> None:
        if bound not in ("lcb", "empirical"):
            raise ValueError(
                f"bound must be 'lcb' (ATA) or 'empirical' (ATA-Empirical), got {bound!r}"
            )
        for name, value in (("n", n), ("B", B)):
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be an integer >= 1, got {value!r}")
        if not np.isfinite(width) or width < 0:
            raise ValueError(f"alpha / eta (width) must be finite and >= 0, got {width}")
        if not np.isfinite(conf_scale) or conf_scale <= 0:
            raise ValueError(f"conf_scale must be finite and > 0, got {conf_scale}")
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"unknown tie_break {tie_break!r}; allowed: {', '.join(TIE_BREAKS)}")
        self.n, self.B, self.bound, self.width = n, B, bound, width
        self.conf_scale, self.tie_break = conf_scale, tie_break
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.counts = np.zeros(n, dtype=np.int64)
        self.sums = np.zeros(n)
        self.last_scores: np.ndarray | None = None

    @property
    def mu_hat(self) -> np.ndarray:
        """Empirical mean task time of every worker (0 where unobserved)."""
        return np.divide(self.sums, self.counts, out=np.zeros(self.n), where=self.counts > 0)

    def scores(self, k: int) -> np.ndarray:
        """Lower confidence bounds s^k used in round k (step 2 of Algorithm 1)."""
        _check_round(k)
        if self.bound == "lcb":
            return lcb_ata(self.mu_hat, self.counts, k, self.width, self.conf_scale)
        return lcb_ata_empirical(self.mu_hat, self.counts, k, self.width, self.conf_scale)

    def allocate(self, k: int) -> np.ndarray:
        """a^k = argmin_a max_j a_j s_j^k (step 3), with the documented tie-breaking.

        The bounds of the call are kept in ``last_scores`` (the simulator logs how many were 0).
        """
        self.last_scores = self.scores(k)
        # The random rank (the last tie key) is drawn afresh every round.
        rank = self.rng.permutation(self.n)
        return water_filling(self.last_scores, self.B, self.tie_break, self.counts, rank)

    def observe(self, a: np.ndarray, task_sums: np.ndarray) -> None:
        """Semi-bandit update (step 4): worker i ran a_i tasks whose times sum to task_sums[i].

        Each of the a_i tasks counts as one observation (K_i += a_i), so mu_hat_i stays the mean
        time per task. Checked before anything is updated: a bad call leaves the state unchanged.
        """
        a = np.asarray(a)
        task_sums = np.asarray(task_sums, dtype=float)
        if a.shape != (self.n,) or task_sums.shape != (self.n,):
            raise ValueError(
                f"observe needs a and task_sums of shape ({self.n},) (one entry per worker), "
                f"got {a.shape} and {task_sums.shape}"
            )
        if not np.issubdtype(a.dtype, np.integer) or np.any(a < 0):
            raise ValueError(f"the allocation a must hold integers >= 0, got {a.tolist()}")
        if not np.all(np.isfinite(task_sums)) or np.any(task_sums < 0):
            raise ValueError(
                "task_sums must be finite times >= 0 (a NaN or inf would poison every later "
                f"bound), got {task_sums.tolist()}"
            )
        busy = a > 0
        self.counts[busy] += a[busy]
        self.sums[busy] += task_sums[busy]


def _check_round(k: int) -> None:
    """Rounds are numbered from 1: ln(2k^2) is undefined at k = 0."""
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"the round k must be an integer >= 1 (rounds count from 1), got {k!r}")
