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
