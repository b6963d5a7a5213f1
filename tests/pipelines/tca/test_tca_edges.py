"""LinearTCA at its edges (two pseudo-source rows, exactly C samples, float64, tiny covariances), the
fog table against its formula, and the blur borders: small cases whose outcome follows from the text."""

from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.tca import data, digits_c
from paper_pipelines.pipelines.tca.baselines import T3A, Tent
from paper_pipelines.pipelines.tca.linear_tca import (
    check_features,
    class_proportions,
    linear_tca,
    shrink_towards_target,
    solve_w_eig,
)
from paper_pipelines.pipelines.tca.source_model import FeaturizerClassifier
from tests.pipelines.tca.problems import linear_head_problem


def _problem(n: int = 120, d: int = 4, c: int = 3, seed: int = 0, dtype=torch.float32):
    return linear_head_problem(n, d, c, seed, dtype=dtype)


def test_two_pseudo_source_rows_are_enough_for_a_covariance():
    z, logits, head = _problem()
    two = linear_tca(z, logits, head, 3, filter_k=2, proportion=torch.tensor([1.0, 0.0, 0.0]))
    assert two.info["n_support"] == 2 and two.info["w_solver"] == "auto"
    assert two.mu_s.shape == (1, 4) and two.mu_t.shape == (1, 4)
    # the auto solver reports the eigen-solver's diagnostics
    assert {"shrinkage", "singular_target", "singular_pseudo_source"} <= set(two.info)
    assert two.info["shrinkage"] == 0.75  # 1 - (m - 1) / d with m = 2 rows, d = 4


def test_the_mean_alignment_fall_back_says_why_in_full(caplog):
    z, logits, head = _problem()
    with caplog.at_level(logging.WARNING, logger="paper_pipelines.pipelines.tca.linear_tca"):
        one = linear_tca(z, logits, head, 3, filter_k=1, proportion=torch.tensor([1.0, 0.0, 0.0]))
    assert one.mu_s.shape == (1, 4)  # the one row's mean, kept as a row like mu_t
    assert [r.getMessage() for r in caplog.records] == [
        "only 1 pseudo-source sample(s) selected (filter_k=1): covariance undefined, "
        "using mean alignment only (W = I)"
    ]


def test_identity_fall_back_keeps_float64():
    z, logits, head = _problem(dtype=torch.float64)
    res = linear_tca(z, logits, head, 3, filter_k=0)
    assert res.W.dtype == torch.float64 and torch.equal(res.W, torch.eye(4, dtype=torch.float64))
    assert res.logits.dtype == torch.float64


def test_exactly_as_many_samples_as_classes_is_accepted():
    check_features(torch.zeros(3, 2), torch.zeros(3, 3), 3)  # no error
    with pytest.raises(ValueError, match="TCA got 2 test samples but the model has 3 classes"):
        check_features(torch.zeros(2, 5), torch.zeros(2, 3), 3)


def test_embeddings_must_be_a_matrix_even_with_the_right_length():
    with pytest.raises(ValueError, match=r"embeddings \(N, d\) .* got \(5, 2, 1\) and \(5, 3\)"):
        check_features(torch.zeros(5, 2, 1), torch.zeros(5, 3), 3)
    with pytest.raises(ValueError, match=r"got \(5, 2\) and \(5, 3, 1\)"):
        check_features(torch.zeros(5, 2), torch.zeros(5, 3, 1), 3)


def test_near_singular_threshold_is_relative_also_for_a_small_covariance():
    """diag(1e-4, 2e-11, 5e-12): the threshold is 1e-7 x 1e-4 = 1e-11, so only 5e-12 counts."""
    info: dict = {}
    c = torch.diag(torch.tensor([1e-4, 2e-11, 5e-12], dtype=torch.float64))
    solve_w_eig(c, torch.eye(3, dtype=torch.float64), 1e-3, info)
    assert info["singular_target"] == 1


def test_full_shrinkage_is_the_target_covariance():
    c_s, c_t = torch.eye(2), torch.tensor([[2.0, 1.0], [1.0, 3.0]])
    assert torch.equal(shrink_towards_target(c_s, c_t, 1.0), c_t)
    assert torch.equal(shrink_towards_target(c_s, c_t, 0.5), 0.5 * c_s + 0.5 * c_t)
    assert shrink_towards_target(c_s, c_t, 0.0) is c_s


