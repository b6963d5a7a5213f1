"""tca: digits (or CIFAR-10-C) -> Digits-C domains -> source model, TTA streams, LinearTCA(+) -> report."""

from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.tca import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_source_data,
                ["cifar_c_folder", "params:data", "params:real_data", "params:seed"],
                "source_splits_arrays",
                name="load_source_data",
            ),
            # preprocess
            Node(
                nodes.make_corrupted_sets,
                ["source_splits_arrays", "params:data", "params:seed"],
                "corrupted_sets_arrays",
                name="make_corrupted_sets",
            ),
            # train: the source model, the TTA baselines over each domain's stream, then LinearTCA(+)
            Node(
                nodes.train_source_model,
                [
                    "source_splits_arrays",
                    "source_checkpoint",
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
                    "corrupted_sets_arrays",
                    "params:tta",
                    "params:linear_tca",
                    "params:evaluation",
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
            # evaluate
            Node(
                nodes.forgetting_check,
                [
                    "source_model",
                    "tca_outputs",
                    "corrupted_sets_arrays",
                    "source_splits_arrays",
                    "params:tta",
                    "params:evaluation",
                    "params:runtime",
                    "params:seed",
                ],
                "forgetting_json",
                name="forgetting_check",
            ),
            Node(
                nodes.build_tables,
                ["tta_outputs", "tca_outputs", "params:linear_tca", "params:evaluation"],
                ["accuracy_table", "cost_table"],
                name="build_tables",
            ),
            Node(
                nodes.build_metrics,
                [
                    "accuracy_table",
                    "cost_table",
                    "forgetting_json",
                    "source_training_json",
                    "tta_outputs",
                    "params:linear_tca",
                    "params:evaluation",
                ],
                "metrics",
                name="build_metrics",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.build_results,
                ["accuracy_table", "cost_table", "params:evaluation"],
                "results",
                name="build_results",
            ),
            Node(
                nodes.plot_accuracy,
                ["accuracy_table", "params:evaluation"],
                "accuracy_plot",
                name="plot_accuracy",
            ),
            Node(nodes.plot_severity, "accuracy_table", "severity_plot", name="plot_severity"),
            Node(nodes.plot_cost, "cost_table", "cost_plot", name="plot_cost"),
        ],
        namespace="tca",
    )
