"""disc: ingest -> preprocess -> train (two experts, then one collaboration sub-pipeline per variant and
main task) -> evaluate (wiring only)."""

from kedro.pipeline import Node, Pipeline

from . import nodes
from .report import SOCIAL_RUNS

EXPERTS = {  # main task: (main expert, partner expert)
    "cls": ("expert_c_model", "expert_d_model"),
    "box": ("expert_d_model", "expert_c_model"),
}


def collaboration_template() -> Pipeline:
    """The collaboration stage of one variant: train its modules, then probe its frozen features."""
    return Pipeline(
        [
            Node(
                nodes.train_collaboration,
                [
                    "main_expert",
                    "aux_expert",
                    "canvas_pools_arrays",
                    "params:variant",
                    "params:social",
                    "params:expert",
                    "params:seed",
                    "params:runtime",
                ],
                "social_model",
                name="train_collaboration",
            ),
            Node(
                nodes.probe_collaboration,
                [
                    "social_model",
                    "main_expert",
                    "aux_expert",
                    "canvas_pools_arrays",
                    "params:variant",
                    "params:probe",
                    "params:expert",
                    "params:runtime",
                ],
                "probe_scores",
                name="probe_collaboration",
            ),
        ]
    )


def collaboration(task: str, variant: str) -> Pipeline:
    """The template instantiated for one variant; SELF's partner is a copy of the main expert."""
    main, partner = EXPERTS[task]
    aux = main if variant == "self" else partner
    return Pipeline(
        collaboration_template(),
        namespace=f"{variant}_{task}",
        inputs={
            "main_expert": main,
            "aux_expert": aux,
            "canvas_pools_arrays": "canvas_pools_arrays",
        },
        outputs={
            "social_model": f"social_{variant}_{task}_model",
            "probe_scores": f"scores_{variant}_{task}_json",
        },
        parameters={
            "params:variant": f"params:variants.{task}.{variant}",
            "params:social": "params:social",
            "params:expert": "params:expert",
            "params:seed": "params:seed",
            "params:runtime": "params:runtime",
            "params:probe": "params:probe",
        },
    )


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(nodes.load_digits_table, None, "digits_raw_table", name="load_digits_table"),
            # preprocess
            Node(
                nodes.render_pools,
                [
                    "digits_raw_table",
                    "params:data",
                    "params:probe",
                    "params:evaluation",
                    "params:seed",
                    "cifar100",  # paper scale only (data.source cifar100); null in base
                    "cifar_labelled_list",
                ],
                "canvas_pools_arrays",
                name="render_pools",
            ),
            # train: individual learning (two independent experts), then socialisation per variant
            Node(
                nodes.train_expert_cls,
                [
                    "canvas_pools_arrays",
                    "params:expert",
                    "params:seed",
                    "params:runtime",
                    "cls_checkpoint",  # paper scale only (expert.source checkpoint); null in base
                ],
                "expert_c_model",
                name="train_expert_cls",
            ),
            Node(
                nodes.train_expert_det,
                [
                    "canvas_pools_arrays",
                    "params:expert",
                    "params:seed",
                    "params:runtime",
                    "det_checkpoint",
                ],
                "expert_d_model",
                name="train_expert_det",
            ),
            *[collaboration(task, variant) for task, variant in SOCIAL_RUNS],
            # evaluate
            Node(
                nodes.probe_experts,
                [
                    "expert_c_model",
                    "expert_d_model",
                    "canvas_pools_arrays",
                    "params:probe",
                    "params:expert",
                ],
                "baseline_scores_json",
                name="probe_experts",
            ),
            Node(
                nodes.tabulate_results,
                [
                    "params:variants",
                    "baseline_scores_json",
                    *[f"scores_{variant}_{task}_json" for task, variant in SOCIAL_RUNS],
                ],
                "results",
                name="tabulate_results",
            ),
            Node(
                nodes.summarise_metrics,
                ["results", "params:evaluation"],
                "metrics",
                name="summarise_metrics",
            ),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(nodes.plot_accuracy, "results", "accuracy_plot", name="plot_accuracy"),
            Node(
                nodes.plot_selective_weights,
                ["scores_disc_cls_json", "params:evaluation"],
                "selective_weight_plot",
                name="plot_selective_weights",
            ),
        ],
        namespace="disc",
    )
