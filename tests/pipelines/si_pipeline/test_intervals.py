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


def test_as_intervals_sorts_merges_touching_and_nested_pieces():
    # touching pieces merge (closed sets), a nested piece keeps the outer end, a point survives
    np.testing.assert_array_equal(iv.as_intervals([[1, 2], [0, 1]]), [[0, 2]])
    np.testing.assert_array_equal(iv.as_intervals([[0, 5], [1, 2]]), [[0, 5]])
    np.testing.assert_array_equal(
        iv.as_intervals([[4, 6], [2, 2], [0, 1]]), [[0, 1], [2, 2], [4, 6]]
    )
    np.testing.assert_array_equal(iv.as_intervals([[0, 1], [0.5, 3], [2, 2.5]]), [[0, 3]])
    assert iv.as_intervals([]).shape == (0, 2)
    assert iv.as_intervals([1.0, 3.0]).tolist() == [[1.0, 3.0]]  # a flat pair is one interval
    assert iv.as_intervals([[0, 1]]).dtype == float  # integer input still gives a float set


def test_intersection_walks_both_lists():
    np.testing.assert_array_equal(iv.intersection([[0, 1]], [[1, 2]]), [[1, 1]])
    many = [[1, 2], [3, 4], [6, 8]]
    np.testing.assert_array_equal(iv.intersection([[0, 10]], many), many)
    np.testing.assert_array_equal(iv.intersection(many, [[0, 10]]), many)
    np.testing.assert_array_equal(
        iv.intersection(many, [[1.5, 3.5], [7, 9]]), [[1.5, 2], [3, 3.5], [7, 8]]
    )
    assert iv.intersection([[0, 1]], [[2, 3]]).shape == (0, 2)
    assert iv.intersection([], [[2, 3]]).shape == (0, 2)


def test_complement_length_contains_at_the_ends():
    np.testing.assert_array_equal(iv.complement([]), [[-np.inf, np.inf]])
    np.testing.assert_array_equal(iv.complement([[-np.inf, 0]]), [[0, np.inf]])
    np.testing.assert_array_equal(iv.complement([[0, np.inf]]), [[-np.inf, 0]])
    assert iv.complement([[-np.inf, np.inf]]).shape == (0, 2)
    assert iv.length([]) == 0.0 and iv.length([[2, 2]]) == 0.0
    assert iv.length([[0, 1], [3, 3.5]]) == 1.5
    assert iv.contains([[0, 1]], 0.0) and iv.contains([[0, 1]], 1.0)  # closed ends
    assert not iv.contains([[0, 1]], 1.0 + 1e-12) and not iv.contains([], 0.0)
    np.testing.assert_array_equal(iv.union([[0, 1]], [[3, 4]]), [[0, 1], [3, 4]])
    np.testing.assert_array_equal(
        iv.difference([[0, 10]], [[2, 3], [5, 6]]), [[0, 2], [3, 5], [6, 10]]
    )


def test_linear_interval_clamps_to_z_and_scales_the_slope_tolerance():
    # 1 + t <= 0 has its root at -1 < z = 0: rounding at the decision; the interval still contains z
    assert iv.linear_interval([1.0], [1.0], 0.0) == (-np.inf, 0.0)
    assert iv.linear_interval([1.0], [-1.0], 0.0) == (0.0, np.inf)
    # the tightest row wins on each side: t <= 2, t <= 5, t >= -1, t >= -4
    assert iv.linear_interval([-2.0, -5.0, -1.0, -4.0], [1.0, 1.0, -1.0, -1.0], 0.5) == (-1.0, 2.0)
    # a slope of 1e-9 counts against intercept 1 (tolerance 1e-10), not against intercept 1e6
    assert iv.linear_interval([-1.0], [1e-9], 0.0) == (-np.inf, pytest.approx(1e9))
    assert iv.linear_interval([-1e6], [1e-9], 0.0) == (-np.inf, np.inf)
    assert iv.linear_interval([-1.0], [-1e-9], 0.0) == (pytest.approx(-1e9), np.inf)
    # at the tolerance itself a slope counts as zero; the scale never drops below 1
    assert iv.linear_interval([-1.0], [1e-10], 0.0) == (-np.inf, np.inf)
    assert iv.linear_interval([-1.0], [-1e-10], 0.0) == (-np.inf, np.inf)
    assert iv.linear_interval([-0.5], [1.5e-10], 0.0) == (-np.inf, pytest.approx(0.5 / 1.5e-10))
    # |slope| |z| enters the scale: far out on the line (z = -2e10) the same slope is noise
    assert iv.linear_interval([-1.0], [1e-9], -2e10) == (-np.inf, np.inf)


