"""Log-space truncated normal CDF, selective p-values and their bounds."""

import numpy as np
import pytest
from scipy.stats import norm

from paper_pipelines.pipelines.si_pipeline import truncated_normal as tn


def test_untruncated_is_normal():
    for t in (-2.0, 0.3, 1.96):
        assert tn.truncated_cdf(t, [[-np.inf, np.inf]]) == pytest.approx(norm.cdf(t))
    assert tn.selective_p_value(1.96, [[-np.inf, np.inf]]) == pytest.approx(0.05, abs=1e-4)
    assert tn.naive_p_value(1.96) == pytest.approx(0.05, abs=1e-4)


def test_half_line_truncation():
    # Z = [0, inf): F(t) = (Phi(t) - 1/2) / (1/2)
    t = 1.0
    assert tn.truncated_cdf(t, [[0, np.inf]]) == pytest.approx(2 * norm.cdf(t) - 1)


def test_far_tail_keeps_precision():
    # Z = [10, 11], t = 10.05: direct CDF differences would be 0/0 in double precision.
    f = tn.truncated_cdf(10.05, [[10, 11]])
    expected = (norm.sf(10) - norm.sf(10.05)) / (norm.sf(10) - norm.sf(11))
    assert f == pytest.approx(expected, rel=1e-9)
    assert 0.0 < tn.selective_p_value(10.05, [[10, 11]]) < 1.0
    # mirrored interval gives the mirrored CDF
    assert tn.truncated_cdf(-10.05, [[-11, -10]]) == pytest.approx(1 - f, rel=1e-9)


def test_bounds_bracket_p_and_collapse_when_searched():
    trunc, searched = [[0.5, 1.5]], [[-1, 2]]
    p, lo, hi = tn.p_value_bounds(1.0, trunc, searched)
    assert lo <= p <= hi and hi - lo > 0.01
    p2, lo2, hi2 = tn.p_value_bounds(1.0, trunc, [[-np.inf, np.inf]])
    assert lo2 == pytest.approx(p2) and hi2 == pytest.approx(p2)
    assert p2 == pytest.approx(p)


def test_log1mexp_accuracy():
    # near 0 the log(-expm1) branch is exact; far out log1p(-exp) keeps the tiny result non-zero
    assert tn.log1mexp(-1e-20) == pytest.approx(np.log(1e-20), rel=1e-12)
    assert tn.log1mexp(-0.1) == pytest.approx(np.log(1 - np.exp(-0.1)), rel=1e-12)
    assert tn.log1mexp(-50.0) == pytest.approx(-np.exp(-50.0), rel=1e-12)


def test_log1mexp_edges():
    # log(1 - e^0) = -inf; a positive argument is clipped to 0; -log 2 gives log(1/2) on both branches
    assert tn.log1mexp(0.0) == -np.inf and tn.log1mexp(0.5) == -np.inf
    assert tn.log1mexp(-np.log(2.0)) == pytest.approx(np.log(0.5), rel=1e-15)
    got = tn.log1mexp(np.array([-2.0, -0.5]))
    np.testing.assert_allclose(got, np.log(1 - np.exp([-2.0, -0.5])), rtol=1e-14)


def test_interval_masses_against_the_normal_cdf():
    lo = np.array([-1.0, -2.0, 0.5, 1.0, 3.0, -np.inf, -np.inf])
    hi = np.array([2.0, 1.0, 0.5, 0.0, np.inf, -5.0, np.inf])
    expected = np.array(
        [
            norm.cdf(2) - norm.cdf(-1),
            norm.cdf(1) - norm.cdf(-2),  # lies mostly left of 0: mirrored
            0.0,  # a point
            0.0,  # reversed
            norm.sf(3),
            norm.cdf(-5),
            1.0,
        ]
    )
    with np.errstate(divide="ignore", invalid="ignore"):  # -inf + inf in the flip test
        np.testing.assert_allclose(tn.log_interval_masses(lo, hi), np.log(expected), rtol=1e-12)
    assert tn.log_interval_mass(-1.0, 2.0) == pytest.approx(np.log(expected[0]), rel=1e-12)
    assert tn.log_mass([]) == -np.inf
    # a union adds the masses of its pieces
    assert np.exp(tn.log_mass([[-1, 0], [1, 2]])) == pytest.approx(
        norm.cdf(0) - norm.cdf(-1) + norm.cdf(2) - norm.cdf(1), rel=1e-12
    )


