"""Parameter blocks: each DAG block fits its DAG, and the rules that span blocks name the full key."""

import numpy as np
import pytest
import yaml
from kedro.pipeline import Node, Pipeline

from paper_pipelines.common.params import ParameterError, check_parameters
from paper_pipelines.pipelines.si_pipeline import components as c
from paper_pipelines.pipelines.si_pipeline.dags import DAGS, selective_tests
from paper_pipelines.pipelines.si_pipeline.data import diabetes_standardised, synthetic_data
from paper_pipelines.pipelines.si_pipeline.engine import DagError, DagSelectiveTest
from paper_pipelines.pipelines.si_pipeline.parameters import (
    CalibrationParams,
    CvParams,
    DataParams,
    check_across_blocks,
    engine_keys,
)
from tests.kedro_helpers import PROJECT_ROOT

BASE = yaml.safe_load((PROJECT_ROOT / "conf/base/parameters/si_pipeline.yml").read_text())[
    "si_pipeline"
]


def _blocks(**changes) -> dict:
    engines = selective_tests()
    blocks = {d: engines[d].params_model.model_validate(BASE[d]) for d in DAGS}
    blocks["calibration"] = CalibrationParams.model_validate(BASE["calibration"])
    blocks["cv"] = CvParams.model_validate(BASE["cv"])
    blocks.update(changes)
    return blocks


def test_every_declared_dag_has_a_block_giving_exactly_what_its_nodes_read():
    for name, engine in selective_tests().items():
        given = engine.check_params(BASE[name])
        assert {f"{c}.{k}" for c, v in given.items() for k in v} == engine_keys(engine), name
        assert set(engine.params_model.model_fields) == set(BASE[name])
    assert engine_keys(selective_tests()["op1"]) == {
        "soft_ipod.lam",
        "marginal_screening.k",
        "stepwise.k",
        "lasso.alpha",
    }
    check_across_blocks(_blocks())  # the shipped configuration passes


def test_a_component_the_dag_does_not_have_is_named():
    op2 = selective_tests()["op2"]
    with pytest.raises(DagError, match=r"unknown parameter si_pipeline\.op2\.soft_ipod \(allowed"):
        op2.check_params({**BASE["op2"], "soft_ipod": {"lam": 0.02}})
    plain = {**BASE["op2"], "soft_ipod": {"lam": 0.02}}  # a block given as a mapping, not a model
    with pytest.raises(ValueError, match=r"unknown parameter si_pipeline\.op2\.soft_ipod"):
        check_across_blocks(_blocks(op2=plain))


def test_a_missing_hyperparameter_is_named():
    with pytest.raises(ValueError, match=r"parameter si_pipeline\.op1\.lasso is required"):
        check_across_blocks(_blocks(op1={k: v for k, v in BASE["op1"].items() if k != "lasso"}))
    with pytest.raises(ValueError, match=r"block si_pipeline\.op1 is missing: .*lasso\.alpha"):
        check_across_blocks(_blocks(op1=None))


# A user's DAG with a repeated component: two lasso nodes at different penalties, their union.
def op4() -> Pipeline:
    return Pipeline(
        [
            Node(c.initial_state, "X", "state_0", name="initial_state"),
            Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="mean_value_imputation"),
            Node(c.cook_distance, ["X", "y", "state_0", "params:cook.lam"], "od", name="cook"),
            Node(c.lasso, ["X", "y", "od", "params:lasso_small.alpha"], "s1", name="lasso_small"),
            Node(c.lasso, ["X", "y", "od", "params:lasso_big.alpha"], "s2", name="lasso_big"),
            Node(c.marginal_screening, ["X", "y", "s2", "params:top"], "s3", name="screen"),
            Node(c.union, ["s1", "s3"], "state_final", name="union"),
        ]
    )


OP4 = {"cook": {"lam": 3.0}, "lasso_small": {"alpha": 0.02}, "lasso_big": {"alpha": 0.3}, "top": 1}


def test_block_of_a_dag_with_repeated_components_follows_its_nodes():
    """The accepted keys are the DAG's params: inputs, each checked by its component's constraint."""
    engine = DagSelectiveTest(Pipeline([op4()], namespace="si_pipeline.op4", inputs={"X", "y_raw"}))
    assert engine_keys(engine) == {"cook.lam", "lasso_small.alpha", "lasso_big.alpha", "top"}
    assert engine.check_params(OP4) == OP4
    with pytest.raises(
        DagError,
        match=r"si_pipeline\.op4\.lasso_big\.alpha = -0\.3 is invalid: .*> 0|greater than 0",
    ):
        engine.check_params({**OP4, "lasso_big": {"alpha": -0.3}})
    with pytest.raises(DagError, match=r"si_pipeline\.op4\.top = 0 is invalid"):  # k: PositiveInt
        engine.check_params({**OP4, "top": 0})
    with pytest.raises(
        DagError,
        match=r"unknown parameter si_pipeline\.op4\.lasso \(allowed keys "
        r"here: cook, lasso_big, lasso_small, top\)",
    ):
        engine.check_params({**OP4, "lasso": {"alpha": 0.1}})


