"""The engine that derives the selective test from a Kedro Pipeline: interpretation, errors, exactness."""

import numpy as np
import pytest
from kedro.io import DataCatalog, MemoryDataset
from kedro.pipeline import Node, Pipeline
from kedro.runner import SequentialRunner

from paper_pipelines.pipelines.si_pipeline import components as c
from paper_pipelines.pipelines.si_pipeline.dags import namespaced, op1
from paper_pipelines.pipelines.si_pipeline.data import synthetic_data
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


def _data(seed=0, n=80, p=8, delta=0.8):
    return synthetic_data(np.random.default_rng(seed), n, p, delta, 3, 0.05, 3, 5.0)[:2]


@pytest.mark.parametrize("dag", ["op1", "op2"])
def test_engine_matches_kedro_runner(dag):
    """The engine's (M, O) equals what Kedro computes running the same nodes."""
    X, y = _data()
    pipe = namespaced(dag, outer=None)
    engine = DagSelectiveTest(pipe)
    catalog = DataCatalog({"X": MemoryDataset(X), "y_raw": MemoryDataset(y)})
    for comp, vals in PARAMS[dag].items():
        for key, val in vals.items():
            catalog[f"params:{dag}.{comp}.{key}"] = val
    catalog[f"{dag}.state_final"] = MemoryDataset()
    SequentialRunner().run(pipe, catalog)
    assert catalog.load(f"{dag}.state_final") == engine.run(X, y, PARAMS[dag])


def test_describe_lists_nodes_and_edges():
    spec = DagSelectiveTest(namespaced("op1")).describe(PARAMS["op1"])
    assert spec["namespace"] == "si_pipeline.op1"
    comps = [n_["component"] for n_ in spec["nodes"]]
    assert {"soft_ipod", "lasso", "union", "mean_value_imputation"} <= set(comps)
    lasso_node = next(n_ for n_ in spec["nodes"] if n_["component"] == "lasso")
    assert lasso_node["hyperparameters"] == {"params:si_pipeline.op1.lasso.alpha": 0.08}
    assert ["si_pipeline.op1.extract_features", "si_pipeline.op1.lasso"] in spec["edges"]


def test_user_edit_changes_the_test():
    """Swapping union for intersection in the DAG changes (M, O) and the test without other edits."""
    X, y = _data(seed=4)
    nodes = [n_ for n_ in op1().nodes if n_.name != "union"]
    inter = Pipeline(
        nodes
        + [Node(c.intersection, ["state_sfs", "state_lasso"], "state_final", name="intersection")]
    )
    m_union = DagSelectiveTest(op1()).run(X, y, PARAMS["op1"])["features"]
    m_inter = DagSelectiveTest(inter).run(X, y, PARAMS["op1"])["features"]
    assert set(m_inter) <= set(m_union)
    res = DagSelectiveTest(inter).test(X, y, PARAMS["op1"], sigma=1.0)
    assert [r.feature for r in res] == m_inter


def _unregistered(X, y, state, k):
    return state


@pytest.mark.parametrize(
    "nodes, message",
    [
        (
            [
                Node(c.initial_state, "X", "s0", name="init"),
                Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
                Node(_unregistered, ["X", "y", "s0", "params:k"], "s1", name="mystery"),
            ],
            "node mystery: function _unregistered is not a registered SI component",
        ),
        (
            [
                Node(c.initial_state, "X", "s0", name="init"),
                Node(c.lasso, ["X", "y_raw", "s0", "params:a"], "s1", name="early_lasso"),
                Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
                Node(c.lasso, ["X", "y", "s1", "params:a"], "s2", name="lasso2"),
            ],
            "node early_lasso: reads response 'y_raw'.*imputation must come first",
        ),
        (
            [
                Node(c.initial_state, "X", "s0", name="init"),
                Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
                Node(c.union, ["s0", "elsewhere"], "s1", name="dangling_union"),
            ],
            "dangling_union.*dangling inputs \\['elsewhere'\\]",
        ),
        (
            [
                Node(c.initial_state, "X", "s0", name="init"),
                Node(c.lasso, ["X", "y_raw", "s0", "params:a"], "s1", name="lasso"),
            ],
            "exactly one imputation node",
        ),
    ],
)
def test_malformed_dags_fail_naming_the_node(nodes, message):
    with pytest.raises(DagError, match=message):
        DagSelectiveTest(Pipeline(nodes))


def test_cycle_is_rejected():
    with pytest.raises(Exception, match="[Cc]ircular"):
        Pipeline(
            [
                Node(c.remove_outliers, "a", "b", name="n1"),
                Node(c.extract_features, "b", "a", name="n2"),
            ]
        )


def test_bad_data_fails_clearly():
    engine = DagSelectiveTest(op1())
    X, y = _data()
    X_nan = X.copy()
    X_nan[0, 0] = np.nan
    with pytest.raises(ValueError, match="X contains NaN"):
        engine.run(X_nan, y, PARAMS["op1"])
    with pytest.raises(ValueError, match="entirely missing"):
        engine.run(X, np.full_like(y, np.nan), PARAMS["op1"])
    with pytest.raises(DagError, match="parameter lasso is required but missing"):
        engine.run(
            X, y, {"soft_ipod": {"lam": 0.02}, "marginal_screening": {"k": 5}, "stepwise": {"k": 3}}
        )
    with pytest.raises(
        ValueError, match="node marginal_screening.*rows remain after outlier removal.*need n > p"
    ):  # p > n after outlier removal
        engine.run(X[:9], y[:9], PARAMS["op1"])


