"""deliberate_practice: ingest -> preprocess (reference, generator) -> train (DP, baselines) -> evaluate.

RUN, BLOCKS and TAIL are what every run of the learner reads: the generator, the real splits and the
sampling / training blocks.
"""

from kedro.pipeline import Node, Pipeline

from . import nodes

RUN = ["generator", "real_splits_arrays", "ood_test_arrays"]
BLOCKS = ["params:sampler", "params:guidance", "params:learner", "params:loop"]
TAIL = ["params:seed", "params:runtime"]


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.split_real_images,
                ["real_images", "params:data", "params:seed"],
                "real_splits_arrays",
                name="split_real_images",
            ),
            Node(
                nodes.make_ood_test,
                ["real_splits_arrays", "params:data", "params:seed"],
                "ood_test_arrays",
                name="make_ood_test",
            ),
            # preprocess
            Node(
                nodes.fit_reference_classifier,
                "real_splits_arrays",
                "reference_skops",
                name="fit_reference_classifier",
            ),
            Node(
                nodes.train_generator,
                [
                    "real_splits_arrays",
                    "pretrained_generator",
                    "params:generator",
                    "params:seed",
                    "params:runtime",
                ],
                ["generator_model", "generator_training_json"],
                name="train_generator",
            ),
            Node(
                nodes.load_generator,
                [
                    "generator_model",
                    "pretrained_generator",
                    "real_splits_arrays",
                    "params:generator",
                    "params:data",
                    "params:runtime",
                ],
                "generator",
                name="load_generator",
            ),
            # train: DP and the baselines on the same generator, learner and splits
            Node(
                nodes.assess_generator,
                [
                    "generator",
                    "real_splits_arrays",
                    "reference_skops",
                    "generator_training_json",
                    "params:sampler",
                    "params:evaluation",
                    *TAIL,
                ],
                "generator_report_json",
                name="assess_generator",
            ),
            Node(
                nodes.run_static,
                [*RUN, *BLOCKS, "params:static", "params:prune", "params:evaluation", *TAIL],
                ["static_curves_table", "static_pools_arrays"],
                name="run_static",
            ),
            Node(
                nodes.run_deliberate_practice,
                [*RUN, *BLOCKS, "params:evaluation", *TAIL],
                ["dp_curves_table", "dp_pool_arrays", "learner_model"],
                name="run_deliberate_practice",
            ),
            Node(
                nodes.run_static_equal_n,
                [*RUN, "static_pools_arrays", "dp_curves_table", *BLOCKS, "params:static", *TAIL],
                "static_equal_n_curves_table",
                name="run_static_equal_n",
            ),
            Node(
                nodes.run_generate_then_prune,
                [*RUN, "static_pools_arrays", *BLOCKS, "params:prune", "params:evaluation", *TAIL],
                "prune_curves_table",
                name="run_generate_then_prune",
            ),
            Node(
                nodes.run_real_reference,
                [*RUN, *BLOCKS, "params:evaluation", *TAIL],
                "real_curves_table",
                name="run_real_reference",
            ),
            Node(
                nodes.run_guidance_diagnostics,
                [*RUN, "reference_skops", *BLOCKS, "params:evaluation", *TAIL],
                "guidance_diagnostics_table",
                name="run_guidance_diagnostics",
            ),
            # evaluate
            Node(
                nodes.collect_curves,
                [
                    "static_curves_table",
                    "static_equal_n_curves_table",
                    "dp_curves_table",
                    "prune_curves_table",
                    "real_curves_table",
                ],
                "accuracy_curves_table",
                name="collect_curves",
            ),
            Node(
                nodes.summarise_metrics,
                [
                    "accuracy_curves_table",
                    "guidance_diagnostics_table",
                    "generator_report_json",
                    "params:guidance",
                    "params:loop",
                ],
                "metrics",
                name="summarise_metrics",
            ),
            Node(
                nodes.tabulate_results,
                ["accuracy_curves_table", "guidance_diagnostics_table", "params:guidance"],
                "results",
                name="tabulate_results",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.plot_scaling,
                ["accuracy_curves_table", "params:guidance"],
                "scaling_plot",
                name="plot_scaling",
            ),
            Node(
                nodes.plot_guidance,
                "guidance_diagnostics_table",
                "guidance_plot",
                name="plot_guidance",
            ),
        ],
        namespace="deliberate_practice",
    )
