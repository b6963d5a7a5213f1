"""Label conversion (spec check 1) and the vector label's score and entropy, on hand-checkable cases."""

import numpy as np
import pytest

from paper_pipelines.pipelines.cpl_iqa import labels


def test_two_bin_splits_the_mass_between_the_two_neighbouring_bins():
    v = labels.two_bin_label(np.array([3.25]), 5)
    assert np.allclose(v, [[0, 0, 0.75, 0.25, 0]])


def test_two_bin_is_one_hot_at_integers_and_at_both_ends():
    v = labels.two_bin_label(np.array([1.0, 4.0, 5.0]), 5)
    assert np.array_equal(v, np.eye(5)[[0, 3, 4]])


def test_two_bin_clips_out_of_range_mos_to_the_end_bins():
    v = labels.two_bin_label(np.array([0.2, 7.0]), 5)
    assert np.array_equal(v, np.eye(5)[[0, 4]])


def test_check_1_two_bin_reproduces_the_mos_with_entropy_at_most_ln2_below_gaussian():
    rng = np.random.default_rng(0)
    mos = rng.uniform(1, 100, 1000)
    v = labels.two_bin_label(mos, 100)
    g = labels.gaussian_label(mos, 100, 5.0)
    assert np.allclose(v.sum(axis=1), 1.0)
    assert np.abs(labels.expected_score(v, 100) - mos).max() < 1e-6
    h = labels.entropy(v)
    assert h.max() <= np.log(2) + 1e-12
    assert np.all(h < labels.entropy(g))
    # the paper's high confidence of annotated labels: 1 - H / ln K >= 1 - ln 2 / ln 100
    assert np.all(1 - h / np.log(100) >= 1 - np.log(2) / np.log(100) - 1e-12)


def test_two_bin_entropy_peaks_at_half_way():
    v = labels.two_bin_label(np.array([2.5, 2.1]), 4)
    assert labels.entropy(v)[0] == pytest.approx(np.log(2))
    assert labels.entropy(v)[1] == pytest.approx(-(0.9 * np.log(0.9) + 0.1 * np.log(0.1)))


def test_gaussian_label_is_a_normalised_bell_centred_on_the_mos():
    g = labels.gaussian_label(np.array([3.0]), 5, 1.0)[0]
    expected = np.exp(-((np.arange(1, 6) - 3.0) ** 2) / 2)
    assert np.allclose(g, expected / expected.sum())
    assert labels.expected_score(g[None], 5)[0] == pytest.approx(3.0)


def test_gaussian_width_follows_sigma():
    narrow = labels.gaussian_label(np.array([50.0]), 100, 2.0)
    wide = labels.gaussian_label(np.array([50.0]), 100, 8.0)
    assert labels.entropy(narrow)[0] < labels.entropy(wide)[0]


def test_onehot_rounds_to_the_nearest_bin_and_clips():
    v = labels.onehot_label(np.array([2.4, 2.6, 0.1, 9.0]), 5)
    assert np.array_equal(v.argmax(axis=1), [1, 2, 0, 4])
    assert np.array_equal(v.sum(axis=1), np.ones(4))


def test_convert_labels_dispatches_and_rejects_unknown_conversions():
    m = np.array([2.5])
    assert np.array_equal(labels.convert_labels(m, "two_bin", 4, 1.0), labels.two_bin_label(m, 4))
    assert np.array_equal(labels.convert_labels(m, "onehot", 4, 1.0), labels.onehot_label(m, 4))
    assert np.array_equal(
        labels.convert_labels(m, "gaussian", 4, 2.0), labels.gaussian_label(m, 4, 2.0)
    )
    with pytest.raises(ValueError, match="unknown label conversion 'soft'"):
        labels.convert_labels(m, "soft", 4, 1.0)


def test_rescale_maps_the_range_onto_one_to_k_and_back():
    mos = np.array([1.0, 3.0, 5.0])
    scaled = labels.rescale_mos(mos, 1.0, 5.0, 100)
    assert np.allclose(scaled, [1.0, 50.5, 100.0])
    assert np.allclose(labels.unscale_score(scaled, 1.0, 5.0, 100), mos)
    assert np.allclose(labels.rescale_mos(np.array([0.0, 10.0]), 0.0, 10.0, 11), [1.0, 11.0])
    with pytest.raises(ValueError, match="high > low"):
        labels.rescale_mos(mos, 5.0, 5.0, 100)


def test_entropy_treats_zero_mass_as_zero_and_score_is_the_expectation():
    p = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    assert np.allclose(labels.entropy(p), [np.log(2), 0.0])
    assert np.allclose(labels.expected_score(p, 3), [1.5, 1.0])
    assert np.array_equal(labels.bin_centres(3), [1.0, 2.0, 3.0])


def test_bin_centres_are_floats():
    assert labels.bin_centres(4).dtype == np.float64


def test_a_narrow_gaussian_label_is_normalised_on_every_row():
    # sigma 0.01: the MOS half-way between two bins has all its logits far below zero
    g = labels.gaussian_label(np.array([1.0, 1.5]), 3, 0.01)
    assert np.allclose(g, [[1.0, 0.0, 0.0], [0.5, 0.5, 0.0]])


def test_gaussian_label_by_hand_for_a_sigma_other_than_one():
    g = labels.gaussian_label(np.array([3.0]), 5, 2.0)[0]
    w = np.exp(-np.array([4.0, 1.0, 0.0, 1.0, 4.0]) / 8.0)  # (k - 3)^2 / (2 * 2^2)
    assert np.allclose(g, w / w.sum())
