"""The `neutrality` pipeline: seeds -> prompts -> responses (policies, LM) -> judge annotations -> metrics."""

from kedro.pipeline import Node, Pipeline

from paper_pipelines.pipelines.neutrality import nodes


def create_pipeline(**kwargs) -> Pipeline:
    """Ingest -> preprocess -> generate and annotate (method and baselines) -> evaluate, namespace `neutrality`."""
    params = [
        "params:data",
        "params:prompts",
        "params:sample",
        "params:generator",
        "params:judge",
        "params:metrics",
        "params:runtime",
    ]
    return Pipeline(
        [
            # ingest
            Node(nodes.check_parameters, params, "config", name="check_parameters"),
            Node(
                nodes.ingest_inputs,
                ["authored_seeds", "authored_templates", "judge_gold", "judge_holdout", "config"],
                ["seeds", "templates", "judge_sets"],
                name="ingest_inputs",
            ),
            # preprocess
            Node(
                nodes.build_prompts,
                ["seeds", "templates", "config"],
                "prompts_table",
                name="build_prompts",
            ),
            Node(
                nodes.sample_prompts,
                ["prompts_table", "config"],
                "prompt_sample_table",
                name="sample_prompts",
            ),
            # generate (baselines and the real model) and annotate
            Node(
                nodes.generate_scripted,
                ["prompt_sample_table", "config"],
                "scripted_responses",
                name="generate_scripted",
            ),
            Node(
                nodes.generate_lm,
                ["prompt_sample_table", "config"],
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
                ["judge_sets", "config"],
                ["judge_pickle", "judge_validation_json"],
                name="fit_judge",
            ),
            Node(
                nodes.annotate,
                ["responses_table", "prompt_sample_table", "judge_pickle", "config"],
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
                ["annotations_table", "config"],
                "system_metrics",
                name="system_level_metrics",
            ),
            Node(
                nodes.report_results,
                [
                    "technique_distribution_table",
                    "alignment",
                    "system_metrics",
                    "judge_validation_json",
                    "responses_table",
                    "annotations_table",
                    "prompts_table",
                    "config",
                ],
                ["metrics", "results", "distribution_plot", "symmetry_plot"],
                name="report_results",
            ),
        ],
        namespace="neutrality",
    )
