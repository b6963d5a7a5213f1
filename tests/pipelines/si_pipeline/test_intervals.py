"""Interval arithmetic and constraint solving along the line (hand-checkable cases)."""

import numpy as np
import pytest

from paper_pipelines.pipelines.si_pipeline import intervals as iv


def test_set_operations():
    a = [[0, 2], [5, 7]]
    b = [[1, 6]]
    np.testing.assert_allclose(iv.union(a, b), [[0, 7]])
    np.testing.assert_allclose(iv.intersection(a, b), [[1, 2], [5, 6]])
    np.testing.assert_allclose(iv.complement(a), [[-np.inf, 0], [2, 5], [7, np.inf]])
    np.testing.assert_allclose(iv.difference(b, a), [[2, 5]])
    assert iv.length(a) == 4.0
    assert iv.contains(a, 6.5) and not iv.contains(a, 3.0)
    assert iv.as_intervals([[3, 1]]).shape == (0, 2)  # empty pair dropped


def test_linear_interval():
    # z - 3 <= 0 and -z - 1 <= 0  ->  [-1, 3]
    assert iv.linear_interval([-3.0, -1.0], [1.0, -1.0], 0.0) == (-1.0, 3.0)
    # zero slope rows carry no information
    assert iv.linear_interval([-1.0], [0.0], 5.0) == (-np.inf, np.inf)


@pytest.mark.parametrize(
    "coefs, z, expected",
    [
        ((1.0, 0.0, -4.0), 0.0, (-2.0, 2.0)),  # t^2 - 4 <= 0
        ((-1.0, 0.0, 4.0), 3.0, (2.0, np.inf)),  # -(t^2) + 4 <= 0, right piece
        ((-1.0, 0.0, 4.0), -5.0, (-np.inf, -2.0)),  # left piece
        ((0.0, 2.0, -2.0), 0.0, (-np.inf, 1.0)),  # linear 2t - 2 <= 0
        ((-1.0, 0.0, -1.0), 0.0, (-np.inf, np.inf)),  # always negative
    ],
)
def test_quadratic_interval(coefs, z, expected):
    assert iv.quadratic_interval(*coefs, z) == pytest.approx(expected)
    got = iv.quadratic_interval_many(*(np.array([c]) for c in coefs), z)
    assert got == pytest.approx(expected)


def test_quadratic_many_intersects_rows():
    lo, hi = iv.quadratic_interval_many(
        np.array([1.0, -1.0]), np.array([0.0, 0.0]), np.array([-4.0, 1.0]), 1.5
    )
    assert (lo, hi) == pytest.approx((1.0, 2.0))


def test_a_quadratic_violated_at_z_is_an_error_not_an_empty_interval():
    """t^2 + 1 <= 0 has no real root and holds nowhere; at z = 0 it is violated (value 1)."""
    with pytest.raises(iv.ConstraintViolation, match="no real root.*violated at the current point"):
        iv.quadratic_interval_many(np.array([1.0]), np.array([0.0]), np.array([1.0]), 0.0)
    with pytest.raises(
        iv.ConstraintViolation, match=r"violated at the current point t = 4 \(value 6 > 0\)"
    ):  # (t - 1)(t - 2) at t = 4
        iv.quadratic_interval_many(np.array([1.0]), np.array([-3.0]), np.array([2.0]), 4.0)


def test_a_tangent_quadratic_gives_the_single_point():
    """(t - 1)^2 <= 0 holds only at t = 1: a zero-width interval there (a tie), no error."""
    assert iv.quadratic_interval_many(
        np.array([1.0]), np.array([-2.0]), np.array([1.0]), 1.0
    ) == pytest.approx((1.0, 1.0))
