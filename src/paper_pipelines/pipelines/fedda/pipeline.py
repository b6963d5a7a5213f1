"""fedda: ingest -> preprocess -> train (mini-CLIP, then the federated methods) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from . import nodes

TRAIN_INPUTS = [
    "client_features_arrays",
    "text_tower",
    "dataset_info_raw_json",
    "params:prompt",
    "params:adapter",
    "params:fl",
    "params:study",
    "params:backbone",
    "params:seed",
]


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_images,
                ["params:data", "domain_images"],
                ["raw_images", "dataset_info_raw_json"],
                name="load_images",
            ),
            Node(
                nodes.load_towers,
                ["params:backbone", "params:runtime", "clip_model"],
                ["text_tower", "pretrained_image_tower"],
                name="load_towers",
            ),
            # preprocess
            Node(
                nodes.render_client_domains,
                ["raw_images", "params:data", "params:study", "params:seed"],
                "client_data_arrays",
                name="render_client_domains",
            ),
            Node(
                nodes.render_source_domain,
                ["raw_images", "params:data", "params:seed"],
                "source_set_arrays",
                name="render_source_domain",
            ),
            Node(
                nodes.summarise_partitions,
                ["client_data_arrays", "dataset_info_raw_json"],
                "partition_stats_table",
                name="summarise_partitions",
            ),
            Node(
                nodes.embed_captions,
                ["text_tower", "dataset_info_raw_json", "params:pretrain"],
                "caption_embeddings_arrays",
                name="embed_captions",
            ),
            # train: the mini-CLIP image tower, cached features, then every method on them
            Node(
                nodes.pretrain_mini_clip,
                [
                    "source_set_arrays",
                    "caption_embeddings_arrays",
                    "params:backbone",
                    "params:pretrain",
                    "params:runtime",
                    "params:seed",
                ],
                ["image_tower_model", "tower_report_json"],
                name="pretrain_mini_clip",
            ),
            Node(
                nodes.precompute_client_features,
                [
                    "image_tower_model",
                    "client_data_arrays",
                    "params:backbone",
                    "pretrained_image_tower",
                    "params:runtime",
                ],
                "client_features_arrays",
                name="precompute_client_features",
            ),
            Node(
                nodes.train_methods,
                TRAIN_INPUTS,
                ["runs_table", "final_states_arrays"],
                name="train_methods",
            ),
            Node(
                nodes.train_official_optimizer,
                TRAIN_INPUTS,
                "official_sgd_runs_table",
                name="train_official_optimizer",
            ),
            Node(
                nodes.train_label_skew,
                TRAIN_INPUTS,
                "label_skew_runs_table",
                name="train_label_skew",
            ),
            # evaluate
            Node(
                nodes.summarise,
                [
                    "runs_table",
                    "official_sgd_runs_table",
                    "label_skew_runs_table",
                    "tower_report_json",
                    "params:evaluation",
                    "params:study",
                ],
                ["metrics", "results"],
                name="summarise",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.plot_accuracy_curves,
                "runs_table",
                "accuracy_curves_plot",
                name="plot_accuracy_curves",
            ),
            Node(
                nodes.plot_client_accuracy,
                ["runs_table", "params:evaluation"],
                "client_accuracy_plot",
                name="plot_client_accuracy",
            ),
            Node(
                nodes.plot_gate_weights, "runs_table", "gate_weights_plot", name="plot_gate_weights"
            ),
        ],
        namespace="fedda",
    )
