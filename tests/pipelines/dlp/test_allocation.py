"""Allocation maths (spec check 1): DLP and OWL densities, by hand and by property."""

import numpy as np
import pytest

from paper_pipelines.common.params import ParameterError
from paper_pipelines.pipelines.dlp.allocation import (
    dlp_sparsities,
    relative_importance,
    spread_to_mean,
)
from paper_pipelines.pipelines.dlp.baselines import owl_sparsities, uniform_sparsities


def test_dlp_by_hand_on_three_blocks():
    # U = [1, 2, 3]: I = 1 - U/6 = [5/6, 4/6, 3/6]; min-max onto [0, 2a] with a = 0.1 gives
    # [0.2, 0.1, 0.0]; mean 0.1, so densities = [0.1, 0, -0.1] + (1 - 0.5) = [0.6, 0.5, 0.4].
    np.testing.assert_allclose(relative_importance([1, 2, 3]), [5 / 6, 4 / 6, 3 / 6])
    np.testing.assert_allclose(dlp_sparsities([1, 2, 3], target=0.5, alpha=0.1), [0.4, 0.5, 0.6])


def test_owl_by_hand_on_three_blocks():
    # LOD = [1, 3, 2] -> scaled [0, 0.16, 0.08] (lambda 0.08), mean 0.08 -> densities [0.22, 0.38, 0.30] at S=0.7
    np.testing.assert_allclose(owl_sparsities([1, 3, 2], 0.7, 0.08), [0.78, 0.62, 0.70])


@pytest.mark.parametrize("seed", range(5))
def test_dlp_properties_on_random_scores(seed):
    rng = np.random.default_rng(seed)
    scores = rng.uniform(0.001, 0.05, size=32)
    target, alpha = 0.7, 0.15
    sparsities = dlp_sparsities(scores, target, alpha)
    densities = 1 - sparsities
    assert abs(densities.mean() - (1 - target)) < 1e-6
    assert densities.max() - densities.min() == pytest.approx(2 * alpha, abs=1e-12)
    order = np.argsort(scores)
    # strictly decreasing density (increasing sparsity) in the block score
    assert np.all(np.diff(sparsities[order]) > 0)


@pytest.mark.parametrize("seed", range(5))
def test_owl_properties_on_random_outlier_ratios(seed):
    rng = np.random.default_rng(seed)
    lod = rng.uniform(0.5, 3.0, size=30)
    sparsities = owl_sparsities(lod, 0.7, 0.08)
    densities = 1 - sparsities
    assert abs(densities.mean() - 0.3) < 1e-9
    assert densities.max() - densities.min() == pytest.approx(0.16, abs=1e-12)
    order = np.argsort(lod)
    assert np.all(np.diff(densities[order]) > 0)  # more outliers, keep more


def test_dlp_equals_linear_map_of_the_scores():
    # The spec's equivalent form: s_l = S + 2a (q_l - mean q) with q the min-max normalised score.
    scores = np.array([0.0075, 0.01, 0.02, 0.018, 0.032])
    q = (scores - scores.min()) / (scores.max() - scores.min())
    expected = 0.7 + 0.3 * (q - q.mean())
    np.testing.assert_allclose(dlp_sparsities(scores, 0.7, 0.15), expected, atol=1e-12)


def test_constant_scores_give_uniform():
    np.testing.assert_allclose(dlp_sparsities([2.0] * 4, 0.6, 0.1), uniform_sparsities(4, 0.6))
    np.testing.assert_allclose(spread_to_mean(np.ones(3), 0.6, 0.1), [0.4] * 3)


def test_alpha_that_leaves_zero_one_fails_clearly():
    with pytest.raises(ParameterError, match=r"dlp\.allocation\.dlp\.alpha.*outside \[0, 1\)"):
        dlp_sparsities([1.0, 2.0, 30.0], target=0.9, alpha=0.3)


def test_non_positive_scores_are_rejected():
    with pytest.raises(ValueError, match="non-negative"):
        relative_importance([1.0, -2.0])
