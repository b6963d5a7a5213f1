"""omnibench: ingest -> preprocess (synthesise the benchmark) -> train (planners, agents) -> evaluate."""

from kedro.pipeline import Node, Pipeline

from . import nodes


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            # (the authored desktop: apps as UI graphs, files; and the authored tasks, checked)
            Node(
                nodes.load_desktop,
                ["apps_spec", "authored_tasks_spec", "params:data"],
                ["desktop_raw_json", "authored_tasks_raw_json"],
                name="load_desktop",
            ),
            # preprocess
            # (the four synthesis processes and the capability suites)
            Node(
                nodes.discover_subtasks,
                ["desktop_raw_json", "params:discovery", "params:seed"],
                "subtask_candidates_json",
                name="discover_subtasks",
            ),
            Node(
                nodes.synthesize_subtasks,
                ["subtask_candidates_json", "desktop_raw_json", "params:synthesis", "params:seed"],
                ["gold_subtasks_json", "synthesis_report_json"],
                name="synthesize_subtasks",
            ),
            Node(
                nodes.compose_tasks,
                [
                    "gold_subtasks_json",
                    "desktop_raw_json",
                    "params:composition",
                    "params:capabilities",
                    "params:seed",
                ],
                ["tasks_raw", "composition_stats"],
                name="compose_tasks",
            ),
            Node(
                nodes.validate_tasks,
                [
                    "tasks_raw",
                    "composition_stats",
                    "authored_tasks_raw_json",
                    "gold_subtasks_json",
                    "desktop_raw_json",
                    "params:composition",
                    "params:evaluation",
                ],
                ["tasks", "acceptance_report_json"],
                name="validate_tasks",
            ),
            Node(
                nodes.build_capability_suites,
                ["tasks", "params:capabilities", "params:seed"],
                "capability_suites_json",
                name="build_capability_suites",
            ),
            # train
            # (the learned planner on graph vs chain data, and the agents' runs)
            Node(
                nodes.compose_training_sets,
                [
                    "gold_subtasks_json",
                    "desktop_raw_json",
                    "params:composition",
                    "params:train",
                    "params:seed",
                ],
                "training_tasks",
                name="compose_training_sets",
            ),
            Node(
                nodes.train_planner,
                ["training_tasks", "gold_subtasks_json", "params:train"],
                "planner_skops",
                name="train_planner",
            ),
            Node(
                nodes.run_agents,
                [
                    "tasks",
                    "capability_suites_json",
                    "gold_subtasks_json",
                    "desktop_raw_json",
                    "planner_skops",
                    "agent_lm",
                    "params:agents",
                    "params:evaluation",
                    "params:seed",
                    "params:runtime",
                ],
                "trajectories",
                name="run_agents",
            ),
            Node(
                nodes.run_transfer_study,
                [
                    "training_tasks",
                    "planner_skops",
                    "gold_subtasks_json",
                    "desktop_raw_json",
                    "params:agents",
                    "params:evaluation",
                ],
                "transfer_table",
                name="run_transfer_study",
            ),
            # evaluate
            # (OmniEval's scores, capability profiles, complexity curves, claims, figures)
            Node(
                nodes.score_tasks,
                ["trajectories", "tasks"],
                "task_scores_table",
                name="score_tasks",
            ),
            Node(
                nodes.score_capabilities,
                [
                    "task_scores_table",
                    "capability_suites_json",
                    "params:evaluation",
                    "params:seed",
                ],
                "capability_scores_table",
                name="score_capabilities",
            ),
            Node(
                nodes.complexity_curves,
                "task_scores_table",
                "complexity_curves_table",
                name="complexity_curves",
            ),
            Node(
                nodes.summarise,
                [
                    "synthesis_report_json",
                    "acceptance_report_json",
                    "task_scores_table",
                    "capability_scores_table",
                    "complexity_curves_table",
                    "transfer_table",
                    "capability_suites_json",
                    "params:capabilities",
                ],
                "metrics",
                name="summarise",
            ),
            Node(
                nodes.tabulate_results,
                ["task_scores_table", "transfer_table"],
                "results",
                name="tabulate_results",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.plot_capability_radar,
                "capability_scores_table",
                "capability_radar_plot",
                name="plot_capability_radar",
            ),
            Node(
                nodes.plot_complexity,
                "complexity_curves_table",
                "complexity_plot",
                name="plot_complexity",
            ),
        ],
        namespace="omnibench",
    )
