"""ood_chameleon: ingest (base datasets, shift grid) -> preprocess (tasks, descriptors) -> train / select
(algorithm zoo, meta-dataset, OOD-Chameleon and its ablations) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from . import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_digits_pool,
                ["params:data", "params:seed"],
                "digits_pool",
                name="load_digits_pool",
            ),
            Node(
                nodes.load_real_pool,
                ["real_metadata", "real_images", "backbone", "params:data", "params:runtime"],
                "real_pool",
                name="load_real_pool",
            ),
            Node(
                nodes.make_shift_grid,
                ["params:data", "params:shifts", "params:seed"],
                "shift_grid",
                name="make_shift_grid",
            ),
            # preprocess
            Node(
                nodes.build_tasks,
                ["shift_grid", "digits_pool", "real_pool", "params:seed"],
                ["task_grid_table", "task_index_arrays"],
                name="build_tasks",
            ),
            Node(
                nodes.embed_tasks,
                ["task_index_arrays", "digits_pool", "real_pool", "params:data"],
                "task_embeddings",
                name="embed_tasks",
            ),
            Node(
                nodes.compute_descriptors,
                ["task_embeddings", "params:descriptors", "params:seed"],
                "descriptors_table",
                name="compute_descriptors",
            ),
            # train / select
            Node(
                nodes.run_algorithm_zoo,
                ["task_embeddings", "params:zoo", "params:seed", "params:runtime"],
                "algorithm_results_table",
                name="run_algorithm_zoo",
            ),
            Node(
                nodes.build_meta,
                ["descriptors_table", "algorithm_results_table", "params:zoo", "params:meta"],
                "meta_dataset_table",
                name="build_meta",
            ),
            Node(
                nodes.fit_selectors,
                [
                    "meta_dataset_table",
                    "params:zoo",
                    "params:meta",
                    "params:selector",
                    "params:evaluation",
                    "params:seed",
                ],
                "selectors_pickle",
                name="fit_selectors",
            ),
            Node(
                nodes.extract_tree_rules,
                ["selectors_pickle", "params:zoo", "params:evaluation"],
                "tree_rules",
                name="extract_tree_rules",
            ),
            # evaluate
            Node(
                nodes.evaluate_selection,
                ["meta_dataset_table", "selectors_pickle", "params:zoo"],
                "selection_table",
                name="evaluate_selection",
            ),
            Node(
                nodes.summarise_metrics,
                [
                    "selection_table",
                    "meta_dataset_table",
                    "algorithm_results_table",
                    "selectors_pickle",
                    "params:zoo",
                    "params:evaluation",
                ],
                "metrics",
                name="summarise_metrics",
            ),
            Node(nodes.tabulate_results, "selection_table", "results", name="tabulate_results"),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.plot_selection_errors,
                "selection_table",
                "selection_error_plot",
                name="plot_selection_errors",
            ),
            Node(
                nodes.plot_win_rates,
                ["meta_dataset_table", "params:zoo"],
                "win_rate_plot",
                name="plot_win_rates",
            ),
            Node(
                nodes.plot_tree,
                ["selectors_pickle", "params:zoo", "params:evaluation"],
                "tree_plot",
                name="plot_tree",
            ),
        ],
        namespace="ood_chameleon",
    )