@pytest.mark.parametrize(
    ("severity", "c", "decay"),
    [(1, 0.2, 3.0), (2, 0.4, 3.0), (3, 0.6, 2.5), (4, 0.8, 2.0), (5, 1.0, 1.75)],
)
def test_fog_is_haze_of_the_severitys_decay_then_renormalised(severity, c, decay):
    """fog(x) = (x + c n) p / (p + c) with n = _smooth_noise(decay) from the same draws, p the peak."""
    x = np.random.default_rng(1).uniform(0, 1, (3, 16, 16))
    got = digits_c.fog(x, severity, np.random.default_rng(9))
    haze = digits_c._smooth_noise(np.random.default_rng(9), 3, 16, decay)
    peak = x.max(axis=(1, 2), keepdims=True)
    np.testing.assert_allclose(got, (x + c * haze) * peak / (peak + c), atol=1e-12)


@pytest.mark.parametrize("severity", [1, 2, 3, 4, 5])
def test_motion_blur_keeps_a_constant_image_up_to_the_border(severity):
    """The image's edge is repeated beyond the border ("nearest"), so shifting never brings in black."""
    out = digits_c.motion_blur(np.full((3, 8, 8), 0.7), severity, np.random.default_rng(0))
    np.testing.assert_allclose(out, 0.7, atol=1e-12)


@pytest.mark.parametrize("size", [9, 12])
def test_digits_can_be_upsampled_to_any_size(size):
    images, _ = data.load_digits_images(size)
    assert images.shape == (1797, size, size)
    small, _ = data.load_digits_images(8)
    np.testing.assert_allclose(images[:, 0, 0], small[:, 0, 0], atol=1e-6)  # corners kept


def test_tent_exposes_the_models_head():
    model = FeaturizerClassifier()
    model.featurizer = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.LayerNorm(2))
    model.classifier = torch.nn.Linear(2, 2)
    assert Tent(model, lr=1e-3).classifier is model.classifier


def test_shrinkage_is_relative_for_a_covariance_below_unit_scale():
    """C_t = I / 2, C_s = I, eps = 0.1: shrinkage eps tr(C)/d is 0.05 for C_t and 0.1 for C_s, so both
    eigenvalues grow by 10 % and W = sqrt(1.1 / 0.55) I = sqrt(2) I."""
    eye = torch.eye(2, dtype=torch.float64)
    W = solve_w_eig(eye / 2, eye, eps=0.1)
    assert torch.allclose(W, 2**0.5 * eye, atol=1e-12)


def test_predicted_proportions_without_logits_say_so_in_full():
    with pytest.raises(ValueError, match=r"^proportions='predicted' needs the logits$"):
        class_proportions("predicted", 3)


def _identity_head_model() -> FeaturizerClassifier:
    model = FeaturizerClassifier()
    model.featurizer, model.classifier = torch.nn.Identity(), torch.nn.Linear(2, 2)
    with torch.no_grad():
        model.classifier.weight.copy_(torch.eye(2))
        model.classifier.bias.zero_()
    return model


def test_t3a_keeps_the_100_most_confident_supports_per_class_by_default():
    """The official filter_K = 100: 150 rows of class 0 (z = (k, 0), more confident with k) and the two
    warm supports (head rows e0, e1) leave 100 supports of class 0 and 1 of class 1."""
    model = _identity_head_model()
    t3a = T3A(model)
    assert t3a.filter_k == 100 and t3a.classifier is model.classifier
    z = torch.stack([torch.arange(1.0, 151.0), torch.zeros(150)], dim=1)
    t3a(z)
    assert t3a.labels.argmax(1).tolist() == [0] * 100 + [1]
    assert t3a.supports[:100, 0].min() == 51.0  # the 100 largest k: lowest entropy


def test_an_eigenvalue_of_exactly_1e_7_times_the_largest_counts_as_zero():
    info: dict = {}
    solve_w_eig(
        torch.diag(torch.tensor([1.0, 1e-7], dtype=torch.float64)), torch.eye(2), 1e-3, info
    )
    assert info["singular_target"] == 1


def test_oracle_proportions_with_a_single_sample_of_class_0():
    """Labels 0, 1, 1: n_0 = 1, so r = (1, 2, 0)."""
    assert class_proportions("oracle", 3, labels=torch.tensor([0, 1, 1])).tolist() == [
        1.0,
        2.0,
        0.0,
    ]
