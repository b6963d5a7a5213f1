"""fedavg_overparam: ingest -> preprocess (client splits) -> train (one node per width) -> evaluate."""

from kedro.pipeline import Node, Pipeline

from . import nodes
from .parameters import WIDTH_SLOTS


def _train_nodes() -> list[Node]:
    """Width slot k trains the k-th width of kernel_regime.widths and of heterogeneity.widths.

    Kedro builds the DAG before it reads any configuration, so the sweep is laid out in WIDTH_SLOTS
    slots (namespaces width_1 ... width_5) that --env and --params can fill; an unused slot returns
    an empty trace at once.
    """
    shared = ["images", "client_splits_table"]
    out = []
    for k in range(WIDTH_SLOTS):
        ns = f"width_{k + 1}"
        out.append(
            Node(
                nodes.kernel_regime_node(k),
                [
                    *shared,
                    "params:data",
                    "params:model",
                    "params:kernel_regime",
                    "params:seed",
                    "params:runtime",
                ],  # fmt: skip
                f"{ns}.kernel_regime_trace_json",
                name="train_kernel_regime",
                namespace=ns,
            )
        )
        out.append(
            Node(
                nodes.heterogeneity_node(k),
                [*shared, "params:model", "params:heterogeneity", "params:seed", "params:runtime"],
                f"{ns}.heterogeneity_trace_json",
                name="train_heterogeneity",
                namespace=ns,
            )
        )
    return out


TRACES = [
    f"width_{k + 1}.{experiment}_trace_json"
    for k in range(WIDTH_SLOTS)
    for experiment in ("kernel_regime", "heterogeneity")
]


def create_pipeline(**kwargs) -> Pipeline:
    return Pipeline(
        [
            # ingest
            Node(nodes.load_images, ["image_folder", "params:data"], "images", name="load_images"),
            # preprocess
            Node(
                nodes.make_client_splits,
                ["images", "params:data", "params:seed"],
                "client_splits_table",
                name="make_client_splits",
            ),
            # train: FedAvg on each split and its centralised twin, one node per width
            *_train_nodes(),
            # evaluate
            Node(nodes.collect_sweep, TRACES, "sweep_table", name="collect_sweep"),
            Node(nodes.collect_curves, TRACES, "curves_table", name="collect_curves"),
            Node(nodes.summarise_metrics, "sweep_table", "metrics", name="summarise_metrics"),
            Node(nodes.tabulate_results, "sweep_table", "results", name="tabulate_results"),
            Node(nodes.check_claims, "metrics", "claims", name="check_claims"),
            Node(
                nodes.plot_ntk_change,
                ["sweep_table", "params:evaluation"],
                "ntk_change_plot",
                name="plot_ntk_change",
            ),
            Node(
                nodes.plot_linearisation,
                ["sweep_table", "params:evaluation"],
                "linearisation_plot",
                name="plot_linearisation",
            ),
            Node(
                nodes.plot_heterogeneity_gap,
                "sweep_table",
                "heterogeneity_gap_plot",
                name="plot_heterogeneity_gap",
            ),
            Node(
                nodes.plot_fed_vs_central,
                ["curves_table", "params:evaluation"],
                "fed_vs_central_plot",
                name="plot_fed_vs_central",
            ),
        ],
        namespace="fedavg_overparam",
    )