@pytest.mark.parametrize("dag", ["op1", "op2"])
def test_precision_search_agrees_with_exhaustive(dag):
    """Check 3 (3 datasets here, 10 in the default run): |p_precision - p_exhaustive| <= 2e-3 and
    the exhaustive p lies in [inf_p, sup_p]; the OC interval lies inside the truncation set Z."""
    engine = DagSelectiveTest(namespaced(dag))
    for seed in range(3):
        X, y = _data(seed=seed + 10, delta=0.3)
        prec = engine.test(X, y, PARAMS[dag], sigma=1.0)
        exh = engine.test(X, y, PARAMS[dag], sigma=1.0, termination="exhaustive")
        oc = engine.test(X, y, PARAMS[dag], sigma=1.0, mode="over_conditioning")
        for a, b, o in zip(prec, exh, oc, strict=True):
            assert abs(a.result.p_value - b.result.p_value) <= 2e-3
            assert a.result.inf_p - 1e-12 <= b.result.p_value <= a.result.sup_p + 1e-12
            lo, hi = o.result.truncation[0]
            assert any(l_ <= lo + 1e-9 and hi - 1e-9 <= u_ for l_, u_ in b.result.truncation)
            assert b.result.searched[0, 0] <= -10 - abs(b.result.stat)


def test_statistic_is_the_ols_coefficient():
    """eta^T y is the OLS coefficient of the refit on (M, rows outside O) of the imputed response."""
    X, y = _data(seed=2)
    engine = DagSelectiveTest(op1())
    state = engine.run(X, y, PARAMS["op1"])
    res = engine.test(X, y, PARAMS["op1"], sigma=1.0, mode="over_conditioning")
    y_imp = c.mean_value_imputation(X, y)
    rows = np.setdiff1d(np.arange(len(y)), state["outliers"])
    coef, *_ = np.linalg.lstsq(X[np.ix_(rows, state["features"])], y_imp[rows], rcond=None)
    np.testing.assert_allclose([r.beta_hat for r in res], coef, rtol=1e-10)
    np.testing.assert_allclose([r.result.stat * r.scale for r in res], coef, rtol=1e-10)


def test_documented_custom_dag_with_dffits_runs():
    """The op3 example of docs/papers/si_pipeline.md: parallel OD nodes, union of outliers, intersection."""
    op3 = Pipeline(
        [
            Node(c.initial_state, "X", "state_0", name="initial_state"),
            Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="mean_value_imputation"),
            Node(
                c.soft_ipod, ["X", "y", "state_0", "params:soft_ipod.lam"], "od1", name="soft_ipod"
            ),
            Node(c.dffits, ["X", "y", "state_0", "params:dffits.lam"], "od2", name="dffits"),
            Node(c.union, ["od1", "od2"], "state_od", name="union_outliers"),
            Node(
                c.stepwise_feature_selection,
                ["X", "y", "state_od", "params:stepwise.k"],
                "s1",
                name="stepwise",
            ),
            Node(c.lasso, ["X", "y", "state_od", "params:lasso.alpha"], "s2", name="lasso"),
            Node(c.intersection, ["s1", "s2"], "state_final", name="intersection"),
        ]
    )
    params = {
        "soft_ipod": {"lam": 0.03},
        "dffits": {"lam": 4.0},
        "stepwise": {"k": 3},
        "lasso": {"alpha": 0.08},
    }
    X, y = _data(seed=7)
    engine = DagSelectiveTest(op3)
    state = engine.run(X, y, params)
    assert state["features"]
    y_imp, s0 = c.mean_value_imputation(X, y), c.initial_state(X)
    flagged = set(c.soft_ipod(X, y_imp, s0, 0.03)["outliers"]) | set(
        c.dffits(X, y_imp, s0, 4.0)["outliers"]
    )
    assert set(state["outliers"]) == flagged  # union of both detectors' flags
    res = engine.test(X, y, params, sigma=1.0)
    assert [r.feature for r in res] == state["features"]
    assert all(r.result.inf_p <= r.result.p_value <= r.result.sup_p for r in res)


def test_degenerate_state_off_the_observed_point_is_a_different_output():
    """Where outlier detection would leave n <= p, the line search marks the interval as 'not Z'."""
    X, y = _data(seed=1, n=30, p=8)
    engine = DagSelectiveTest(op1())
    bound = engine.bind(PARAMS["op1"])
    y_full = c.mean_value_imputation(X, y)
    direction = np.zeros_like(y_full)
    direction[: len(y) // 2] = 1.0  # pushing half the rows far away makes soft-IPOD flag them all
    with pytest.raises(ValueError, match="need n > p"):
        engine.event(X, y_full, direction, 1e3, bound)
    state, lo, hi = engine.event(X, y_full, direction, 1e3, bound, strict=False)
    assert "degenerate_at" in state and lo <= 1e3 <= hi
