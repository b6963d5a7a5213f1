"""The ata pipeline: ingest -> preprocess -> train (trajectory + every allocation policy) -> evaluate."""

from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.ata import nodes


def create_pipeline(**kwargs) -> Pipeline:
    """Namespace ``ata``; every artefact but the in-memory config and split is versioned."""
    return Pipeline(
        [
            Node(
                nodes.check_parameters,
                ["params:workers", "params:data", "params:optim", "params:sim", "params:eval"],
                "config",
                name="check_parameters",
            ),
            Node(nodes.ingest_digits, "config", "digits_table", name="ingest_digits"),
            Node(
                nodes.make_worker_profiles,
                "config",
                ["worker_profiles_table", "instance_meta_json"],
                name="make_worker_profiles",
            ),
            Node(
                nodes.preprocess_digits,
                ["digits_table", "config"],
                "train_data",
                name="preprocess_digits",
            ),
            Node(
                nodes.train_sgd_trajectory,
                ["train_data", "config"],
                ["loss_trajectory_table", "trained_model"],
                name="train_sgd_trajectory",
            ),
            Node(
                nodes.simulate_allocations,
                ["worker_profiles_table", "instance_meta_json", "config"],
                "round_log_table",
                name="simulate_allocations",
            ),
            Node(
                nodes.evaluate,
                [
                    "round_log_table",
                    "loss_trajectory_table",
                    "worker_profiles_table",
                    "instance_meta_json",
                    "config",
                ],
                [
                    "metrics",
                    "results",
                    "loss_curves_table",
                    "loss_vs_runtime_plot",
                    "loss_vs_worker_time_plot",
                    "proxy_regret_plot",
                ],
                name="evaluate",
            ),
        ],
        namespace="ata",
    )
