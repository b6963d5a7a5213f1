"""cpl_iqa: ingest -> preprocess (distorted set, MOS, splits, vector labels) -> train (warm-up, CPL,
baselines) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from . import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_source_images,
                ["real_images", "real_labels", "params:data"],
                "source_images",
                name="load_source_images",
            ),
            # preprocess
            Node(
                nodes.make_iqa_set,
                ["source_images", "params:data", "params:seed"],
                ["iqa_images_arrays", "distortion_log_table"],
                name="make_iqa_set",
            ),
            Node(
                nodes.score_quality,
                ["iqa_images_arrays", "distortion_log_table", "params:data", "params:seed"],
                "mos_table",
                name="score_quality",
            ),
            Node(
                nodes.split_ssl,
                ["mos_table", "params:split", "params:seed"],
                "splits_arrays",
                name="split_ssl",
            ),  # fmt: skip
            Node(
                nodes.convert_vector_labels,
                ["mos_table", "params:labels", "params:ablations"],
                "vector_labels_arrays",
                name="convert_vector_labels",
            ),
            Node(
                nodes.compute_nss_features,
                "iqa_images_arrays",
                "nss_features_arrays",
                name="compute_nss_features",
            ),  # fmt: skip
            # train: Stage 1, Stage 2 (CPL-IQA, ablations, supervised controls), classical baselines
            Node(
                nodes.train_warmup,
                [
                    "iqa_images_arrays",
                    "nss_features_arrays",
                    "vector_labels_arrays",
                    "splits_arrays",
                    "backbone_weights",
                    "params:model",
                    "params:labels",
                    "params:stage1",
                    "params:ablations",
                    "params:seed",
                    "params:runtime",
                ],
                ["stage1_models_arrays", "warmup_predictions_table"],
                name="train_warmup",
            ),  # fmt: skip
            Node(
                nodes.train_cpl,
                [
                    "stage1_models_arrays",
                    "iqa_images_arrays",
                    "nss_features_arrays",
                    "vector_labels_arrays",
                    "splits_arrays",
                    "params:model",
                    "params:labels",
                    "params:stage2",
                    "params:ablations",
                    "params:baselines",
                    "params:seed",
                    "params:runtime",
                ],
                ["cpl_models_arrays", "cpl_predictions_table", "pseudo_label_log_table"],
                name="train_cpl",
            ),  # fmt: skip
            Node(
                nodes.train_classical_baselines,
                [
                    "nss_features_arrays",
                    "iqa_images_arrays",
                    "mos_table",
                    "splits_arrays",
                    "params:baselines",
                ],
                ["svr_skops", "classical_predictions_table"],
                name="train_classical_baselines",
            ),  # fmt: skip
            # evaluate
            Node(
                nodes.evaluate_predictions,
                [
                    "warmup_predictions_table",
                    "cpl_predictions_table",
                    "classical_predictions_table",
                    "mos_table",
                    "params:evaluation",
                ],
                "scores_table",
                name="evaluate_predictions",
            ),  # fmt: skip
            Node(
                nodes.summarise_metrics,
                ["scores_table", "pseudo_label_log_table", "params:ablations"],
                "metrics",
                name="summarise_metrics",
            ),
            Node(nodes.tabulate_results, "scores_table", "results", name="tabulate_results"),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(nodes.plot_methods, "results", "method_srcc_plot", name="plot_methods"),
            Node(
                nodes.plot_predictions,
                [
                    "warmup_predictions_table",
                    "cpl_predictions_table",
                    "mos_table",
                    "params:evaluation",
                ],
                "prediction_plot",
                name="plot_predictions",
            ),  # fmt: skip
            Node(
                nodes.plot_pseudo_labels,
                "pseudo_label_log_table",
                "pseudo_label_plot",
                name="plot_pseudo_labels",
            ),  # fmt: skip
        ],
        namespace="cpl_iqa",
    )
