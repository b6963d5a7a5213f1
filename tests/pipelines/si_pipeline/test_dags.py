"""The paper's two pipelines (Sec. 6.1) as declared: components, order, wiring and names."""

from paper_pipelines.pipelines.si_pipeline import components as c
from paper_pipelines.pipelines.si_pipeline.dags import (
    DAGS,
    FS_INPUTS,
    namespaced,
    op1,
    op2,
    selective_tests,
)
from paper_pipelines.pipelines.si_pipeline.engine import DagSelectiveTest

# op1: mean imputation -> soft-IPOD -> remove outliers -> marginal screening -> extract ->
# {stepwise, lasso} -> union (the docstring of dags.op1, from the paper's Fig. of op1)
OP1_EDGES = [
    ["initial_state", "soft_ipod"],
    ["mean_value_imputation", "soft_ipod"],
    ["soft_ipod", "remove_outliers"],
    ["mean_value_imputation", "marginal_screening"],
    ["remove_outliers", "marginal_screening"],
    ["marginal_screening", "extract_features"],
    ["mean_value_imputation", "stepwise_feature_selection"],
    ["extract_features", "stepwise_feature_selection"],
    ["mean_value_imputation", "lasso"],
    ["extract_features", "lasso"],
    ["stepwise_feature_selection", "union"],
    ["lasso", "union"],
]
# op2: regression imputation -> marginal screening -> extract -> Cook's distance -> remove outliers ->
# {stepwise, lasso} -> intersection
OP2_EDGES = [
    ["definite_regression_imputation", "marginal_screening"],
    ["initial_state", "marginal_screening"],
    ["marginal_screening", "extract_features"],
    ["definite_regression_imputation", "cook_distance"],
    ["extract_features", "cook_distance"],
    ["cook_distance", "remove_outliers"],
    ["definite_regression_imputation", "stepwise_feature_selection"],
    ["remove_outliers", "stepwise_feature_selection"],
    ["definite_regression_imputation", "lasso"],
    ["remove_outliers", "lasso"],
    ["stepwise_feature_selection", "intersection"],
    ["lasso", "intersection"],
]


def test_node_names_are_the_component_names():
    for make in (op1, op2):
        for node in make().nodes:
            assert node.name == node.func.__name__


def test_the_declared_wiring_is_the_papers():
    for make, edges, params in (
        (op1, OP1_EDGES, ["soft_ipod.lam", "marginal_screening.k", "stepwise.k", "lasso.alpha"]),
        (
            op2,
            OP2_EDGES,
            ["marginal_screening.k", "cook_distance.lam", "stepwise.k", "lasso.alpha"],
        ),
    ):
        engine = DagSelectiveTest(make())
        d = engine.describe()
        assert sorted(d["edges"]) == sorted(edges)
        assert d["output"] == "state_final"
        read = [h for s in engine.steps for h in s.hyper]
        assert sorted(read) == sorted(f"params:{p}" for p in params)
        assert make().inputs() == {"X", "y_raw", *(f"params:{p}" for p in params)}
    assert [n.func for n in op1().nodes if component_kind(n) == "imputation"] == [
        c.mean_value_imputation
    ]
    assert [n.func for n in op2().nodes if component_kind(n) == "imputation"] == [
        c.definite_regression_imputation
    ]
    assert {n.name: n.func for n in op2().nodes}["intersection"] is c.intersection
    assert {n.name: n.func for n in op1().nodes}["union"] is c.union


def component_kind(node):
    return c.component_spec(node.func).kind


def test_namespaced_dags_share_the_raw_inputs():
    assert {"X", "y_raw"} == FS_INPUTS and {"op1", "op2"} == set(DAGS)
    pipe = namespaced("op2")
    assert all(n.name.startswith("si_pipeline.op2.") for n in pipe.nodes)
    assert {"si_pipeline.X", "si_pipeline.y_raw"} <= pipe.inputs()  # one X, y_raw for both DAGs
    assert pipe.outputs() == {"si_pipeline.op2.state_final"}
    inner = namespaced("op1", outer=None)
    assert inner.outputs() == {"op1.state_final"}
    assert {"X", "y_raw", "params:op1.lasso.alpha"} <= inner.inputs()
    tests = selective_tests()
    assert set(tests) == {"op1", "op2"}
    assert tests["op1"].namespace == "si_pipeline.op1"
    given = selective_tests({"mine": inner})
    assert list(given) == ["mine"] and given["mine"].pipeline is inner
