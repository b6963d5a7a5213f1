"""dlp: ingest -> preprocess -> prune (score, allocate, prune, recover) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.dlp import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(
                nodes.load_corpus,
                ["c4_train", "wikitext2_test", "params:data", "params:seed"],
                "corpus",
                name="load_corpus",
            ),
            Node(
                nodes.load_base_model,
                [
                    "pretrained_lm",
                    "corpus",
                    "params:model",
                    "params:tiny",
                    "params:runtime",
                    "params:seed",
                ],
                "base_model",
                name="load_base_model",
            ),
            # preprocess
            Node(
                nodes.make_windows,
                ["corpus", "base_model", "params:data", "params:seed"],
                ["calibration_windows", "evaluation_windows"],
                name="make_windows",
            ),
            # prune: score the blocks, allocate per-block sparsities, prune the grid, recover with LoRA
            Node(
                nodes.score_layers,
                ["base_model", "calibration_windows", "params:allocation", "params:data"],
                "layer_scores_table",
                name="score_layers",
            ),
            Node(
                nodes.allocate_sparsity,
                ["layer_scores_table", "params:allocation"],
                "layer_sparsities_json",
                name="allocate_sparsity",
            ),
            Node(
                nodes.prune_and_measure,
                [
                    "base_model",
                    "calibration_windows",
                    "evaluation_windows",
                    "layer_sparsities_json",
                    "params:pruner",
                    "params:allocation",
                    "params:data",
                    "params:evaluation",
                ],
                ["pruning_runs_table", "pruning_masks", "pruned_model"],
                name="prune_and_measure",
            ),
            Node(
                nodes.recover_with_lora,
                [
                    "pruned_model",
                    "calibration_windows",
                    "evaluation_windows",
                    "params:recovery",
                    "params:evaluation",
                    "params:seed",
                ],
                "lora_recovery_json",
                name="recover_with_lora",
            ),
            # evaluate
            Node(
                nodes.dense_perplexity,
                ["base_model", "evaluation_windows", "params:evaluation"],
                "dense_ppl",
                name="dense_perplexity",
            ),
            Node(
                nodes.zero_shot,
                ["pruned_model", "params:evaluation"],
                "zero_shot_json",
                name="zero_shot",
            ),
            Node(
                nodes.summarise,
                [
                    "pruning_runs_table",
                    "dense_ppl",
                    "layer_sparsities_json",
                    "lora_recovery_json",
                    "zero_shot_json",
                    "params:allocation",
                    "params:pruner",
                ],
                ["metrics", "results"],
                name="summarise",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.plot_allocations,
                ["layer_sparsities_json", "params:allocation"],
                "allocation_plot",
                name="plot_allocations",
            ),
            Node(
                nodes.plot_perplexity,
                ["pruning_runs_table", "dense_ppl"],
                "perplexity_plot",
                name="plot_perplexity",
            ),
        ],
        namespace="dlp",
    )
