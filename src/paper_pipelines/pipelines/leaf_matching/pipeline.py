"""leaf_matching: ingest -> preprocess -> train (leaf matching, grid, baselines, scaling) -> evaluate."""

from kedro.pipeline import Node, Pipeline

from . import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_graphs,
                ["params:data", "params:split", "params:seed", "user_edges"],
                ["hierarchy_edges", "real_edges"],
                name="load_graphs",
            ),
            Node(
                nodes.generate_scaling_graphs,
                ["params:data", "params:seed"],
                "scaling_graphs",
                name="generate_scaling_graphs",
            ),
            # preprocess
            Node(
                nodes.split_observed_links,
                ["hierarchy_edges", "real_edges", "params:split", "params:seed"],
                "link_splits_arrays",
                name="split_observed_links",
            ),
            # train: leaf matching (the model: leaves per mu), the (alpha, gamma) grid, the baselines
            Node(
                nodes.train_leaf_matching,
                ["link_splits_arrays", "params:model", "params:seed", "params:runtime"],
                ["leaf_coordinates_arrays", "training_log_table"],
                name="train_leaf_matching",
            ),
            Node(
                nodes.tune_link_model,
                [
                    "link_splits_arrays",
                    "params:model",
                    "params:tuning",
                    "params:seed",
                    "params:runtime",
                ],
                ["tuning_table", "tuned_coordinates_arrays"],
                name="tune_link_model",
            ),
            Node(
                nodes.train_baselines,
                [
                    "link_splits_arrays",
                    "params:baselines",
                    "params:model",
                    "params:seed",
                    "params:runtime",
                ],
                "baseline_scores_arrays",
                name="train_baselines",
            ),
            Node(
                nodes.measure_scaling,
                ["scaling_graphs", "params:split", "params:model", "params:seed", "params:runtime"],
                "scaling_table",
                name="measure_scaling",
            ),
            # evaluate
            Node(
                nodes.evaluate_link_prediction,
                [
                    "link_splits_arrays",
                    "leaf_coordinates_arrays",
                    "tuned_coordinates_arrays",
                    "baseline_scores_arrays",
                    "params:evaluation",
                ],
                "link_metrics_table",
                name="evaluate_link_prediction",
            ),
            Node(
                nodes.summarise_metrics,
                [
                    "link_metrics_table",
                    "tuning_table",
                    "scaling_table",
                    "params:model",
                    "params:evaluation",
                ],
                "metrics",
                name="summarise_metrics",
            ),
            Node(nodes.tabulate_results, "link_metrics_table", "results", name="tabulate_results"),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.plot_data_efficiency,
                "link_metrics_table",
                "data_efficiency_plot",
                name="plot_data_efficiency",
            ),
            Node(nodes.plot_scaling, "scaling_table", "scaling_plot", name="plot_scaling"),
        ],
        namespace="leaf_matching",
    )
