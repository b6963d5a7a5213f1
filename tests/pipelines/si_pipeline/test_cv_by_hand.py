"""Pipeline selection by CV: candidate names and order, the fold protocol, argument checks."""

import numpy as np
import pytest

from paper_pipelines.pipelines.si_pipeline.cross_validation import (
    Candidate,
    CvSelectiveTest,
    cv_split,
    expand_candidates,
    fold_quadratic,
)
from paper_pipelines.pipelines.si_pipeline.dags import DAGS, namespaced
from paper_pipelines.pipelines.si_pipeline.engine import DagError, DagSelectiveTest

PARAMS = {
    "op1": {
        "soft_ipod": {"lam": 0.02},
        "marginal_screening": {"k": 5},
        "stepwise": {"k": 3},
        "lasso": {"alpha": 0.08},
    },
    "op2": {
        "cook_distance": {"lam": 3.0},
        "marginal_screening": {"k": 5},
        "stepwise": {"k": 3},
        "lasso": {"alpha": 0.08},
    },
}
ENGINES = {d: DagSelectiveTest(namespaced(d)) for d in DAGS}


def test_candidate_names_and_the_order_of_the_product():
    """Leaves vary in the engine's node order (Kedro's topological order, which puts op1's lasso
    node before its stepwise node), the last one fastest, whatever the order of the grid's keys."""
    grid = {"op1": {"stepwise": {"k": [2, 3]}, "lasso": {"alpha": [0.08, 0.12]}}}
    names = [c.name for c in expand_candidates(ENGINES, grid, PARAMS)]
    assert names == [
        "op1[lasso.alpha=0.08,stepwise.k=2]",
        "op1[lasso.alpha=0.08,stepwise.k=3]",
        "op1[lasso.alpha=0.12,stepwise.k=2]",
        "op1[lasso.alpha=0.12,stepwise.k=3]",
    ]
    # a scalar leaf is one value; a DAG with no grid keeps its base block and its bare name
    one = expand_candidates(ENGINES, {"op2": {"cook_distance": {"lam": 2.5}}}, PARAMS)
    assert [c.name for c in one] == ["op2[cook_distance.lam=2.5]"]
    assert one[0].params["cook_distance"] == {"lam": 2.5} and one[0].dag == "op2"
    assert expand_candidates(ENGINES, {"op2": None}, PARAMS)[0].params == PARAMS["op2"]
    with pytest.raises(ValueError, match="no CV candidates declared"):
        expand_candidates(ENGINES, {}, PARAMS)


def test_candidates_are_checked_unless_told_not_to():
    bad = {"op1": {"lasso": {"alpha": [-1.0]}}}
    with pytest.raises(DagError, match=r"candidate op1 of the CV grid\.lasso\.alpha = -1\.0"):
        expand_candidates(ENGINES, bad, PARAMS)
    unchecked = expand_candidates(ENGINES, bad, PARAMS, check=False)
    assert unchecked[0].params["lasso"]["alpha"] == -1.0


def test_cv_split_draws_the_candidates_then_permutes_the_rows():
    """si4pipeline's tune: one generator draws the evaluated subset, then the row permutation."""
    chosen, folds = cv_split(10, 3, 4, 6, max_candidates=2)
    rng = np.random.default_rng(4)
    assert chosen == sorted(rng.choice(6, 2, replace=False).tolist())
    expected = [np.sort(f) for f in np.array_split(rng.permutation(10), 3)]
    assert all(np.array_equal(f, g) for f, g in zip(folds, expected, strict=True))
    assert cv_split(10, 3, 4, 6, max_candidates=9)[0] == list(range(6))  # capped at the candidates
    assert len(cv_split(10, 10, 0, 1)[1]) == 10  # leave-one-out is allowed
    with pytest.raises(ValueError, match=r"need 2 <= folds <= n, got folds=1, n=10"):
        cv_split(10, 1, 0, 1)


