"""les_molecules: ingest -> preprocess -> train (VAE, OOD scores, LSO) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from ..pipeline import evaluate_stage
from . import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_molecules,
                ["smiles_input", "params:data", "params:lso", "params:seed"],
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
            *evaluate_stage(nodes.summarise, nodes.check_claims, ["splits_arrays"]),
        ],
        namespace="les_molecules",
    )
