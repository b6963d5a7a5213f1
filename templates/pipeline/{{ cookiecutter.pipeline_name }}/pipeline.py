"""{{ cookiecutter.pipeline_name }}: ingest -> preprocess -> train -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from . import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.generate_data,
                ["params:data", "params:seed"],
                "raw_table",
                name="generate_data",
            ),
            # preprocess
            Node(
                nodes.split_data,
                ["raw_table", "params:data", "params:seed"],
                "splits",
                name="split_data",
            ),
            # train: the paper's method and its baselines on the same splits
            Node(
                nodes.train_method,
                ["splits", "params:method", "params:runtime"],
                "method_json",
                name="train_method",
            ),
            Node(nodes.train_baselines, "splits", "baselines_json", name="train_baselines"),
            # evaluate
            Node(
                nodes.evaluate_methods,
                ["splits", "method_json", "baselines_json", "params:evaluation"],
                "results",
                name="evaluate_methods",
            ),
            Node(nodes.summarise, "results", "metrics", name="summarise"),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(nodes.plot_errors, "results", "error_plot", name="plot_errors"),
        ],
        namespace="{{ cookiecutter.pipeline_name }}",
    )
