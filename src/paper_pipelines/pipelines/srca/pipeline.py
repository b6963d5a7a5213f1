"""The srca DAG: ingest -> preprocess -> fit SRCA and baselines -> evaluate (wiring only)."""

from __future__ import annotations

from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.srca import nodes


def create_pipeline(**kwargs) -> Pipeline:
    """Pipeline `srca` in namespace `srca` (datasets srca.*, parameters params:srca.*)."""
    return Pipeline(
        [
            # ingest
            Node(nodes.make_datasets, "params:data", "datasets_pickle", name="make_datasets"),
            # preprocess
            Node(
                nodes.prepare_datasets,
                ["datasets_pickle", "params:preprocess"],
                "prepared_datasets",
                name="prepare_datasets",
            ),
            # train / select: the method and its baselines
            Node(
                nodes.fit_srca_models,
                ["prepared_datasets", "params:model"],
                "srca_models_pickle",
                name="fit_srca",
            ),
            Node(
                nodes.fit_baselines,
                ["prepared_datasets", "params:model"],
                "baseline_models_pickle",
                name="fit_baselines",
            ),
            Node(
                nodes.fit_manifold_embeddings,
                ["prepared_datasets", "params:baselines", "params:eval"],
                "manifold_embeddings_pickle",
                name="fit_manifold_baselines",
            ),
            # evaluate
            Node(
                nodes.srca_embeddings,
                ["prepared_datasets", "srca_models_pickle"],
                "srca_embeddings_pickle",
                name="srca_embeddings",
            ),
            Node(
                nodes.evaluate_reconstruction,
                ["prepared_datasets", "srca_models_pickle", "baseline_models_pickle"],
                "mse_table",
                name="evaluate_reconstruction",
            ),
            Node(
                nodes.evaluate_structure,
                [
                    "prepared_datasets",
                    "srca_models_pickle",
                    "baseline_models_pickle",
                    "manifold_embeddings_pickle",
                    "params:eval",
                ],
                ["coranking_table", "coranking_curves_table"],
                name="evaluate_coranking",
            ),
            Node(
                nodes.evaluate_phase,
                [
                    "prepared_datasets",
                    "srca_models_pickle",
                    "baseline_models_pickle",
                    "params:eval",
                ],
                "phase_table",
                name="evaluate_phase",
            ),
            Node(
                nodes.summarise,
                [
                    "mse_table",
                    "coranking_table",
                    "phase_table",
                    "prepared_datasets",
                    "srca_models_pickle",
                    "params:eval",
                ],
                ["metrics", "results"],
                name="summarise",
            ),
            Node(
                nodes.plot_embeddings,
                [
                    "prepared_datasets",
                    "srca_models_pickle",
                    "baseline_models_pickle",
                    "params:eval",
                ],
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
