"""The `tca` pipeline: Digits-C (or CIFAR-10-C) -> source model -> TTA streams -> LinearTCA(+) -> report."""

from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.tca import nodes


def create_pipeline(**kwargs) -> Pipeline:
    """Ingest -> preprocess -> train/adapt (method and baselines) -> evaluate, in namespace `tca`."""
    return Pipeline(
        [
            Node(
                nodes.load_source_data,
                [
                    "params:data",
                    "params:real_data",
                    "params:source",
                    "params:tta",
                    "params:linear_tca",
                    "params:forgetting",
                    "params:runtime",
                    "params:seed",
                ],
                "source_splits_pickle",
                name="load_source_data",
            ),
            Node(
                nodes.make_corrupted_sets,
                ["source_splits_pickle", "params:data", "params:real_data", "params:seed"],
                "corrupted_sets_pickle",
                name="make_corrupted_sets",
            ),
            Node(
                nodes.train_source_model,
                [
                    "source_splits_pickle",
                    "params:source",
                    "params:real_data",
                    "params:runtime",
                    "params:seed",
                ],
                ["source_model", "source_training_json"],
                name="train_source_model",
            ),
            Node(
                nodes.collect_tta_outputs,
                [
                    "source_model",
                    "corrupted_sets_pickle",
                    "params:tta",
                    "params:linear_tca",
                    "params:data",
                    "params:runtime",
                    "params:seed",
                ],
                "tta_outputs",
                name="collect_tta_outputs",
            ),
            Node(
                nodes.apply_linear_tca,
                ["tta_outputs", "source_model", "params:linear_tca", "params:runtime"],
                "tca_outputs",
                name="apply_linear_tca",
            ),
            Node(
                nodes.forgetting_check,
                [
                    "source_model",
                    "tca_outputs",
                    "corrupted_sets_pickle",
                    "source_splits_pickle",
                    "params:tta",
                    "params:data",
                    "params:forgetting",
                    "params:runtime",
                    "params:seed",
                ],
                "forgetting_json",
                name="forgetting_check",
            ),
            Node(
                nodes.build_tables,
                ["tta_outputs", "tca_outputs", "params:linear_tca", "params:data"],
                ["accuracy_table", "cost_table"],
                name="build_tables",
            ),
            Node(
                nodes.report,
                [
                    "accuracy_table",
                    "cost_table",
                    "forgetting_json",
                    "source_training_json",
                    "params:data",
                    "params:linear_tca",
                    "tta_outputs",
                ],
                ["metrics", "results", "accuracy_plot", "severity_plot", "cost_plot"],
                name="report",
            ),
        ],
        namespace="tca",
    )