def test_fold_quadratic_without_outliers_by_hand():
    """One feature x = (1, 1) on the training rows, response a = (1, 3): coef 2; validation row
    x = 1, a = 5, b = 1: residual (5 - 2) + (1 - b_fit) z with b_tr = (0, 0) -> 3 + z."""
    X_tr, X_val = np.array([[1.0], [1.0]]), np.array([[1.0]])
    q = fold_quadratic(
        X_tr,
        np.array([1.0, 3.0]),
        np.zeros(2),
        X_val,
        np.array([5.0]),
        np.ones(1),
        {"features": [0], "outliers": []},
    )
    np.testing.assert_allclose(q, [9.0, 6.0, 1.0])  # (3 + z)^2
    # dropping training row 1 as an outlier refits on row 0 only: coef 1, residual 4 + z
    q = fold_quadratic(
        X_tr,
        np.array([1.0, 3.0]),
        np.zeros(2),
        X_val,
        np.array([5.0]),
        np.ones(1),
        {"features": [0], "outliers": [1]},
    )
    np.testing.assert_allclose(q, [16.0, 8.0, 1.0])


def test_cv_test_arguments_are_checked():
    cands = expand_candidates(ENGINES, {"op1": {}}, PARAMS)
    assert isinstance(cands[0], Candidate) and cands[0].imputation == "mean_value_imputation"
    with pytest.raises(ValueError, match="at least one candidate"):
        CvSelectiveTest([])
    cv = CvSelectiveTest(cands, folds=3, seed=5, max_candidates=1)
    assert (cv.folds, cv.seed, cv.max_candidates, cv.condition_on) == (3, 5, 1, "selection")
    X = np.random.default_rng(0).normal(size=(30, 10))
    with pytest.raises(
        ValueError, match="mode must be 'parametric' or 'over_conditioning', got 'x'"
    ):
        cv.test(X, X[:, 0], mode="x")


def test_a_cv_where_every_candidate_fails_on_its_folds_is_an_error():
    """12 rows, 10 features, 2 folds: each training fold has 6 rows for 10 features, so no candidate
    can run (n <= p) and there is nothing to choose."""
    from kedro.pipeline import Node, Pipeline

    from paper_pipelines.pipelines.si_pipeline import components as c

    dag = Pipeline(
        [
            Node(c.initial_state, "X", "s0", name="init"),
            Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
            Node(c.lasso, ["X", "y", "s0", "params:alpha"], "s1", name="la"),
        ]
    )
    engine = DagSelectiveTest(dag)
    cv = CvSelectiveTest([Candidate("la", "la", engine, {"alpha": 0.1})], folds=2)
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(12, 10)), rng.normal(size=12)
    assert cv.tune(X, y).model == {"degenerate": True}
    message = r"every CV candidate fails on some training fold \(n <= p after OD\?\)"
    with pytest.raises(ValueError, match=message):
        cv.run(X, y)
    with pytest.raises(ValueError, match=message):
        cv.test(X, y, sigma=1.0)


def test_candidates_of_a_dag_with_top_level_keys_and_no_namespace():
    """A DAG outside any namespace reading params:ms and params:la: flat keys, node order ms, la."""
    from kedro.pipeline import Node, Pipeline

    from paper_pipelines.pipelines.si_pipeline import components as c

    dag = Pipeline(
        [
            Node(c.initial_state, "X", "s0", name="init"),
            Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
            Node(c.marginal_screening, ["X", "y", "s0", "params:ms"], "s1", name="ms"),
            Node(c.lasso, ["X", "y", "s1", "params:la"], "s2", name="la"),
        ]
    )
    engines = {"flat": DagSelectiveTest(dag)}
    cands = expand_candidates(engines, {"flat": {"la": [0.1, 0.2], "ms": [2, 3]}}, {"flat": {}})
    assert [c_.name for c_ in cands] == [
        "flat[ms=2,la=0.1]",
        "flat[ms=2,la=0.2]",
        "flat[ms=3,la=0.1]",
        "flat[ms=3,la=0.2]",
    ]
    assert cands[1].params == {"ms": 2, "la": 0.2}


def test_two_folds_is_the_smallest_cv():
    chosen, folds = cv_split(10, 2, 0, 1)
    assert chosen == [0] and [len(f) for f in folds] == [5, 5]
