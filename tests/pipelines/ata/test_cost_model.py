"""Cost model: task-time families, the psi1 norm, round time and worker time (Sec. 2)."""

import numpy as np
import pytest
from scipy import integrate

from paper_pipelines.pipelines.ata.cost_model import (
    mean_task_times,
    psi1_norm_centred_exponential,
    round_time,
    sample_task_times,
    split_mean,
    sub_exponential_norms,
    worker_time,
)


def test_psi1_norm_of_centred_exponential_solves_its_definition():
    c = psi1_norm_centred_exponential()

    def density(x: float) -> float:
        return np.exp(abs(x - 1) / c - x)

    value = integrate.quad(density, 0, 1)[0] + integrate.quad(density, 1, np.inf)[0]
    assert value == pytest.approx(2.0, abs=1e-6)
    assert c == pytest.approx(1.531, abs=1e-3)


def test_paper_generator_means_and_eta():
    mu = mean_task_times(3, scale=29.0, shift_factor=1.0)
    assert mu.tolist() == [58.0, 116.0, 174.0]  # X_i ~ 29i + Exp(29i)
    shift, spread = split_mean(mu, 1.0)
    assert shift.tolist() == spread.tolist() == [29.0, 58.0, 87.0]
    alpha = sub_exponential_norms(spread, "shifted_exponential")
    assert (alpha / mu) == pytest.approx(np.full(3, 0.7657), abs=1e-4)


def test_round_and_worker_time_by_hand():
    # cum[i, u] = time worker i needs for its first u+1 tasks.
    cum = np.array([[1.0, 3.0, 6.0], [2.0, 5.0, 9.0], [10.0, 20.0, 30.0]])
    a = np.array([3, 1, 0])
    assert round_time(cum, a) == 6.0  # slowest assigned worker; worker 2 is idle
    assert worker_time(cum, a) == 8.0  # busy time only: 6 + 2


@pytest.mark.parametrize("family", ["shifted_exponential", "lognormal", "pareto"])
def test_every_family_has_the_requested_mean(family):
    shift, spread = np.array([1.0, 2.0]), np.array([1.0, 2.0])
    X = sample_task_times(shift, spread, family, 200_000, 1, np.random.default_rng(0), 0.5, 4.0)
    assert X.min() >= shift.min()
    assert X[:, :, 0].mean(axis=0) == pytest.approx(shift + spread, rel=0.02)


def test_bad_instances_fail_clearly():
    with pytest.raises(ValueError, match="n must be >= 1"):
        mean_task_times(0, 1.0, 1.0)
    with pytest.raises(ValueError, match="scale must be > 0"):
        mean_task_times(3, -1.0, 1.0)
    with pytest.raises(ValueError, match="must be finite and > 0"):
        split_mean(np.array([1.0, 0.0]), 1.0)
    with pytest.raises(ValueError, match="unknown worker-time family 'gamma'"):
        sample_task_times(np.ones(2), np.ones(2), "gamma", 1, 1, np.random.default_rng(0))
