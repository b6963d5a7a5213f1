"""multilabel_bounds: ingest (pools, yeast) -> preprocess (splits) -> train (grid fits, anchors, Rademacher
estimates) -> evaluate (gaps, rates, metrics, claims, figures). Wiring only."""

from kedro.pipeline import Node, Pipeline

from . import nodes

POOLS = "synthetic_pools_arrays"


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.generate_pools,
                ["params:data", "params:seed"],
                [POOLS, "run_clock"],
                name="generate_pools",
            ),  # fmt: skip
            Node(
                nodes.load_real_data,
                ["params:data", "params:seed"],
                "real_data_table",
                name="load_real_data",
            ),  # fmt: skip
            # preprocess
            Node(
                nodes.make_splits,
                ["real_data_table", "params:data", "params:seed"],
                "split_index_json",
                name="make_splits",
            ),  # fmt: skip
            # train: projected-Adam ERM for every loss (hinge: the Lipschitz-only baseline), anchors
            Node(
                nodes.train_grid,
                [
                    POOLS,
                    "params:data",
                    "params:model",
                    "params:train",
                    "params:seed",
                    "params:runtime",
                ],
                "synthetic_fits_arrays",
                name="train_grid",
            ),
            Node(
                nodes.train_real,
                [
                    "real_data_table",
                    "split_index_json",
                    "params:data",
                    "params:model",
                    "params:train",
                    "params:seed",
                    "params:runtime",
                ],
                "real_fits_arrays",
                name="train_real",
            ),  # fmt: skip
            Node(
                nodes.run_anchors,
                [
                    "real_data_table",
                    "split_index_json",
                    "params:data",
                    "params:anchors",
                    "params:train",
                    "params:seed",
                    "params:runtime",
                ],
                "anchor_table",
                name="run_anchors",
            ),  # fmt: skip
            Node(
                nodes.estimate_rademacher,
                [
                    POOLS,
                    "params:data",
                    "params:model",
                    "params:rademacher",
                    "params:train",
                    "params:seed",
                    "params:runtime",
                ],
                "rademacher_table",
                name="estimate_rademacher",
            ),  # fmt: skip
            # evaluate
            Node(
                nodes.measure_gaps,
                [
                    POOLS,
                    "real_data_table",
                    "split_index_json",
                    "synthetic_fits_arrays",
                    "real_fits_arrays",
                    "params:data",
                    "params:train",
                ],
                "gap_table",
                name="measure_gaps",
            ),  # fmt: skip
            Node(
                nodes.fit_rates,
                ["gap_table", "rademacher_table", "params:evaluation"],
                "rates_json",
                name="fit_rates",
            ),  # fmt: skip
            Node(
                nodes.summarise_metrics,
                [
                    "gap_table",
                    "rademacher_table",
                    "anchor_table",
                    "run_clock",
                    "synthetic_fits_arrays",
                    "real_fits_arrays",
                    "params:data",
                    "params:evaluation",
                ],
                "metrics",
                name="summarise_metrics",
            ),  # fmt: skip
            Node(
                nodes.tabulate_results,
                ["gap_table", "anchor_table", "params:evaluation"],
                "results",
                name="tabulate_results",
            ),  # fmt: skip
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(nodes.plot_gap_vs_n, "gap_table", "gap_vs_n_plot", name="plot_gap_vs_n"),
            Node(nodes.plot_gap_vs_c, "gap_table", "gap_vs_c_plot", name="plot_gap_vs_c"),
            Node(
                nodes.plot_rademacher, "rademacher_table", "rademacher_plot", name="plot_rademacher"
            ),
        ],
        namespace="multilabel_bounds",
    )
