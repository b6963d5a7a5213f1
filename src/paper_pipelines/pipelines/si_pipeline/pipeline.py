"""Wiring of si_pipeline: the user's feature-selection DAGs as nested modular pipelines + the SI tests
(fixed DAGs, and the DAG chosen by K-fold CV among candidates with the CV choice inside the test).

The DAGs in dags.py are embedded as ``si_pipeline.op1`` / ``si_pipeline.op2`` (kedro-viz draws each as a
collapsible box whose inside is the component graph). The very same Pipeline objects are handed to
:class:`DagSelectiveTest`, so the test always matches the DAG that Kedro runs and draws.

Stages: ingest (demo data) -> preprocess (standardise, missing responses) -> select (the DAGs select
(M, O); each DAG's ``params:<dag>`` block is read, typed, by its ``<dag>.declare_pipeline`` node, which
binds the DAG's selective test to it; the declared pipelines are tested on the demo data, fixed and chosen
by CV) -> evaluate (replicated null / power / real-data experiments, metrics, claims, results, one node
per figure). Downstream nodes take the declared pipelines by keyword under the DAG's name.
"""

from __future__ import annotations

from kedro.pipeline import Node, Pipeline

from . import nodes as n
from .dags import DAGS, namespaced, selective_tests


def create_pipeline(**kwargs) -> Pipeline:
    """ingest -> preprocess -> select (DAGs, their selective tests) -> evaluate."""
    fs = {name: namespaced(name) for name in DAGS}
    engines = selective_tests(fs)
    declared = {d: f"{d}_declared_pipeline" for d in DAGS}
    states = {f"{d}_state": f"{d}.state_final" for d in DAGS}
    inference, seed = "params:inference", "params:seed"
    evaluation = [
        "null_pvalues_table",
        "calibration_json",
        "power_table",
        "real_table",
        "cv_calibration_json",
    ]
    main = Pipeline(
        [
            # ingest
            Node(
                n.ingest_data,
                ["params:data", seed],
                ["raw_data", "demo_truth_json"],
                name="ingest_data",
            ),
            # preprocess
            Node(
                n.preprocess,
                ["raw_data", "params:data", seed],
                ["X", "y_raw", "analysed_data_table"],
                name="preprocess",
            ),
            # select
            *[
                Node(
                    n.pipeline_declarer(d, engines[d]),
                    f"params:{d}",
                    declared[d],
                    name="declare_pipeline",
                    namespace=d,
                )
                for d in DAGS
            ],
            Node(n.describe_dags, {**declared, **states}, "fs_spec_json", name="describe_dags"),
            Node(
                n.selective_test,
                {"X": "X", "y_raw": "y_raw", "inference": inference, **declared, **states},
                "si_results_table",
                name="selective_test",
            ),
            Node(
                n.cv_selective_test,
                {
                    "X": "X",
                    "y_raw": "y_raw",
                    "cv": "params:cv",
                    "inference": inference,
                    "seed": seed,
                    **declared,
                },
                ["cv_results_table", "cv_choice_json"],
                name="cv_selective_test",
            ),
            # evaluate
            Node(
                n.calibrate_null,
                {
                    "calibration": "params:calibration",
                    "inference": inference,
                    "seed": seed,
                    **declared,
                },
                ["null_pvalues_table", "calibration_json"],
                name="calibrate_null",
            ),
            Node(
                n.power_curve,
                {"power": "params:power", "inference": inference, "seed": seed, **declared},
                "power_table",
                name="power_curve",
            ),
            Node(
                n.real_data_eval,
                {"real": "params:real", "inference": inference, "seed": seed, **declared},
                "real_table",
                name="real_data_eval",
            ),
            Node(
                n.cv_experiments,
                {
                    "cv": "params:cv",
                    "calibration": "params:calibration",
                    "power": "params:power",
                    "real": "params:real",
                    "inference": inference,
                    "seed": seed,
                    **declared,
                },
                ["cv_pvalues_table", "cv_calibration_json"],
                name="cv_experiments",
            ),
            Node(n.metrics_summary, evaluation, "metrics", name="metrics_summary"),
            Node(n.check_claims, "metrics", "claims", name="check_claims"),
            Node(n.method_results, evaluation, "results", name="method_results"),
            Node(n.null_qq_plot, "null_pvalues_table", "null_qq_plot", name="null_qq_plot"),
            Node(
                n.power_plot,
                ["power_table", "cv_calibration_json", inference],
                "power_plot",
                name="power_plot",
            ),
        ],
        namespace="si_pipeline",
    )
    return Pipeline([*fs.values(), main])
