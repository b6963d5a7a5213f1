"""The engine's pieces by hand: sigma, the test direction eta and its line, data checks, the per-point
event of set operations and pass-through nodes, parameter keys and the DAG description."""

import json

import numpy as np
import pytest
from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.si_pipeline import components as c
from paper_pipelines.pipelines.si_pipeline.dags import namespaced, op1
from paper_pipelines.pipelines.si_pipeline.engine import (
    DagError,
    DagSelectiveTest,
    RankDeficientError,
    _common_namespace,
    estimate_sigma,
    feature_line,
)
from paper_pipelines.pipelines.si_pipeline.imputation import mean_imputation_matrix
from paper_pipelines.pipelines.si_pipeline.intervals import contains


def test_estimate_sigma_is_the_residual_sd_with_p_degrees_of_freedom_removed():
    # intercept-only fit of (3, 1, 3, 1): residuals (1, -1, 1, -1), RSS 4, n - p = 3
    assert estimate_sigma(np.ones((4, 1)), np.array([3.0, 1.0, 3.0, 1.0])) == pytest.approx(
        np.sqrt(4 / 3)
    )
    X = np.column_stack([np.ones(6), np.arange(6.0)])
    r = np.array([1.0, -2.0, 1.0, 1.0, -2.0, 1.0])  # orthogonal to both columns
    assert estimate_sigma(X, X @ [2.0, 0.5] + r) == pytest.approx(np.sqrt((r @ r) / 4))


