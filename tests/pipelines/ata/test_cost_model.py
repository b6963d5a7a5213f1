"""Cost model: task-time families, the psi1 norm, round time and worker time (Sec. 2)."""

import numpy as np
import pytest
from scipy import integrate

from paper_pipelines.pipelines.ata.cost_model import (
    mean_task_times,
    psi1_norm_centred_exponential,
    round_time,
    sample_task_times,
    sample_unit_noise,
    split_mean,
    sub_exponential_norms,
    unit_noise_std,
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


def test_unit_noise_std_by_family():
    # Exp(1): sd 1; lognormal: sd = sqrt(e^{sigma^2} - 1); Lomax scaled to mean 1: sd = sqrt(a / (a - 2)).
    assert unit_noise_std("shifted_exponential") == 1.0
    assert unit_noise_std("lognormal", lognormal_sigma=0.5) == pytest.approx(
        np.sqrt(np.e**0.25 - 1)
    )
    assert unit_noise_std("pareto", pareto_shape=4.0) == pytest.approx(np.sqrt(2.0))
    assert unit_noise_std("pareto") == pytest.approx(np.sqrt(3.0))  # default shape 3
    assert unit_noise_std("lognormal") == pytest.approx(np.sqrt(np.e - 1))  # default sigma 1
    with pytest.raises(ValueError, match=r"pareto_shape must be > 2 \(finite variance\), got 2"):
        unit_noise_std("pareto", pareto_shape=2.0)
    with pytest.raises(ValueError, match="unknown worker-time family"):
        unit_noise_std("gamma")


@pytest.mark.parametrize(
    ("family", "kwargs"),
    [
        ("shifted_exponential", {}),
        ("lognormal", {"lognormal_sigma": 0.5}),
        ("pareto", {"pareto_shape": 5.0}),
    ],
)
def test_sampled_noise_has_unit_mean_and_the_stated_sd(family, kwargs):
    noise = sample_unit_noise(family, (400_000,), np.random.default_rng(1), **kwargs)
    assert noise.min() >= 0.0
    assert noise.mean() == pytest.approx(1.0, abs=0.01)
    assert noise.std() == pytest.approx(unit_noise_std(family, **kwargs), rel=0.03)


def test_sub_exponential_norms_of_the_other_families_use_their_sd():
    c = psi1_norm_centred_exponential()
    spread = np.array([1.0, 2.0])
    lognormal = sub_exponential_norms(spread, "lognormal", lognormal_sigma=0.5)
    assert lognormal == pytest.approx(c * np.sqrt(np.e**0.25 - 1) * spread)
    pareto = sub_exponential_norms(spread, "pareto", pareto_shape=4.0)
    assert pareto == pytest.approx(c * np.sqrt(2.0) * spread)


def test_sample_task_times_is_shift_plus_spread_times_noise():
    shift, spread = np.array([1.0, 10.0]), np.array([2.0, 0.5])
    X = sample_task_times(shift, spread, "lognormal", 3, 4, np.random.default_rng(7), 0.3, 3.0)
    noise = sample_unit_noise("lognormal", (3, 2, 4), np.random.default_rng(7), 0.3)
    assert X.shape == (3, 2, 4)
    np.testing.assert_allclose(X, shift[None, :, None] + spread[None, :, None] * noise)


def test_split_mean_by_hand_and_bad_shift_factor():
    # mu = shift + spread with spread = mu / (1 + f): f = 3 gives spread 1/4 of the mean
    shift, spread = split_mean(np.array([4.0, 8.0]), 3.0)
    assert shift.tolist() == [3.0, 6.0] and spread.tolist() == [1.0, 2.0]
    assert split_mean(np.array([4.0]), 0.0)[0].tolist() == [0.0]  # f = 0: pure exponential
    with pytest.raises(ValueError, match="shift_factor must be >= 0, got -0.5"):
        split_mean(np.array([4.0]), -0.5)
    with pytest.raises(ValueError, match="finite and > 0"):
        split_mean(np.array([np.inf]), 1.0)


def test_mean_task_times_with_another_shift_factor():
    assert mean_task_times(2, 3.0, 0.5).tolist() == [4.5, 9.0]  # 3 * 1.5 * i
    assert mean_task_times(1, 1.0, 0.0).tolist() == [1.0]


def test_round_and_worker_time_of_a_single_busy_worker():
    cum = np.array([[1.0, 3.0], [2.0, 7.0]])
    assert round_time(cum, np.array([0, 2])) == 7.0 and worker_time(cum, np.array([0, 2])) == 7.0
    assert round_time(cum, np.array([1, 1])) == 2.0 and worker_time(cum, np.array([1, 1])) == 3.0


def test_family_parameter_defaults_are_sigma_one_and_shape_three():
    spread = np.array([1.0, 2.0])
    c = psi1_norm_centred_exponential()
    np.testing.assert_allclose(
        sub_exponential_norms(spread, "lognormal"), c * np.sqrt(np.e - 1) * spread
    )
    np.testing.assert_allclose(sub_exponential_norms(spread, "pareto"), c * np.sqrt(3.0) * spread)
    for family in ("lognormal", "pareto"):
        default = sample_unit_noise(family, (6,), np.random.default_rng(0))
        explicit = sample_unit_noise(family, (6,), np.random.default_rng(0), 1.0, 3.0)
        np.testing.assert_array_equal(default, explicit)
        times = sample_task_times(np.ones(2), spread, family, 2, 3, np.random.default_rng(1))
        ref = sample_task_times(
            np.ones(2), spread, family, 2, 3, np.random.default_rng(1), 1.0, 3.0
        )
        np.testing.assert_array_equal(times, ref)
