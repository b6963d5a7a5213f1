"""core_kernel pipeline: ingest -> preprocess -> full / core MKC, extension, scaling -> evaluate."""

from kedro.pipeline import Node, Pipeline

from .nodes import (
    build_kernels,
    evaluate,
    load_features,
    run_core_sweep,
    run_extension,
    run_full_mkc,
    run_scaling,
)


def create_pipeline(**kwargs) -> Pipeline:
    """Wiring only; see nodes.py and the method modules."""
    return Pipeline(
        [
            Node(
                load_features,
                ["params:data", "params:core_kernel"],
                "features_table",
                name="load_features",
            ),
            Node(
                build_kernels,
                ["features_table", "params:kernels", "params:data", "params:runtime"],
                "kernel_stack",
                name="build_kernels",
            ),
            Node(
                run_full_mkc,
                ["kernel_stack", "params:mkc", "params:data", "params:runtime"],
                ["full_mkc", "full_weights_json"],
                name="run_full_mkc",
            ),
            Node(
                run_core_sweep,
                ["kernel_stack", "full_mkc", "params:mkc", "params:core", "params:runtime"],
                "core_weights_table",
                name="run_core_sweep",
            ),
            Node(
                run_extension,
                [
                    "kernel_stack",
                    "full_mkc",
                    "params:mkc",
                    "params:core",
                    "params:extension",
                    "params:data",
                    "params:runtime",
                ],
                ["clustering_scores_table", "clusterings_table"],
                name="run_extension",
            ),
            Node(
                run_scaling,
                ["params:mkc", "params:core", "params:scaling", "params:runtime"],
                "timing_table",
                name="run_scaling",
            ),
            Node(
                evaluate,
                [
                    "full_weights_json",
                    "core_weights_table",
                    "clustering_scores_table",
                    "timing_table",
                    "params:core",
                    "params:extension",
                ],
                ["metrics", "results", "weight_error_plot", "timing_plot", "clustering_plot"],
                name="evaluate",
            ),
        ],
        namespace="core_kernel",
        # The whole block, un-prefixed, so the first node can validate every parameter up front.
        parameters={"params:core_kernel": "params:core_kernel"},
    )
