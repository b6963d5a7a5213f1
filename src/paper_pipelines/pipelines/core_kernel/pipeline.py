"""core_kernel: ingest -> preprocess -> train (full / core MKC, extension, scaling) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from . import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_features,
                ["params:data", "params:seed"],
                "features_table",
                name="load_features",
            ),
            # preprocess
            Node(
                nodes.build_kernels,
                ["features_table", "params:kernels", "params:seed", "params:runtime"],
                "kernel_stack",
                name="build_kernels",
            ),
            # train: full MKC (the reference), core kernels, the large-scale extension, scaling in n
            Node(
                nodes.run_full_mkc,
                ["kernel_stack", "params:mkc", "params:seed", "params:runtime"],
                ["full_mkc", "full_weights_json"],
                name="run_full_mkc",
            ),
            Node(
                nodes.run_core_sweep,
                [
                    "kernel_stack",
                    "full_mkc",
                    "params:mkc",
                    "params:core",
                    "params:seed",
                    "params:runtime",
                ],
                "core_weights_table",
                name="run_core_sweep",
            ),
            Node(
                nodes.run_extension,
                [
                    "kernel_stack",
                    "full_mkc",
                    "params:mkc",
                    "params:core",
                    "params:extension",
                    "params:seed",
                    "params:runtime",
                ],
                ["clustering_scores_table", "clusterings_table"],
                name="run_extension",
            ),
            Node(
                nodes.run_scaling,
                [
                    "params:mkc",
                    "params:core",
                    "params:scaling",
                    "params:seed",
                    "params:runtime",
                ],
                "timing_table",
                name="run_scaling",
            ),
            # evaluate
            Node(
                nodes.summarise_metrics,
                [
                    "full_weights_json",
                    "core_weights_table",
                    "clustering_scores_table",
                    "timing_table",
                    "params:core",
                    "params:extension",
                ],
                "metrics",
                name="summarise_metrics",
            ),
            Node(
                nodes.tabulate_results,
                [
                    "core_weights_table",
                    "clustering_scores_table",
                    "params:core",
                    "params:extension",
                ],
                "results",
                name="tabulate_results",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.plot_weight_errors,
                "core_weights_table",
                "weight_error_plot",
                name="plot_weight_errors",
            ),
            Node(nodes.plot_timing, "timing_table", "timing_plot", name="plot_timing"),
            Node(
                nodes.plot_clustering,
                "clustering_scores_table",
                "clustering_plot",
                name="plot_clustering",
            ),
        ],
        namespace="core_kernel",
    )
