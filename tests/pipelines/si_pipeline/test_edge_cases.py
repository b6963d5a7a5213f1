"""Edge cases with clear messages: ties (zero-width pieces) on the line, rank-deficient refits."""

import numpy as np
import pytest
from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.si_pipeline import components as c
from paper_pipelines.pipelines.si_pipeline.engine import DagSelectiveTest, RankDeficientError
from paper_pipelines.pipelines.si_pipeline.line_search import over_conditioning, parametric_search
from paper_pipelines.pipelines.si_pipeline.truncated_normal import ZeroMassError

T = 0.5


def _pieces(pieces):
    """event(z) for a line cut into closed pieces [(lo, hi, model), ...] covering R."""

    def event(z):
        lo, hi, model = next(p for p in pieces if p[0] <= z <= p[1])
        return model, lo, hi

    return event


def test_a_tie_at_the_observed_statistic_does_not_stop_the_search():
    """Z = {T} u [-3, -2] u [2, 3]: the zero-width piece at T carries no mass, the rest is symmetric,
    so F_Z(T) = 1/2 and p = 1 (before: a zero-mass error on the first step)."""
    e = 1e-7
    event = _pieces(
        [
            (-np.inf, -3 - e, "B"),
            (-3, -2, "A"),
            (-2 + e, T - e, "B"),
            (T, T, "A"),
            (T + e, 2 - e, "B"),
            (2, 3, "A"),
            (3 + e, np.inf, "B"),
        ]
    )
    res = parametric_search(event, "A", T, termination="exhaustive", step=1e-6)
    assert res.p_value == pytest.approx(1.0, abs=1e-6)


def test_a_selection_holding_only_at_the_tie_is_a_clear_error():
    event = _pieces([(-np.inf, T - 1e-7, "B"), (T, T, "A"), (T + 1e-7, np.inf, "B")])
    with pytest.raises(ZeroMassError, match="isolated points .*zero N\\(0,1\\) mass"):
        parametric_search(event, "A", T)
    with pytest.raises(ZeroMassError, match="zero N\\(0,1\\) mass.*undefined"):
        over_conditioning(event, "A", T)


def _duplicated(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    X[:, 1] = X[:, 0]  # a duplicated column
    y = 2.0 * X[:, 0] + rng.standard_normal(n)
    return X, y


def test_a_rank_deficient_refit_is_named():
    """Top-2 screening picks both copies of the duplicated column: the refit cannot identify either."""
    dag = Pipeline(
        [
            Node(c.initial_state, "X", "s0", name="init"),
            Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
            Node(c.marginal_screening, ["X", "y", "s0", "params:k"], "s1", name="screen"),
        ]
    )
    X, y = _duplicated()
    engine = DagSelectiveTest(dag)
    assert engine.run(X, y, {"k": 2})["features"] == [0, 1]
    with pytest.raises(RankDeficientError, match=r"features \[0, 1\]\) has rank 1 < 2"):
        engine.test(X, y, {"k": 2}, sigma=1.0)


def test_outlier_detection_on_a_rank_deficient_design_is_named():
    X, y = _duplicated(1)
    with pytest.raises(ValueError, match="component cook_distance: .*rank-deficient"):
        c.cook_distance(X, y, c.initial_state(X), 3.0)
    with pytest.raises(ValueError, match="component soft_ipod: .*rank-deficient"):
        c.soft_ipod(X, y, c.initial_state(X), 0.02)
