"""cross_geometric: ingest -> preprocess (snapshots, tree scores, evaluation edges) -> train (four
geometry modes, ablations, static GAE) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from . import nodes

TRAIN_INPUTS = [
    "snapshots_arrays",
    "tree_scores_arrays",
    "evaluation_edges_arrays",
    "params:model",
    "params:geometry",
    "params:loss",
    "params:train",
    "params:snapshots",
    "params:runtime",
    "params:seed",
]


def _train_node(mode: str) -> Node:
    return Node(
        getattr(nodes, f"train_{mode}"),
        TRAIN_INPUTS,
        [f"{mode}_model", f"{mode}_log_table", f"{mode}_scores"],
        name=f"train_{mode}",
    )


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_dynamic_graphs,
                ["htgn_snapshots", "params:data", "params:snapshots", "params:seed"],
                ["events_raw_table", "node_regions_raw_table"],
                name="load_dynamic_graphs",
            ),
            # preprocess
            Node(
                nodes.build_snapshot_graphs,
                ["events_raw_table", "node_regions_raw_table", "params:data", "params:snapshots"],
                "snapshots_arrays",
                name="build_snapshot_graphs",
            ),
            Node(
                nodes.compute_tree_scores,
                ["snapshots_arrays", "params:geometry", "params:seed"],
                "tree_scores_arrays",
                name="compute_tree_scores",
            ),
            Node(
                nodes.make_evaluation_edges,
                ["snapshots_arrays", "params:snapshots", "params:evaluation", "params:seed"],
                "evaluation_edges_arrays",
                name="make_evaluation_edges",
            ),
            # train: the four geometry modes, CGDyn-R's ablations and the static GAE, same splits
            *(_train_node(m) for m in ("euclid", "hyperbolic", "hybrid_const", "hybrid_gate")),
            Node(
                nodes.train_ablations,
                TRAIN_INPUTS,
                ["ablation_log_table", "ablation_scores"],
                name="train_ablations",
            ),
            Node(
                nodes.train_static_baseline,
                [
                    "snapshots_arrays",
                    "evaluation_edges_arrays",
                    "params:model",
                    "params:train",
                    "params:snapshots",
                    "params:runtime",
                    "params:seed",
                ],
                ["static_gae_model", "static_gae_scores"],
                name="train_static_baseline",
            ),
            # evaluate
            Node(
                nodes.evaluate_link_prediction,
                [
                    "euclid_scores",
                    "hyperbolic_scores",
                    "hybrid_const_scores",
                    "hybrid_gate_scores",
                    "ablation_scores",
                    "static_gae_scores",
                ],
                "results",
                name="evaluate_link_prediction",
            ),
            Node(
                nodes.analyse_geometry_gate,
                [
                    "snapshots_arrays",
                    "tree_scores_arrays",
                    "hybrid_gate_scores",
                    "params:snapshots",
                ],
                "gate_table",
                name="analyse_geometry_gate",
            ),
            Node(nodes.summarise, ["results", "gate_table"], "metrics", name="summarise"),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(nodes.plot_gate, "gate_table", "gate_plot", name="plot_gate"),
            Node(nodes.plot_auc, "results", "auc_plot", name="plot_auc"),
        ],
        namespace="cross_geometric",
    )