@pytest.mark.parametrize(
    "coefs, z, expected",
    [
        ((1.0, -3.0, 2.0), 1.5, (1.0, 2.0)),  # (t - 1)(t - 2) <= 0, c1 < 0
        ((2.0, 6.0, 4.0), -1.5, (-2.0, -1.0)),  # 2 (t + 1)(t + 2) <= 0, c1 > 0
        ((-1.0, 3.0, -2.0), 0.0, (-np.inf, 1.0)),  # -(t - 1)(t - 2) <= 0, left piece
        ((-1.0, 3.0, -2.0), 5.0, (2.0, np.inf)),  # right piece
        ((-1.0, 3.0, -2.0), 1.0, (-np.inf, 1.0)),  # at the left root (z below the midpoint)
        ((-1.0, 3.0, -2.0), 2.0, (2.0, np.inf)),  # at the right root
        (
            (1.0, 0.0, -1.0),
            1.0 + 1e-12,
            (-1.0, 1.0 + 1e-12),
        ),  # rounding just past a root: clamp to z
        ((-1.0, 2.0, -1.0), 3.0, (-np.inf, np.inf)),  # -(t - 1)^2 <= 0 everywhere (disc = 0)
        ((1e-12, -1.0, 1.0), 2.0, (1.0, np.inf)),  # c2 negligible: the linear 1 - t <= 0
        ((1e-9, 100.0, -1.0), 0.0, (-np.inf, 0.01)),  # c2 negligible beside c1: 100 t - 1 <= 0
        ((1.0, -2.0, 1.0), 1.0, (1.0, 1.0)),  # (t - 1)^2 <= 0 only at the tangent point
        ((1e-10, 1.0, -1.0), 0.0, (-np.inf, 1.0)),  # |c2| at the tolerance itself counts as zero
        ((0.0, 0.5, -1.0), 0.0, (-np.inf, 2.0)),  # 0 < c1 < 1 is still an upper bound
        ((0.5, -1.5, 1.0), 1.5, (1.0, 2.0)),  # 0 < c2 < 1 still opens upwards
        ((1.0, -1.5, 0.5), 0.75, (0.5, 1.0)),  # (t - 1/2)(t - 1): q = 1 exactly
        ((0.5, -1.0, 0.5), 1.0, (1.0, 1.0)),  # (t - 1)^2 / 2: tangent, 0 < c2 < 1
        # stable roots: t^2 + t/2 - 1e-17 has roots -1/2 and 2e-17; the textbook formula loses the
        # small one to cancellation (sqrt(1/4 + 4e-17) rounds to 1/2)
        ((1.0, 0.5, -1e-17), 0.0, (-0.5, 2e-17)),
        ((1.0, -0.5, -1e-17), 0.0, (-2e-17, 0.5)),
        ((1e-12, 1e-12, -1.0), 2.0, (-np.inf, np.inf)),  # only the constant is left
    ],
)
def test_quadratic_interval_by_hand(coefs, z, expected):
    assert iv.quadratic_interval(*coefs, z) == pytest.approx(expected, rel=1e-12)
    got = iv.quadratic_interval_many(*(np.array([c]) for c in coefs), z)
    assert got == pytest.approx(expected, rel=1e-12)


def test_quadratic_many_mixes_row_kinds():
    """At z = 0.5: t^2 - 4 <= 0 gives [-2, 2]; 2t - 2 <= 0 gives t <= 1; -t - 3 <= 0 gives t >= -3;
    0.01 - t^2 <= 0 gives |t| >= 0.1, the right piece here; together [0.1, 1]."""
    c2 = np.array([1.0, 0.0, 0.0, -1.0])
    c1 = np.array([0.0, 2.0, -1.0, 0.0])
    c0 = np.array([-4.0, -2.0, -3.0, 0.01])
    assert iv.quadratic_interval_many(c2, c1, c0, 0.5) == pytest.approx((0.1, 1.0))
    assert iv.quadratic_interval_many(c2, c1, c0, -1.0) == pytest.approx((-2.0, -0.1))
    assert iv.quadratic_interval_many(np.array([]), np.array([]), np.array([]), 3.0) == (
        -np.inf,
        np.inf,
    )
    # a row with only a constant (<= 0) carries no information
    assert iv.quadratic_interval_many(np.array([0.0]), np.array([0.0]), np.array([-1.0]), 7.0) == (
        -np.inf,
        np.inf,
    )


