"""The paper's two feature-selection pipelines, declared as ordinary Kedro nodes (Sec. 6.1, op1/op2).

This is all a user writes to get a selective test: the engine derives the test from these Pipeline
objects. Hyperparameters are ``params:<component>.<name>`` inputs, so inside the namespace
``si_pipeline.<dag>`` they live under ``si_pipeline.<dag>.<component>.<name>`` in conf.
"""

from __future__ import annotations

from kedro.pipeline import Node, Pipeline

from . import components as c
from .engine import DagSelectiveTest

FS_INPUTS = {"X", "y_raw"}


def op1() -> Pipeline:
    """mean imputation -> soft-IPOD -> remove outliers -> marginal screening -> extract ->
    {stepwise, lasso} -> union."""
    return Pipeline(
        [
            Node(c.initial_state, "X", "state_0", name="initial_state"),
            Node(c.mean_value_imputation, ["X", "y_raw"], "y", name="mean_value_imputation"),
            Node(
                c.soft_ipod,
                ["X", "y", "state_0", "params:soft_ipod.lam"],
                "state_od",
                name="soft_ipod",
            ),
            Node(c.remove_outliers, "state_od", "state_rm", name="remove_outliers"),
            Node(
                c.marginal_screening,
                ["X", "y", "state_rm", "params:marginal_screening.k"],
                "state_ms",
                name="marginal_screening",
            ),
            Node(c.extract_features, "state_ms", "state_ex", name="extract_features"),
            Node(
                c.stepwise_feature_selection,
                ["X", "y", "state_ex", "params:stepwise.k"],
                "state_sfs",
                name="stepwise_feature_selection",
            ),
            Node(
                c.lasso, ["X", "y", "state_ex", "params:lasso.alpha"], "state_lasso", name="lasso"
            ),
            Node(c.union, ["state_sfs", "state_lasso"], "state_final", name="union"),
        ]
    )


def op2() -> Pipeline:
    """regression imputation -> marginal screening -> extract -> Cook's distance -> remove outliers ->
    {stepwise, lasso} -> intersection."""
    return Pipeline(
        [
            Node(c.initial_state, "X", "state_0", name="initial_state"),
            Node(
                c.definite_regression_imputation,
                ["X", "y_raw"],
                "y",
                name="definite_regression_imputation",
            ),
            Node(
                c.marginal_screening,
                ["X", "y", "state_0", "params:marginal_screening.k"],
                "state_ms",
                name="marginal_screening",
            ),
            Node(c.extract_features, "state_ms", "state_ex", name="extract_features"),
            Node(
                c.cook_distance,
                ["X", "y", "state_ex", "params:cook_distance.lam"],
                "state_od",
                name="cook_distance",
            ),
            Node(c.remove_outliers, "state_od", "state_rm", name="remove_outliers"),
            Node(
                c.stepwise_feature_selection,
                ["X", "y", "state_rm", "params:stepwise.k"],
                "state_sfs",
                name="stepwise_feature_selection",
            ),
            Node(
                c.lasso, ["X", "y", "state_rm", "params:lasso.alpha"], "state_lasso", name="lasso"
            ),
            Node(c.intersection, ["state_sfs", "state_lasso"], "state_final", name="intersection"),
        ]
    )


DAGS = {"op1": op1, "op2": op2}


def namespaced(dag: str, outer: str | None = "si_pipeline") -> Pipeline:
    """The DAG as a modular pipeline ``<outer>.<dag>`` reading the shared inputs X and y_raw."""
    inner = Pipeline([DAGS[dag]()], namespace=dag, inputs=FS_INPUTS)
    return Pipeline([inner], namespace=outer) if outer else inner


def selective_tests(pipelines: dict[str, Pipeline] | None = None) -> dict[str, DagSelectiveTest]:
    """The selective test of every declared DAG, derived from its Kedro pipeline.

    ``pipelines`` are the namespaced DAGs Kedro runs (built here when not given), so the test always
    reads the very Pipeline objects that are run and drawn.
    """
    pipelines = pipelines or {name: namespaced(name) for name in DAGS}
    return {name: DagSelectiveTest(pipe) for name, pipe in pipelines.items()}
