"""Wiring of si_pipeline: the user's feature-selection DAGs as nested modular pipelines + the SI tests
(fixed DAGs, and the DAG chosen by K-fold CV among candidates with the CV choice inside the test).

The DAGs in dags.py are embedded as ``si_pipeline.op1`` / ``si_pipeline.op2`` (kedro-viz draws each as a
collapsible box whose inside is the component graph). The very same Pipeline objects are handed to
:class:`DagSelectiveTest`, so the test always matches the DAG that Kedro runs and draws.
"""

from __future__ import annotations

from functools import partial, update_wrapper

from kedro.pipeline import Node, Pipeline

from . import nodes as n
from .dags import DAGS, namespaced
from .engine import DagSelectiveTest


def _bind(func, engines):
    """func with the engines bound (keeps the name and docstring for kedro-viz)."""
    return update_wrapper(partial(func, engines), func)


def create_pipeline(**kwargs) -> Pipeline:
    """ingest -> preprocess -> fs DAGs + selective test / calibration / power / real -> evaluate."""
    fs = {name: namespaced(name) for name in DAGS}
    engines = {name: DagSelectiveTest(pipe) for name, pipe in fs.items()}
    blocks = ("data", "inference", "calibration", "power", "real", "cv", *DAGS)
    states = {f"{d}_state": f"{d}.state_final" for d in DAGS}
    main = Pipeline(
        [
            Node(
                _bind(n.validate_parameters, engines),
                {b: f"params:{b}" for b in blocks},
                "config",
                name="validate_parameters",
            ),
            Node(n.ingest_data, "config", ["raw_data", "truth"], name="ingest_data"),
            Node(
                n.preprocess,
                ["raw_data", "config"],
                ["X", "y_raw", "analysed_data_table"],
                name="preprocess",
            ),
            Node(
                _bind(n.describe_dags, engines),
                {"config": "config", **states},
                "fs_spec_json",
                name="describe_dags",
            ),
            Node(
                _bind(n.selective_test, engines),
                {"X": "X", "y_raw": "y_raw", "config": "config", **states},
                "si_results_table",
                name="selective_test",
            ),
            Node(
                _bind(n.calibrate_null, engines),
                "config",
                ["null_pvalues_table", "calibration_json"],
                name="calibrate_null",
            ),
            Node(
                _bind(n.power_curve, engines),
                "config",
                "power_table",
                name="power_curve",
            ),
            Node(
                _bind(n.real_data_eval, engines),
                "config",
                "real_table",
                name="real_data_eval",
            ),
            Node(
                _bind(n.cv_selective_test, engines),
                ["X", "y_raw", "config"],
                ["cv_results_table", "cv_choice_json"],
                name="cv_selective_test",
            ),
            Node(
                _bind(n.cv_experiments, engines),
                "config",
                ["cv_pvalues_table", "cv_calibration_json"],
                name="cv_experiments",
            ),
            Node(
                n.evaluate,
                [
                    "null_pvalues_table",
                    "calibration_json",
                    "power_table",
                    "real_table",
                    "cv_calibration_json",
                ],
                ["metrics", "results", "null_qq_plot", "power_plot"],
                name="evaluate",
            ),
        ],
        namespace="si_pipeline",
    )
    return Pipeline([*fs.values(), main])
