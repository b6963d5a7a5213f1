"""les_molecules: ingest -> preprocess -> train (VAE, OOD scores, LSO) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from .. import nodes as les_nodes
from . import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_molecules,
                ["params:data", "params:lso", "params:seed"],
                "molecules_raw_table",
                name="load_molecules",
            ),
            # preprocess
            Node(
                nodes.split_molecules,
                ["molecules_raw_table", "params:data", "params:seed"],
                "splits_arrays",
                name="split_molecules",
            ),
            # train: the VAE, then LES and its baselines as OOD scores and as LSO penalties
            Node(
                nodes.fit_vae,
                ["splits_arrays", "params:vae", "params:runtime", "params:seed"],
                ["vae_model", "training_curve_json"],
                name="fit_vae",
            ),
            Node(
                nodes.score_latents,
                [
                    "vae_model",
                    "splits_arrays",
                    "params:data",
                    "params:vae",
                    "params:score",
                    "params:ood",
                    "params:runtime",
                    "params:seed",
                ],
                ["ood_scores_table", "score_cost_json"],
                name="score_latents",
            ),
            Node(
                nodes.run_lso,
                [
                    "vae_model",
                    "splits_arrays",
                    "params:data",
                    "params:vae",
                    "params:score",
                    "params:lso",
                    "params:runtime",
                    "params:seed",
                ],
                "lso_trajectories_table",
                name="run_lso",
            ),
            # evaluate
            Node(
                les_nodes.auroc_by_score, "ood_scores_table", "auroc_table", name="auroc_by_score"
            ),
            Node(
                nodes.summarise,
                [
                    "auroc_table",
                    "lso_trajectories_table",
                    "score_cost_json",
                    "training_curve_json",
                    "splits_arrays",
                    "params:evaluation",
                ],
                ["metrics", "results"],
                name="summarise",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(nodes.plot_auroc, "auroc_table", "auroc_plot", name="plot_auroc"),
            Node(nodes.plot_lso, "lso_trajectories_table", "lso_plot", name="plot_lso"),
        ],
        namespace="les_molecules",
    )