def test_quadratic_many_tolerates_rounding_only():
    """t - 1 <= 0 checked at z slightly above 1: a relative 1e-9 of slack, not more."""
    one = (np.array([0.0]), np.array([1.0]), np.array([-1.0]))
    assert iv.quadratic_interval_many(*one, 1.0 + 1e-10) == (-np.inf, 1.0 + 1e-10)
    with pytest.raises(
        iv.ConstraintViolation, match=r"constraint 0 \(0 t\^2 \+ 1 t \+ -1 <= 0\) is"
    ):
        iv.quadratic_interval_many(*one, 1.0 + 1e-7)
    # the first violated row is named; an upward parabola with real roots is not "nowhere"
    rows = (np.array([0.0, 1.0]), np.array([1.0, 0.0]), np.array([-5.0, -1.0]))
    with pytest.raises(iv.ConstraintViolation, match=r"constraint 1 .* <= 0\) is violated") as err:
        iv.quadratic_interval_many(*rows, 2.0)
    assert "holds nowhere" not in str(err.value) and "(value 3 > 0)" in str(err.value)


def test_slack_is_relative_to_the_size_of_the_terms():
    """Rounding slack 1e-9 (|c2| z^2 + |c1| |z| + |c0|): 0.01 t^2 - 1 at z = 10 + 8e-9 is 1.6e-9 over,
    within 1e-9 * 2; t - 10 at z = 10 + 1.5e-8 is 1.5e-8 over, within 1e-9 * 20."""
    for row, z in (((0.01, 0.0, -1.0), 10 + 8e-9), ((0.0, 1.0, -10.0), 10 + 1.5e-8)):
        lo, hi = iv.quadratic_interval_many(*(np.array([c]) for c in row), z)
        assert lo <= z <= hi
    with pytest.raises(iv.ConstraintViolation):  # twice that slack is a violation
        iv.quadratic_interval_many(np.array([0.0]), np.array([1.0]), np.array([-10.0]), 10 + 5e-8)


@pytest.mark.parametrize(
    "row, z, nowhere",
    [
        ((1.0, 0.0, 1.0), 0.0, True),  # t^2 + 1: no real root
        ((1.0, 3.0, 4.0), 0.0, True),  # disc 9 - 16 < 0
        ((2.0, 3.0, 2.0), 0.0, True),  # disc 9 - 16 < 0
        ((1.0, -3.0, 2.0), 4.0, False),  # roots 1 and 2: violated at 4 only
        ((1.0, 3.0, 2.0), 0.0, False),  # roots -2 and -1
        ((1.0, 2.1, 1.0), 0.0, False),  # disc 0.41 > 0
        ((1.0, -2.0, 1.0), 2.0, False),  # tangent: holds at t = 1
        ((0.0, 1.0, -1.0), 2.0, False),  # a linear row
    ],
)
def test_a_violation_says_whether_the_row_holds_anywhere(row, z, nowhere):
    with pytest.raises(iv.ConstraintViolation) as err:
        iv.quadratic_interval_many(*(np.array([c]) for c in row), z)
    text = str(err.value)
    tail = "is violated at the current point t = "
    if nowhere:
        assert "<= 0) (no real root and opening upwards: it holds nowhere) " + tail in text
    else:
        assert "<= 0) " + tail in text and "nowhere" not in text
    assert text.endswith(": the component's decision disagrees with its selection event")


@pytest.mark.parametrize("factor", [1e-6, 1.0, 1e12])
def test_scaling_a_row_does_not_change_its_interval(factor):
    """c (t^2 - 4) <= 0 and c (2 t - 2) <= 0 describe the same sets for every c > 0: the zero
    tolerance is relative to the row's own coefficients."""
    rows = (((1.0, 0.0, -4.0), 0.0, (-2.0, 2.0)), ((0.0, 2.0, -2.0), 0.0, (-np.inf, 1.0)))
    for row, z, expected in rows:
        scaled = tuple(factor * v for v in row)
        assert iv.quadratic_interval(*scaled, z) == pytest.approx(expected)
        got = iv.quadratic_interval_many(*(np.array([v]) for v in scaled), z)
        assert got == pytest.approx(expected)


def test_a_tiny_quadratic_row_is_still_quadratic():
    # 1e-12 (t^2 - 4) <= 0: every coefficient is tiny, but relative to each other c2 is not zero
    scaled = (1e-12, 0.0, -4e-12)
    assert iv.quadratic_interval(*scaled, 0.0) == pytest.approx((-2.0, 2.0))
    got = iv.quadratic_interval_many(*(np.array([v]) for v in scaled), 0.0)
    assert got == pytest.approx((-2.0, 2.0))
