"""vilamp: ingest -> preprocess -> train (selector, reader + DFM) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from . import nodes

TOWERS = ["assets", "selector_model", "reader_model", "text_embeddings_json"]
BLOCKS = [
    "params:data",
    "params:selector",
    "params:towers",
    "params:reader",
    "params:dks",
    "params:dfm",
]


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_shipped_assets,
                ["params:data", "params:seed"],
                "assets",
                name="load_shipped_assets",
            ),
            # preprocess
            Node(
                nodes.make_caption_corpus,
                ["assets", "params:data", "params:selector", "params:seed"],
                "caption_pairs_table",
                name="make_caption_corpus",
            ),
            Node(
                nodes.make_train_videos,
                ["assets", "params:data", "params:seed"],
                "train_videos_json",
                name="make_train_videos",
            ),
            Node(
                nodes.make_eval_videos,
                ["assets", "params:data", "params:evaluation", "params:seed"],
                "eval_videos_json",
                name="make_eval_videos",
            ),
            Node(nodes.embed_texts, "params:data", "text_embeddings_json", name="embed_texts"),
            # train: the selector (frozen afterwards), then the reader jointly with the DFM weights
            Node(
                nodes.pretrain_selector,
                [
                    "caption_pairs_table",
                    "assets",
                    "text_embeddings_json",
                    "params:data",
                    "params:selector",
                    "params:towers",
                    "params:seed",
                    "params:runtime",
                ],
                ["selector_model", "selector_log_table"],
                name="pretrain_selector",
            ),
            Node(
                nodes.train_reader,
                [
                    "train_videos_json",
                    "assets",
                    "selector_model",
                    "text_embeddings_json",
                    *BLOCKS,
                    "params:seed",
                    "params:runtime",
                ],
                ["reader_model", "reader_log_table"],
                name="train_reader",
            ),
            # evaluate
            Node(
                nodes.run_benchmark,
                ["eval_videos_json", *TOWERS, *BLOCKS, "params:evaluation", "params:runtime"],
                "predictions_table",
                name="run_benchmark",
            ),
            Node(
                nodes.tabulate_accuracy,
                "predictions_table",
                "accuracy_table",
                name="tabulate_accuracy",
            ),
            Node(
                nodes.measure_scaling,
                [*TOWERS, *BLOCKS, "params:evaluation", "params:seed", "params:runtime"],
                "scaling_table",
                name="measure_scaling",
            ),
            Node(
                nodes.project_llm_memory,
                "params:llm_projection",
                "llm_memory_table",
                name="project_llm_memory",
            ),
            Node(
                nodes.summarise,
                [
                    "accuracy_table",
                    "scaling_table",
                    "params:evaluation",
                    "params:dks",
                    "params:data",
                    "params:llm_projection",
                ],
                "metrics",
                name="summarise",
            ),
            Node(
                nodes.tabulate_results,
                ["accuracy_table", "params:evaluation"],
                "results",
                name="tabulate_results",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(nodes.plot_accuracy, "accuracy_table", "accuracy_plot", name="plot_accuracy"),
            Node(nodes.plot_scaling, "scaling_table", "scaling_plot", name="plot_scaling"),
            Node(
                nodes.plot_llm_memory,
                ["llm_memory_table", "params:llm_projection"],
                "llm_memory_plot",
                name="plot_llm_memory",
            ),
        ],  # fmt: skip
        namespace="vilamp",
    )