def test_truncated_cdf_and_two_sided_p_on_two_pieces():
    """Z = [-2, -1] u [0, 3]: F(0.5) = (m(-2,-1) + m(0,0.5)) / (m(-2,-1) + m(0,3)), p = 2 min(F, 1-F)."""
    z = [[-2, -1], [0, 3]]

    def m(a, b):
        return norm.cdf(b) - norm.cdf(a)

    total = m(-2, -1) + m(0, 3)
    f = (m(-2, -1) + m(0, 0.5)) / total
    assert tn.truncated_cdf(0.5, z) == pytest.approx(f, rel=1e-12)
    assert tn.selective_p_value(0.5, z) == pytest.approx(2 * min(f, 1 - f), rel=1e-12)
    f2 = m(0, 2.5) / (m(0, 3))  # right of the lower piece only
    assert tn.selective_p_value(2.5, [[0, 3]]) == pytest.approx(2 * (1 - f2), rel=1e-12)
    assert tn.selective_p_value(0.0, [[-1, 1]]) == 1.0  # the median: capped at 1
    assert tn.naive_p_value(0.0) == 1.0
    assert tn.naive_p_value(-1.0) == pytest.approx(2 * norm.cdf(-1.0), rel=1e-12)
    with pytest.raises(tn.ZeroMassError, match="zero N\\(0,1\\) mass"):
        tn.selective_p_value(1.0, [[1, 1]])


def test_p_value_bounds_by_hand():
    """Z = [-0.5, 0.5] found inside the searched [-1, 1] (t = 0.1): the unsearched (-inf, -1] and
    [1, inf) may or may not be in Z. F is smallest with [1, inf) in Z, largest with (-inf, -1] in Z."""

    def m(a, b):
        return norm.cdf(b) - norm.cdf(a)

    zl, zr, ul, ur = m(-0.5, 0.1), m(0.1, 0.5), norm.cdf(-1), norm.sf(1)
    f_lo, f_hi = zl / (zl + zr + ur), (zl + ul) / (zl + ul + zr)
    f = zl / (zl + zr)
    p, inf_p, sup_p = tn.p_value_bounds(0.1, [[-0.5, 0.5]], [[-1, 1]])
    assert p == pytest.approx(2 * min(f, 1 - f), rel=1e-10)
    assert f_lo < 0.5 < f_hi  # so p can reach 1
    assert sup_p == 1.0
    assert inf_p == pytest.approx(min(2 * f_lo, 2 * (1 - f_hi)), rel=1e-10)
    # further out the range of F lies right of 1/2: both bounds from 1 - F
    zl, zr, ul, ur = m(2.0, 2.5), m(2.5, 3.0), norm.cdf(1.0), norm.sf(4.0)
    f_lo, f_hi = zl / (zl + zr + ur), (zl + ul) / (zl + ul + zr)
    p, inf_p, sup_p = tn.p_value_bounds(2.5, [[2.0, 3.0]], [[1.0, 4.0]])
    assert f_lo > 0.5
    assert inf_p == pytest.approx(2 * (1 - f_hi), rel=1e-9)
    assert sup_p == pytest.approx(2 * (1 - f_lo), rel=1e-9)
    assert inf_p <= p <= sup_p


def test_zero_mass_message_names_the_cause_and_the_fix():
    with pytest.raises(tn.ZeroMassError) as err:
        tn.selective_p_value(1.0, [[1, 1]])
    assert str(err.value) == (
        "the truncation set Z has zero N(0,1) mass: the observed selection holds only at isolated "
        "points of the test line (a tie at a decision boundary of some component at the observed "
        "data, e.g. a constraint touching zero without crossing it), so the selective p-value is "
        "undefined for this feature; perturb the data or change the hyperparameter at the tie"
    )
