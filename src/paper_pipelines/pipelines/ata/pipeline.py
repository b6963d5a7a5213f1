"""The ata pipeline: ingest -> preprocess -> train (trajectory + every allocation policy) -> evaluate."""

from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.ata import nodes


def create_pipeline(**kwargs) -> Pipeline:
    """Namespace ``ata``; every artefact but the split and the policy summary is versioned."""
    return Pipeline(
        [
            # ingest
            Node(nodes.ingest_digits, None, "digits_table", name="ingest_digits"),
            Node(
                nodes.make_worker_profiles,
                ["params:workers", "params:seed"],
                ["worker_profiles_table", "instance_meta_json"],
                name="make_worker_profiles",
            ),
            # preprocess
            Node(
                nodes.preprocess_digits,
                ["digits_table", "params:data", "params:seed"],
                "train_data",
                name="preprocess_digits",
            ),
            # train
            Node(
                nodes.train_sgd_trajectory,
                [
                    "train_data",
                    "params:optim",
                    "params:workers",
                    "params:sim",
                    "params:runtime",
                    "params:seed",
                ],
                ["loss_trajectory_table", "trained_model"],
                name="train_sgd_trajectory",
            ),
            Node(
                nodes.simulate_allocations,
                [
                    "worker_profiles_table",
                    "instance_meta_json",
                    "params:workers",
                    "params:sim",
                    "params:seed",
                ],
                "round_log_table",
                name="simulate_allocations",
            ),
            # evaluate
            Node(
                nodes.summarise_policies,
                ["round_log_table", "params:evaluation"],
                "policy_summary",
                name="summarise_policies",
            ),
            Node(
                nodes.check_sandwich,
                [
                    "worker_profiles_table",
                    "instance_meta_json",
                    "params:workers",
                    "params:evaluation",
                    "params:seed",
                ],
                "sandwich_json",
                name="check_sandwich",
            ),
            Node(
                nodes.stamp_loss_curves,
                ["round_log_table", "loss_trajectory_table"],
                "loss_curves_table",
                name="stamp_loss_curves",
            ),
            Node(
                nodes.report_metrics,
                [
                    "policy_summary",
                    "loss_trajectory_table",
                    "sandwich_json",
                    "instance_meta_json",
                    "worker_profiles_table",
                    "params:sim",
                    "params:evaluation",
                ],
                "metrics",
                name="report_metrics",
            ),
            Node(
                nodes.report_results,
                ["policy_summary", "loss_trajectory_table"],
                "results",
                name="report_results",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.plot_loss_vs_runtime,
                "loss_curves_table",
                "loss_vs_runtime_plot",
                name="plot_loss_vs_runtime",
            ),
            Node(
                nodes.plot_loss_vs_worker_time,
                "loss_curves_table",
                "loss_vs_worker_time_plot",
                name="plot_loss_vs_worker_time",
            ),
            Node(
                nodes.plot_proxy_regret,
                "round_log_table",
                "proxy_regret_plot",
                name="plot_proxy_regret",
            ),
        ],
        namespace="ata",
    )
