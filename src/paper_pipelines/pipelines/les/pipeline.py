"""les: ingest -> preprocess -> train (VAE, OOD scores, LSO) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from . import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.generate_expressions,
                ["expressions_input", "params:data", "params:seed"],
                "expressions_raw_table",
                name="generate_expressions",
            ),
            # preprocess
            Node(
                nodes.split_expressions,
                ["expressions_raw_table", "params:data", "params:seed"],
                "splits_arrays",
                name="split_expressions",
            ),
            # train: the VAE, then LES and its baselines as OOD scores and as LSO penalties
            Node(
                nodes.fit_vae,
                ["splits_arrays", "pretrained_vae", "params:vae", "params:runtime", "params:seed"],
                ["vae_model", "training_curve_json"],
                name="fit_vae",
            ),
            Node(
                nodes.score_latents,
                [
                    "vae_model",
                    "splits_arrays",
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
            Node(nodes.auroc_by_score, "ood_scores_table", "auroc_table", name="auroc_by_score"),
            Node(
                nodes.summarise,
                [
                    "auroc_table",
                    "lso_trajectories_table",
                    "score_cost_json",
                    "training_curve_json",
                    "params:evaluation",
                ],
                ["metrics", "results"],
                name="summarise",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(nodes.plot_auroc, "auroc_table", "auroc_plot", name="plot_auroc"),
            Node(nodes.plot_lso, "lso_trajectories_table", "lso_plot", name="plot_lso"),
        ],
        namespace="les",
    )
