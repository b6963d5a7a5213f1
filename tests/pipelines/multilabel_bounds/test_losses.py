"""Base losses: values at hand-checked margins, derivatives, smoothness constants, the surrogate risk."""

import numpy as np
import pytest

from paper_pipelines.pipelines.multilabel_bounds import losses

T = np.array([-2.0, -0.5, 0.0, 0.5, 1.0, 2.0])


def test_values_at_hand_points():
    assert list(losses.squared(T)) == [9.0, 2.25, 1.0, 0.25, 0.0, 1.0]
    assert list(losses.squared_hinge(T)) == [9.0, 2.25, 1.0, 0.25, 0.0, 0.0]
    assert list(losses.hinge(T)) == [3.0, 1.5, 1.0, 0.5, 0.0, 0.0]
    assert losses.logistic(np.array([0.0]))[0] == pytest.approx(np.log(2))
    assert losses.logistic(np.array([-1000.0]))[0] == pytest.approx(1000.0)  # stable


@pytest.mark.parametrize("name", ["squared", "logistic", "squared_hinge", "hinge"])
def test_derivative_matches_finite_differences(name):
    loss = losses.get_loss(name)
    t = np.array([-1.7, -0.3, 0.4, 0.8, 1.6])  # away from the hinge's kink at 1
    h = 1e-6
    numeric = (loss.value(t + h) - loss.value(t - h)) / (2 * h)
    np.testing.assert_allclose(loss.derivative(t), numeric, atol=1e-6)


@pytest.mark.parametrize(
    ("name", "gamma"), [("squared", 2.0), ("logistic", 0.25), ("squared_hinge", 2.0)]
)
def test_smoothness_constant_is_the_sup_of_the_second_derivative(name, gamma):
    loss = losses.get_loss(name)
    assert loss.gamma == gamma
    t = np.linspace(-5, 5, 20001)
    slopes = np.abs(np.diff(loss.derivative(t)) / np.diff(t))
    assert slopes.max() == pytest.approx(gamma, rel=1e-3)


def test_hinge_is_not_smooth_and_its_subgradient():
    assert losses.get_loss("hinge").gamma == np.inf
    assert list(losses.d_hinge(np.array([0.0, 1.0, 2.0]))) == [-1.0, 0.0, 0.0]


def test_surrogate_risk_averages_over_examples_and_labels():
    scores = np.array([[1.0, -1.0], [0.0, 2.0]])
    labels = np.array([[1.0, 1.0], [-1.0, 1.0]])
    # margins [[1, -1], [0, 2]] -> hinge [[0, 2], [1, 0]]
    assert list(losses.surrogate_per_label(scores, labels, "hinge")) == [0.5, 1.0]
    assert losses.surrogate_risk(scores, labels, "hinge") == 0.75


def test_lipschitz_and_range_on_the_class():
    sq = losses.get_loss("squared")
    assert sq.lipschitz(2.0) == 6.0 and sq.bound(2.0) == 9.0
    assert losses.get_loss("logistic").lipschitz(5.0) == 1.0
    # squared hinge: |l'(t)| = 2 max(0, 1 - t) <= 2 (1 + B) on |t| <= B, as for the squared loss
    assert losses.get_loss("squared_hinge").lipschitz(2.0) == 6.0
    assert losses.get_loss("hinge").lipschitz(2.0) == 1.0
    with pytest.raises(ValueError, match="unknown base loss 'cubic'"):
        losses.get_loss("cubic")
