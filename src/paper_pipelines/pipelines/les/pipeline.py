"""les: ingest -> preprocess -> train (VAE, OOD scores, LSO) -> evaluate (wiring only)."""

from collections.abc import Callable

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
            *evaluate_stage(nodes.summarise, nodes.check_claims, []),
        ],
        namespace="les",
    )


def evaluate_stage(summarise: Callable, check_claims: Callable, extra: list[str]) -> list[Node]:
    """The evaluate stage les and les_molecules share: AUROCs, metrics and results (``summarise``
    with ``extra`` inputs before the evaluation block), the claims and one node per figure."""
    return [
        Node(nodes.auroc_by_score, "ood_scores_table", "auroc_table", name="auroc_by_score"),
        Node(
            summarise,
            [
                "auroc_table",
                "lso_trajectories_table",
                "score_cost_json",
                "training_curve_json",
                *extra,
                "params:evaluation",
            ],
            ["metrics", "results"],
            name="summarise",
        ),
        Node(check_claims, "metrics", "claims", name="check_claims"),
        Node(nodes.plot_auroc, "auroc_table", "auroc_plot", name="plot_auroc"),
        Node(nodes.plot_lso, "lso_trajectories_table", "lso_plot", name="plot_lso"),
    ]
