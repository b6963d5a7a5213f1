"""Allocation maths (spec check 1): DLP and OWL densities, by hand and by property."""

import numpy as np
import pytest

from paper_pipelines.common.params import ParameterError
from paper_pipelines.pipelines.dlp.allocation import (
    dlp_sparsities,
    relative_importance,
    spread_to_mean,
    to_sparsities,
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


# ---------------------------------------------------------------- pinned by mutation testing (#29)
def test_block_sparsity_at_zero_is_lifted_and_at_one_is_an_error():
    # densities 1, 0.5, 0.75 -> sparsities 0 (lifted to the released 0.01), 0.5, 0.25
    sparsities = to_sparsities(np.array([1.0, 0.5, 0.75]), 0.25, "DLP", "dlp.alpha", 0.01)
    np.testing.assert_array_equal(sparsities, [0.01, 0.5, 0.25])
    lifted = to_sparsities(np.array([1.0, 0.5]), 0.25, "OWL", "owl.lam", 0.05)
    np.testing.assert_array_equal(lifted, [0.05, 0.5])
    # a block at sparsity exactly 1 (density 0) would be removed entirely: an error
    with pytest.raises(
        ParameterError, match=r"OWL would give block sparsities in \[0\.500, 1\.000\]"
    ):
        to_sparsities(np.array([0.0, 0.5]), 0.25, "OWL", "owl.lam", 0.01)
    with pytest.raises(ParameterError, match=r"in \[-0\.250, 0\.500\]"):
        to_sparsities(np.array([1.25, 0.5]), 0.25, "DLP", "dlp.alpha", 0.01)


def test_the_error_names_the_largest_spread_that_fits():
    # Use key <= min(S, 1 - S): at S = 0.9 that is 0.100, at S = 0.2 it is 0.200
    with pytest.raises(ParameterError, match=r"target_sparsity=0\.9.*Use dlp\.alpha <= 0\.100 or"):
        dlp_sparsities([1.0, 2.0, 30.0], target=0.9, alpha=0.3)
    with pytest.raises(ParameterError, match=r"dlp\.allocation\.owl\.lam.*Use owl\.lam <= 0\.200 "):
        owl_sparsities([1.0, 5.0], 0.2, 0.5)


def test_owl_min_sparsity_is_passed_through():
    # LOD [1, 3]: densities spread [0, 0.4] shifted to mean 0.8 -> [0.6, 1.0] -> sparsities [0.4, 0]
    np.testing.assert_allclose(owl_sparsities([1.0, 3.0], 0.2, 0.2, min_sparsity=0.03), [0.4, 0.03])
    np.testing.assert_allclose(owl_sparsities([1.0, 3.0], 0.2, 0.2), [0.4, 0.01])
    np.testing.assert_allclose(dlp_sparsities([3.0, 1.0], 0.2, 0.2, min_sparsity=0.02), [0.4, 0.02])


def test_uniform_is_the_target_everywhere():
    out = uniform_sparsities(3, 0.7)
    assert out.dtype == np.float64 and out.tolist() == [0.7, 0.7, 0.7]


@pytest.mark.parametrize(
    ("scores", "match"),
    [
        ([1.0], "at least 2 blocks"),
        ([[1.0, 2.0]], "at least 2 blocks"),
        ([1.0, float("nan")], "finite"),
        ([1.0, float("inf")], "finite"),
        ([0.0, 0.0], "not all zero"),
    ],
)
def test_bad_block_scores_are_rejected(scores, match):
    with pytest.raises(ValueError, match=match):
        relative_importance(scores)


def test_zero_scores_beside_a_positive_one_are_allowed():
    np.testing.assert_allclose(relative_importance([0.0, 2.0]), [1.0, 0.0])


def test_allocations_are_computed_in_float64_whatever_the_input():
    # float32 statistics (e.g. from a GPU) still give float64 allocations, the released arithmetic
    lod = np.array([1.0, 3.0, 2.0], dtype=np.float32)
    assert owl_sparsities(lod, 0.7, 0.08).dtype == np.float64
    assert spread_to_mean(lod, 0.7, 0.08).dtype == np.float64
    np.testing.assert_array_equal(
        owl_sparsities(lod, 0.7, 0.08), owl_sparsities(lod.astype(np.float64), 0.7, 0.08)
    )
    spread = spread_to_mean(np.array([0.1, 0.3], dtype=np.float32), 0.5, 0.1)
    assert spread.tolist() == spread_to_mean(np.array([0.1, 0.3]), 0.5, 0.1).tolist() == [0.4, 0.6]


def test_errors_name_the_allocation_that_failed():
    with pytest.raises(ParameterError, match=r"DLP would give block sparsities in \["):
        dlp_sparsities([1.0, 2.0, 30.0], target=0.9, alpha=0.3)
    with pytest.raises(ParameterError, match=r"OWL would give block sparsities in \["):
        owl_sparsities([1.0, 5.0], 0.2, 0.5)


def test_relative_importance_is_float64_even_for_float32_scores():
    # U = [1, 2]: I = 1 - U / 3 = [2/3, 1/3]; in float32 1 - 1/3 is 0.66666663, 4e-8 off
    importance = relative_importance(np.array([1.0, 2.0], dtype=np.float32))
    assert importance.dtype == np.float64
    np.testing.assert_allclose(importance, [2 / 3, 1 / 3], rtol=1e-15)


def test_a_negative_block_score_is_rejected_even_when_the_sum_is_positive():
    with pytest.raises(ValueError, match="non-negative"):
        relative_importance([2.0, -1.0])


def test_constant_scores_give_one_sparsity_per_block():
    assert dlp_sparsities([2.0] * 4, 0.6, 0.1).shape == (4,)
