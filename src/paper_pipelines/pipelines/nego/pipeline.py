"""nego, wiring only: ingest (GOOD-Motif-style graphs of every split, raw layer) -> preprocess (graph ids
per split and part, checked disjoint) -> train (every method x split x seed, selected on OOD validation)
-> evaluate (accuracies, mask AUC, environment probe, explanations, metrics, claims, figures)."""

from kedro.pipeline import Node, Pipeline

from . import nodes

MODEL_BLOCKS = [
    "params:data",
    "params:model",
    "params:prompt",
    "params:extractor",
    "params:loss",
    "params:train",
]
SELECTED = ["classifiers_model", "graphs_raw_table", "ood_splits_json"]


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.generate_motif_graphs,
                # molecules_sdf: a user's SDF (split.molecule_source catalog); empty by default
                ["molecules_sdf", "params:data", "params:split", "params:seed"],
                "graphs_raw_table",
                name="generate_motif_graphs",
            ),
            # preprocess
            Node(
                nodes.make_ood_splits,
                ["graphs_raw_table", "params:split"],
                "ood_splits_json",
                name="make_ood_splits",
            ),
            # train
            Node(
                nodes.train_methods,
                [
                    "graphs_raw_table",
                    "ood_splits_json",
                    *MODEL_BLOCKS,
                    "params:seed",
                    "params:runtime",
                ],
                ["classifiers_model", "train_log_table"],
                name="train_methods",
            ),
            # evaluate
            Node(
                nodes.evaluate_ood,
                [SELECTED[0], "train_log_table", *SELECTED[1:], *MODEL_BLOCKS, "params:runtime"],
                "runs_table",
                name="evaluate_ood",
            ),
            Node(
                nodes.probe_environment_embedding,
                [
                    *SELECTED,
                    *MODEL_BLOCKS,
                    "params:evaluation",
                    "params:seed",
                    "params:runtime",
                ],
                "environment_probe_json",
                name="probe_environment_embedding",
            ),
            Node(
                nodes.explain_subgraphs,
                [*SELECTED, *MODEL_BLOCKS, "params:evaluation", "params:runtime"],
                "explanations_json",
                name="explain_subgraphs",
            ),
            Node(
                nodes.summarise_metrics,
                ["runs_table", "environment_probe_json"],
                "metrics",
                name="summarise_metrics",
            ),
            Node(nodes.tabulate_results, "runs_table", "results", name="tabulate_results"),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(nodes.plot_accuracy, "results", "accuracy_plot", name="plot_accuracy"),
            Node(nodes.plot_subgraphs, "explanations_json", "subgraph_plot", name="plot_subgraphs"),
        ],
        namespace="nego",
    )
