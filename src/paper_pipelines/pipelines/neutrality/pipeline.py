"""The `neutrality` pipeline: seeds -> prompts -> responses (baselines, the model) -> annotations -> metrics."""

from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.neutrality import nodes


def create_pipeline(**kwargs) -> Pipeline:
    """Ingest -> preprocess -> generate and annotate -> evaluate, in namespace `neutrality`."""
    return Pipeline(
        [
            # ingest
            Node(
                nodes.ingest_seeds,
                ["seed_files", "authored_templates", "params:data"],
                ["seeds", "templates"],
                name="ingest_seeds",
            ),
            Node(
                nodes.ingest_judge_sets,
                ["judge_gold", "judge_holdout", "judge_holdout_lm", "judge_lm", "params:judge"],
                "judge_sets",
                name="ingest_judge_sets",
            ),
            # preprocess
            Node(
                nodes.build_prompts,
                ["seeds", "templates", "params:prompts"],
                "prompts_table",
                name="build_prompts",
            ),
            Node(
                nodes.sample_prompts,
                ["prompts_table", "params:sample", "params:seed"],
                "prompt_sample_table",
                name="sample_prompts",
            ),
            # generate and annotate (the paper's "train" stage: the baselines, the model, the judge)
            Node(
                nodes.generate_scripted,
                ["prompt_sample_table", "params:generator"],
                "scripted_responses",
                name="generate_scripted",
            ),
            Node(
                nodes.generate_lm,
                [
                    "prompt_sample_table",
                    "generator_lm",
                    "params:generator",
                    "params:seed",
                    "params:runtime",
                ],
                "lm_responses",
                name="generate_lm",
            ),
            Node(
                nodes.collect_responses,
                ["scripted_responses", "lm_responses"],
                "responses_table",
                name="collect_responses",
            ),
            Node(
                nodes.fit_judge,
                ["judge_sets", "judge_lm", "params:judge", "params:seed", "params:runtime"],
                ["judge_skops", "judge_validation_json"],
                name="fit_judge",
            ),
            Node(
                nodes.annotate,
                [
                    "responses_table",
                    "prompt_sample_table",
                    "judge_skops",
                    "judge_lm",
                    "params:judge",
                    "params:runtime",
                ],
                "annotations_table",
                name="annotate",
            ),
            # evaluate
            Node(
                nodes.output_level_metrics,
                "annotations_table",
                ["technique_distribution_table", "alignment"],
                name="output_level_metrics",
            ),
            Node(
                nodes.system_level_metrics,
                ["annotations_table", "params:evaluation"],
                "system_metrics",
                name="system_level_metrics",
            ),
            Node(
                nodes.score_generators,
                ["alignment", "system_metrics"],
                "scores_table",
                name="score_generators",
            ),
            Node(
                nodes.report_metrics,
                [
                    "scores_table",
                    "judge_validation_json",
                    "responses_table",
                    "annotations_table",
                    "prompts_table",
                    "params:judge",
                ],
                "metrics",
                name="report_metrics",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.report_results,
                ["scores_table", "responses_table", "params:judge"],
                "results",
                name="report_results",
            ),
            Node(
                nodes.distribution_plot,
                ["technique_distribution_table", "params:judge"],
                "distribution_plot",
                name="distribution_plot",
            ),
            Node(
                nodes.symmetry_plot,
                ["annotations_table", "system_metrics", "params:judge"],
                "symmetry_plot",
                name="symmetry_plot",
            ),
        ],
        namespace="neutrality",
    )