def test_feature_line_by_hand():
    """eta = e_j^T (X^T X)^{-1} X^T on the rows outside O, zero on O, mapped through G; the line
    y(z) = a + b z passes through y_obs at z = T_obs, b = sigma eta / ||eta||, eta^T a = 0."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(12, 3))
    y_raw = X @ [1.0, 2.0, 0.0] + rng.normal(size=12)
    y_raw[4] = np.nan
    missing = np.isnan(y_raw)
    g = mean_imputation_matrix(X, missing)
    y_obs = y_raw[~missing]
    state = c.make_state([0, 2], [1])
    sigma = 1.7
    line = feature_line(X, g, y_obs, state, 1, sigma)  # position 1 of M = feature 2
    rows = np.setdiff1d(np.arange(12), [1])
    xs = X[np.ix_(rows, [0, 2])]
    eta_full = np.zeros(12)
    eta_full[rows] = (np.linalg.inv(xs.T @ xs) @ xs.T)[1]
    eta = g.T @ eta_full
    assert line.feature == 2 and line.sigma == sigma
    assert line.beta_hat == pytest.approx(eta @ y_obs, rel=1e-12)
    coef = np.linalg.lstsq(xs, (g @ y_obs)[rows], rcond=None)[0]
    assert line.beta_hat == pytest.approx(coef[1], rel=1e-10)  # the OLS coefficient of the refit
    assert line.scale == pytest.approx(sigma * np.linalg.norm(eta), rel=1e-12)
    assert line.t_obs == pytest.approx(line.beta_hat / line.scale, rel=1e-12)
    np.testing.assert_allclose(line.b, sigma * eta / np.linalg.norm(eta), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(line.a + line.b * line.t_obs, y_obs, rtol=1e-12)
    assert eta @ line.a == pytest.approx(0.0, abs=1e-12)
    # the outlier row 1 enters only through the mean-imputed row 4 (weight 1 / 11 in G)
    assert line.b[1] == pytest.approx(sigma * eta_full[4] / 11 / np.linalg.norm(eta), rel=1e-12)
    test = line.feature_test("result", 0.5)
    assert (test.feature, test.beta_hat, test.result, test.sigma, test.scale, test.cpu_seconds) == (
        2,
        line.beta_hat,
        "result",
        sigma,
        line.scale,
        0.5,
    )


def _data(seed=0, n=60, p=6):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    y = X @ np.r_[1.0, -1.0, np.zeros(p - 2)] + rng.normal(size=n)
    y[5] = np.nan
    return X, y


def test_check_data_messages():
    X, y = _data()
    with pytest.raises(
        ValueError, match=r"X must be \(n, p\) with n = len\(y\); got X \(60, 6\), y \(59,\)"
    ):
        DagSelectiveTest.check_data(X, y[:-1])
    with pytest.raises(ValueError, match=r"got X \(60,\)"):
        DagSelectiveTest.check_data(X[:, 0], y)
    X_inf = X.copy()
    X_inf[2, 3] = np.inf
    with pytest.raises(ValueError, match="X contains NaN or inf"):
        DagSelectiveTest.check_data(X_inf, y)
    y_inf = y.copy()
    y_inf[0] = -np.inf
    with pytest.raises(ValueError, match="y contains inf"):
        DagSelectiveTest.check_data(X, y_inf)
    Xc, yc = DagSelectiveTest.check_data(X.astype(np.float32), y.reshape(-1, 1).astype(np.float32))
    assert Xc.dtype == float and yc.dtype == float and yc.shape == (60,)


SETS = Pipeline(
    [
        Node(c.initial_state, "X", "s0", name="init"),
        Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
        Node(c.marginal_screening, ["X", "y", "s0", "params:ms"], "s1", name="ms"),
        Node(c.lasso, ["X", "y", "s0", "params:la"], "s2", name="la"),
        Node(c.extract_features, "s1", "s3", name="extract"),
        Node(c.union, ["s3", "s2"], "u", name="uni"),
        Node(c.intersection, ["s3", "s2"], "i", name="inter"),
        Node(c.intersection, ["u", "i"], "out", name="final"),
    ]
)


def test_event_of_set_operations_intersects_the_intervals_of_their_inputs():
    engine = DagSelectiveTest(SETS)
    X, y = _data(1)
    params = {"ms": 2, "la": 0.1}
    g = engine.imputation_matrix(X, y)
    a = g @ y[~np.isnan(y)]
    b = g @ np.random.default_rng(2).normal(size=59)
    state, lo, hi = engine.event(X, a, b, 0.2, engine.bind(params))
    s_ms, l1, u1 = c.marginal_screening_event(X, a, b, 0.2, c.initial_state(X), 2)
    s_la, l2, u2 = c.lasso_fs_event(X, a, b, 0.2, c.initial_state(X), 0.1)
    assert (lo, hi) == (max(l1, l2), min(u1, u2))
    assert np.isfinite(lo) or np.isfinite(hi)
    # (A | B) & (A & B) = A & B
    assert state == c.intersection(s_ms, s_la)
    assert engine.run(X, y, params) == c.intersection(
        c.marginal_screening(X, a, c.initial_state(X), 2), c.lasso(X, a, c.initial_state(X), 0.1)
    )


def test_errors_inside_components_name_the_node():
    engine = DagSelectiveTest(SETS)
    X, y = _data(1)
    bound = engine.bind({"ms": 2, "la": 0.1})
    a = np.zeros(60)
    a[0] = np.nan  # a NaN response reaches the lasso inside the event
    with pytest.raises(ValueError, match=r"^node ms: |^node la: "):
        engine.event(X, a, np.zeros(60), 0.0, bound)


def test_hyperparameter_keys_and_their_errors():
    engine = DagSelectiveTest(namespaced("op1"))
    keys = engine.hyper_keys()
    assert set(keys) == {"soft_ipod.lam", "marginal_screening.k", "stepwise.k", "lasso.alpha"}
    assert keys["lasso.alpha"][1:] == ("alpha", "si_pipeline.op1.lasso")
    assert keys["stepwise.k"][1] == "k"
    base = [
        Node(c.initial_state, "X", "s0", name="init"),
        Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
    ]
    with pytest.raises(DagError, match=r"params:a\.b nests under a key that is a value"):
        DagSelectiveTest(
            Pipeline(
                base
                + [
                    Node(c.lasso, ["X", "y", "s0", "params:a"], "s1", name="l1"),
                    Node(c.lasso, ["X", "y", "s1", "params:a.b"], "s2", name="l2"),
                ]
            )
        )
    with pytest.raises(DagError, match=r"params:a is both a value and a block"):
        DagSelectiveTest(
            Pipeline(
                base
                + [
                    Node(c.lasso, ["X", "y", "s0", "params:a.b"], "s1", name="l1"),
                    Node(c.lasso, ["X", "y", "s1", "params:a"], "s2", name="l2"),
                ]
            )
        )
    with pytest.raises(DagError, match=r"parameter key '_x' must be a Python identifier"):
        DagSelectiveTest(Pipeline(base + [Node(c.lasso, ["X", "y", "s0", "params:_x"], "s1")]))

    @c.si_component("feature_selection", event=c.lasso_fs_event)
    def two_knobs(X, y, state, alpha, *extra):
        return state

    try:
        with pytest.raises(
            DagError,
            match=r"node l1: component two_knobs takes the hyperparameters \['alpha', 'extra'\], "
            r"but the node gives 1 params: inputs \['params:a'\]",
        ):
            DagSelectiveTest(
                Pipeline(base + [Node(two_knobs, ["X", "y", "s0", "params:a"], "s1", name="l1")])
            )
    finally:
        del c.REGISTRY["two_knobs"]
    with pytest.raises(
        DagError, match=r"node ns.l1: parameter params:a lies outside params:ns\.\*"
    ):
        DagSelectiveTest(
            Pipeline(
                base + [Node(c.lasso, ["X", "y", "s0", "params:a"], "s1", name="l1")],
                namespace="ns",
                inputs={"X", "y_raw"},
                parameters={"params:a"},  # left outside the namespace
            )
        )


def test_check_params_accepts_its_model_and_rejects_non_mappings():
    engine = DagSelectiveTest(SETS)
    model = engine.params_model.model_validate({"ms": 2, "la": 0.1})
    assert engine.check_params(model) == {"ms": 2, "la": 0.1}
    with pytest.raises(DagError, match="the parameters of DAG here must be a mapping"):
        engine.check_params([1, 2], where="here")
    with pytest.raises(DagError, match=r"ms = 0 is invalid"):
        engine.check_params({"ms": 0, "la": 0.1})


def test_namespaces_and_description():
    assert _common_namespace(namespaced("op1")) == "si_pipeline.op1"
    assert _common_namespace(namespaced("op1", outer=None)) == "op1"
    assert _common_namespace(op1()) == ""
    engine = DagSelectiveTest(op1())
    d = engine.describe()
    assert d["namespace"] == "" and d["output"] == "state_final"
    union = next(n for n in d["nodes"] if n["node"] == "union")
    assert union == {
        "node": "union",
        "component": "union",
        "kind": "set_operation",
        "inputs": ["state_sfs", "state_lasso"],
        "output": "state_final",
        "hyperparameters": {},
    }
    assert sorted(e for e in d["edges"] if e[1] == "union") == [
        ["lasso", "union"],
        ["stepwise_feature_selection", "union"],
    ]
    assert ["initial_state", "soft_ipod"] in d["edges"]
    assert ["mean_value_imputation", "soft_ipod"] in d["edges"]  # the imputed y is an input too


def test_results_row_of_a_feature_test():
    engine = DagSelectiveTest(SETS)
    X, y = _data(3)
    res = engine.test(X, y, {"ms": 2, "la": 0.1}, sigma=1.0, features=[0])
    assert len(res) == 1
    row = res[0].as_row()
    r = res[0].result
    assert row["feature"] == res[0].feature and row["beta_hat"] == res[0].beta_hat
    assert (row["stat"], row["p_value"], row["inf_p"], row["sup_p"], row["naive_p"]) == (
        r.stat,
        r.p_value,
        r.inf_p,
        r.sup_p,
        r.naive_p,
    )
    assert row["mode"] == "parametric" and row["search_count"] == r.search_count >= 1
    assert row["n_truncation_intervals"] == len(r.truncation)
    assert json.loads(row["truncation"]) == np.round(r.truncation, 8).tolist()
    assert row["sigma"] == 1.0 and row["cpu_seconds"] >= 0.0
    with pytest.raises(ValueError, match="mode must be 'parametric' or 'over_conditioning'"):
        engine.test(X, y, {"ms": 2, "la": 0.1}, mode="exact")
    # a lasso penalty above every correlation selects nothing: no test to run
    empty = Pipeline(list(SETS.nodes[:2]) + [Node(c.lasso, ["X", "y", "s0", "params:la"], "s2")])
    assert DagSelectiveTest(empty).test(X, y, {"la": 50.0}) == []


def _two_outputs(X):
    return c.initial_state(X), c.initial_state(X)


def test_shape_errors_name_the_node():
    base = [
        Node(c.initial_state, "X", "s0", name="init"),
        Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
    ]
    cases = [
        ([Node(c.initial_state, "y_raw", "s1", name="init2")], "node init2: the initial state"),
        (
            [Node(c.lasso, ["y", "X", "s0", "params:a"], "s1", name="la")],
            r"node la: expected inputs \(X, y, state, params...\)",
        ),
        (
            [Node(c.union, ["s0", "y"], "s1", name="uni")],
            r"node uni: input \['y'\] is not a state of this DAG",
        ),
        (
            [Node(c.lasso, ["X", "y", "X", "params:a"], "s1", name="la")],
            r"node la: input \['X'\] is not a state of this DAG",
        ),
        (
            [
                Node(c.lasso, ["X", "y", "s0", "params:a"], "s1", name="la"),
                Node(c.lasso, ["X", "y", "s0", "params:b"], "s2", name="lb"),
            ],
            r"must end in exactly one state \(the final \(M, O\)\), found \['s\d', 's\d'\]",
        ),
        (
            [
                Node(c.mean_value_imputation, ["X", "y_raw"], "y2", name="imp2"),
                Node(c.lasso, ["X", "y", "s0", "params:a"], "s1", name="la"),
            ],
            "exactly one imputation node, found 2",
        ),
    ]
    for extra, message in cases:
        with pytest.raises(DagError, match=message):
            DagSelectiveTest(Pipeline(base + extra))
    c.si_component("initial")(_two_outputs)
    try:
        with pytest.raises(DagError, match="node two: a component must have exactly one output"):
            DagSelectiveTest(Pipeline(base + [Node(_two_outputs, "X", ["a", "b"], name="two")]))
    finally:
        del c.REGISTRY["_two_outputs"]
    # the terminal state of a plain chain is found and named
    ok = DagSelectiveTest(Pipeline(base + [Node(c.lasso, ["X", "y", "s0", "params:a"], "s1")]))
    assert (ok.x_name, ok.y_raw_name, ok.y_name, ok.output_name) == ("X", "y_raw", "y", "s1")


def test_points_where_outlier_detection_leaves_n_at_most_p_are_outside_z():
    """8 rows, 3 features, Cook's distance at lam = 0.5 flags 4 rows at the observed data; along the
    test line it flags more at some z, leaving n <= p for the screening: those points are a
    different output (not Z), and the test runs to the end instead of failing there."""
    dag = Pipeline(
        [
            Node(c.initial_state, "X", "s0", name="init"),
            Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
            Node(c.cook_distance, ["X", "y", "s0", "params:cook"], "s1", name="cook"),
            Node(c.marginal_screening, ["X", "y", "s1", "params:k"], "s2", name="ms"),
        ]
    )
    engine = DagSelectiveTest(dag)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(8, 3))
    y = X @ [1.0, 0.0, 0.0] + rng.normal(size=8)
    params = {"cook": 0.5, "k": 1}
    state = engine.run(X, y, params)
    assert state == {"features": [0], "outliers": [3, 4, 6, 7]}
    res = engine.test(X, y, params, sigma=1.0, termination="exhaustive")[0].result
    line = feature_line(X, engine.imputation_matrix(X, y), y, state, 0, 1.0)
    bound = engine.bind(params)
    grid = np.linspace(-12, 12, 97)
    marked = [
        z
        for z in grid
        if "degenerate_at" in engine.event(X, line.a, line.b, z, bound, strict=False)[0]
    ]
    assert marked  # the line does cross such points
    assert not any(contains(res.truncation, z) for z in marked)
    assert 0.0 <= res.p_value <= 1.0 and res.searched[0, 0] <= -10 - abs(res.stat)


def test_a_rank_deficient_refit_names_rows_features_rank_and_the_fix():
    """Columns 0 and 1 are equal: on the 4 rows left after dropping row 4 the rank is 2 < 3."""
    X = np.zeros((5, 3))
    X[:, 0] = X[:, 1] = [1.0, 2.0, 3.0, 4.0, 5.0]
    X[:, 2] = [1.0, 0.0, 1.0, 0.0, 2.0]
    state = {"features": [0, 1, 2], "outliers": [4]}
    with pytest.raises(RankDeficientError) as err:
        feature_line(X, np.eye(5), np.arange(5.0), state, 1, 1.0)
    assert str(err.value) == (
        "the refit design X[-O, M] (4 rows, selected features [0, 1, 2]) has rank 2 < 3: the OLS "
        "coefficient of feature 1 is not identified (collinear or duplicated columns among the "
        "selected features); remove the duplicated columns from X or declare a DAG that cannot "
        "select both"
    )


def _mystery(X, y, state, k):
    return state


def test_common_namespace_of_nodes_in_sibling_namespaces():
    nodes = [
        Node(c.initial_state, "X", "s0", name="init"),
        Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
    ]
    pipe = Pipeline([Pipeline([nodes[0]], namespace="a.x"), Pipeline([nodes[1]], namespace="a.y")])
    assert _common_namespace(pipe) == "a"


def test_an_unregistered_function_is_named_with_the_fix():
    nodes = [
        Node(c.initial_state, "X", "s0", name="init"),
        Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
        Node(_mystery, ["X", "y", "s0", "params:k"], "s1", name="mystery"),
    ]
    with pytest.raises(DagError) as err:
        DagSelectiveTest(Pipeline(nodes))
    assert str(err.value) == (
        "node mystery: function _mystery is not a registered SI component; decorate it with "
        "@si_component or use one from si_pipeline.components"
    )