def test_repeated_lasso_nodes_use_their_own_penalties():
    """Each lasso node reads its own alpha: the union equals lasso(0.02) | top-1 of lasso(0.3)."""
    X, y, _ = synthetic_data(np.random.default_rng(3), 60, 6, 0.5, 3, 0.05, 2, 5.0)
    engine = DagSelectiveTest(op4())
    state = engine.run(X, y, OP4)
    y_imp, s0 = c.mean_value_imputation(X, y), c.initial_state(X)
    od = c.cook_distance(X, y_imp, s0, 3.0)
    small, big = c.lasso(X, y_imp, od, 0.02), c.lasso(X, y_imp, od, 0.3)
    top = c.marginal_screening(X, y_imp, big, 1)
    assert state["features"] == sorted(set(small["features"]) | set(top["features"]))
    assert small["features"] != big["features"]  # the two penalties really differ here
    res = engine.test(X, y, OP4, sigma=1.0, features=[0], mode="over_conditioning")
    assert res[0].feature == state["features"][0]


def test_a_users_dag_is_checked_before_the_run(monkeypatch):
    """Declared in dags.DAGS, op4's block is typed by op4's own model when Kedro checks parameters."""
    from paper_pipelines.pipelines.si_pipeline.pipeline import create_pipeline

    monkeypatch.setitem(DAGS, "op4", op4)
    params = yaml.safe_load((PROJECT_ROOT / "conf/base/parameters/si_pipeline.yml").read_text())
    params["si_pipeline"]["op4"] = OP4
    pipe = create_pipeline()
    check_parameters(params, [pipe], ["si_pipeline"])  # passes: keys come from op4's nodes
    params["si_pipeline"]["op4"] = {**OP4, "lasso_big": {"alpha": 0.0}}
    with pytest.raises(
        ParameterError, match=r"si_pipeline\.op4\.lasso_big\.alpha = 0\.0 is invalid"
    ):
        check_parameters(params, [pipe], ["si_pipeline"])


def test_a_key_read_as_two_different_hyperparameters_is_rejected():
    nodes = [
        Node(c.initial_state, "X", "s0", name="init"),
        Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="imp"),
        Node(c.lasso, ["X", "y", "s0", "params:h"], "s1", name="la"),
        Node(c.stepwise_feature_selection, ["X", "y", "s1", "params:h"], "s2", name="sw"),
    ]
    with pytest.raises(DagError, match=r"nodes la and sw both read params:h"):
        DagSelectiveTest(Pipeline(nodes))


def test_experiments_must_name_declared_dags():
    cal = CalibrationParams.model_validate({**BASE["calibration"], "variants": ["op1", "op9"]})
    with pytest.raises(ValueError, match=r"si_pipeline\.calibration\.variants .*\['op9'\]"):
        check_across_blocks(_blocks(calibration=cal))


def test_cv_grid_candidates_are_checked_like_dag_blocks():
    cv = CvParams.model_validate({**BASE["cv"], "grid": {"op1": {"lasso": {"alpha": [0.1, -1.0]}}}})
    with pytest.raises(ValueError, match=r"si_pipeline\.cv\.grid\.op1\.lasso\.alpha"):
        check_across_blocks(_blocks(cv=cv))
    off = CvParams.model_validate({**BASE["cv"], "enabled": False, "dags": ["op7"]})
    check_across_blocks(_blocks(cv=off))  # CV switched off: its DAG list is not used


def test_diabetes_rows_bound_the_demo_size():
    with pytest.raises(ValueError, match=r"si_pipeline\.data\.n = 443 exceeds the 442"):
        DataParams(source="diabetes", n=443)
    assert DataParams(source="synthetic", n=443).n == 443


def test_diabetes_is_standardised_then_jittered_and_y_scaled():
    """Columns with >= 0.3 n distinct values are standardised only, the others jittered (N(0, 0.1^2));
    y has residual SD 1 (ddof = p) by construction."""
    from sklearn.datasets import load_diabetes

    raw, _ = load_diabetes(return_X_y=True)
    X, y = diabetes_standardised(0)
    assert X.shape == (442, 10)
    many = [j for j in range(10) if len(np.unique(raw[:, j])) >= 0.3 * 442]
    few = [j for j in range(10) if j not in many]
    assert 1 in few and many  # sex takes two values
    assert np.allclose(X[:, many], ((raw - raw.mean(0)) / raw.std(0))[:, many])
    jitter = X[:, few] - ((raw - raw.mean(0)) / raw.std(0))[:, few]
    assert 0.07 < jitter.std() < 0.13
    coef, *_ = np.linalg.lstsq(X, y, rcond=None)
    assert abs(y.mean()) < 1e-12 and np.std(y - X @ coef, ddof=10) == pytest.approx(1.0)
