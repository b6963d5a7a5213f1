"""The srca DAG: ingest -> preprocess -> fit SRCA and baselines -> evaluate (wiring only)."""

from __future__ import annotations

from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.srca import nodes

FITS = ["prepared_datasets", "srca_models_arrays", "baseline_models_skops"]  # what evaluate reads
TABLES = ["mse_table", "coranking_table", "phase_table"]  # what the summaries read


def create_pipeline(**kwargs) -> Pipeline:
    """Pipeline `srca` in namespace `srca` (datasets srca.*, parameters params:srca.*)."""
    return Pipeline(
        [
            # ingest
            Node(
                nodes.make_datasets,
                ["params:data", "params:seed", "user_table"],
                "datasets_arrays",
                name="make_datasets",
            ),
            # preprocess
            Node(
                nodes.prepare_datasets,
                ["datasets_arrays", "params:preprocess", "params:seed"],
                "prepared_datasets",
                name="prepare_datasets",
            ),
            # train: the method and its baselines
            Node(
                nodes.fit_srca,
                ["prepared_datasets", "params:model", "params:runtime"],
                "srca_models_arrays",
                name="fit_srca",
            ),
            Node(
                nodes.fit_baselines,
                ["prepared_datasets", "params:model", "params:runtime"],
                "baseline_models_skops",
                name="fit_baselines",
            ),
            Node(
                nodes.fit_manifold_baselines,
                [
                    "prepared_datasets",
                    "params:baselines",
                    "params:evaluation",
                    "params:seed",
                    "params:runtime",
                ],
                "manifold_embeddings_arrays",
                name="fit_manifold_baselines",
            ),
            # evaluate
            Node(
                nodes.srca_embeddings,
                ["prepared_datasets", "srca_models_arrays"],
                "srca_embeddings_arrays",
                name="srca_embeddings",
            ),
            Node(nodes.evaluate_reconstruction, FITS, "mse_table", name="evaluate_reconstruction"),
            Node(
                nodes.evaluate_coranking,
                [*FITS, "manifold_embeddings_arrays", "params:evaluation", "params:seed"],
                ["coranking_table", "coranking_curves_table"],
                name="evaluate_coranking",
            ),
            Node(
                nodes.evaluate_phase,
                [*FITS, "params:evaluation"],
                "phase_table",
                name="evaluate_phase",
            ),
            Node(
                nodes.summarise_metrics,
                [*TABLES, "prepared_datasets", "srca_models_arrays", "params:evaluation"],
                "metrics",
                name="summarise_metrics",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(nodes.results_table, TABLES, "results", name="results_table"),
            Node(
                nodes.plot_embeddings,
                [*FITS, "params:evaluation", "params:seed"],
                "embedding_plot",
                name="plot_embeddings",
            ),
            Node(nodes.plot_mse, "mse_table", "mse_plot", name="plot_mse"),
            Node(
                nodes.plot_coranking,
                "coranking_curves_table",
                "coranking_plot",
                name="plot_coranking",
            ),
        ],
        namespace="srca",
    )
