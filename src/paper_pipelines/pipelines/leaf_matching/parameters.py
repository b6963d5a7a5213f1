"""Parameter blocks of leaf_matching (conf/*/parameters/leaf_matching.yml), one model per top-level block.

Two studies share every block: ``hierarchy`` (a graph with ground-truth hierarchy, swept over mu at matched
numbers of coordinates) and ``real`` (the paper's PubMed graph); ``scaling`` times epochs on Erdos-Renyi
graphs. Kedro validates each block before any node runs; rules spanning blocks are in
:func:`check_across_blocks`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

from .ct_space import MAX_HEIGHT

__all__ = [
    "BaselineParams",
    "DataParams",
    "EvaluationParams",
    "ModelParams",
    "RuntimeParams",
    "Seed",
    "SplitParams",
    "TuningParams",
    "check_across_blocks",
]

Fraction = Annotated[float, Field(gt=0, lt=1)]
Positive = Annotated[float, Field(gt=0)]
SOURCE = Literal["pubmed", "hsbm", "er", "karate", "les_miserables", "user_edges"]
BASELINE = Literal[
    "euclidean", "poincare", "deepwalk", "gae", "preferential_attachment", "adamic_adar"
]


class GraphParams(ParamsModel):
    """One graph: its source and, for the generators, their sizes (hsbm: blocks on a complete tree)."""

    source: SOURCE = "hsbm"
    n_nodes: int = Field(1024, ge=4, le=8192)  # the HSBM draws every pair: dense up to 8192 nodes
    levels: int = Field(6, ge=0, le=12)  # 2^levels leaf blocks
    beta: float = Field(4.0, gt=0)  # pair probability proportional to beta^-level
    mean_degree: float = Field(12.0, gt=0)


class ScalingGraphs(ParamsModel):
    """Erdos-Renyi graphs of the scalability study (the paper: 2^10..2^19 nodes, mean degree 5)."""

    n_nodes: list[Annotated[int, Field(ge=16)]] = Field([1024, 2048, 4096, 8192], min_length=1)
    mean_degree: float = Field(5.0, gt=0)


class DataParams(ParamsModel):
    hierarchy: GraphParams = GraphParams()
    real: GraphParams = GraphParams(source="pubmed")
    scaling: ScalingGraphs = ScalingGraphs()


class SplitParams(ParamsModel):
    """Observed fractions mu per study, negatives per test positive, the tuning carve-out."""

    neg_ratio: int = Field(5, ge=1)
    hierarchy_mu: list[Fraction] = Field([0.1, 0.3, 0.6], min_length=1)
    real_mu: list[Fraction] = Field([0.1], min_length=1)
    scaling_mu: float = Field(0.9, gt=0, lt=1)  # the paper's ER graphs: 90/10 split
    validation_fraction: float = Field(0.1, gt=0, lt=1)


class SearchParams(ParamsModel):
    """Leaf matching's hyper-parameters (official main.py arguments; list ``trees`` = the T values run)."""

    height: int = Field(12, ge=1, le=MAX_HEIGHT)  # h
    trees: list[Annotated[int, Field(ge=1, le=256)]] = Field([16], min_length=1)  # T (tp)
    c: int = Field(1, ge=1)  # c*h candidates per sibling subtree
    alpha: float = Field(8.0, gt=0)
    gamma: float = Field(3.0, gt=0)
    eps: float = Field(1e-5, gt=0, lt=1)
    epochs: int = Field(50, ge=1)
    batch_size: int = Field(256, ge=1)
    pos_ratio: float = Field(1.0, gt=0)
    convergence: float = Field(0.8, ge=0, le=1)
    single_neighbour_prob: float = Field(0.2, ge=0, le=1)
    pair_chunk: int = Field(4096, ge=1)


class ModelParams(ParamsModel):
    hierarchy: SearchParams = SearchParams(height=10, trees=[8, 16], epochs=20)
    real: SearchParams = SearchParams(epochs=30)
    scaling: SearchParams = SearchParams(height=16, alpha=16.0, epochs=2)


class TuningParams(ParamsModel):
    """(alpha, gamma) grid, selected by validation AUC on a carve-out of the observed edges."""

    trees: int = Field(16, ge=1, le=256)
    alpha: list[Positive] = Field([1.0, 2.0, 4.0, 8.0, 16.0], min_length=1)
    gamma: list[Positive] = Field([3.0, 6.0], min_length=1)
    studies: list[Literal["hierarchy", "real"]] = ["hierarchy"]


class EmbeddingParams(ParamsModel):
    """A continuous embedding trained with leaf matching's likelihood (full-batch Adam)."""

    steps: int = Field(400, ge=1)
    lr: float = Field(0.05, gt=0)
    init_scale: float = Field(0.1, gt=0)
    hierarchy_dims: list[Annotated[int, Field(ge=1)]] = [8, 16, 32]
    real_dims: list[Annotated[int, Field(ge=1)]] = [16]


class DeepWalkParams(ParamsModel):
    dim: int = Field(32, ge=1)
    walks_per_node: int = Field(5, ge=1)
    walk_length: int = Field(20, ge=2)
    window: int = Field(3, ge=1)
    negatives: int = Field(5, ge=1)
    epochs: int = Field(1, ge=1)
    lr: float = Field(0.01, gt=0)
    batch_size: int = Field(16384, ge=1)


class GAEParams(ParamsModel):
    hidden: int = Field(64, ge=1)
    dim: int = Field(32, ge=1)
    epochs: int = Field(200, ge=1)
    lr: float = Field(0.01, gt=0)


class BaselineParams(ParamsModel):
    methods: list[BASELINE] = [
        "euclidean",
        "poincare",
        "deepwalk",
        "gae",
        "preferential_attachment",
        "adamic_adar",
    ]
    euclidean: EmbeddingParams = EmbeddingParams()
    poincare: EmbeddingParams = EmbeddingParams(hierarchy_dims=[8], real_dims=[16])
    deepwalk: DeepWalkParams = DeepWalkParams()
    gae: GAEParams = GAEParams()


class EvaluationParams(ParamsModel):
    """Hits@K cut-offs, and the matched coordinate count T = d of the hierarchy-study gains."""

    matched_dim: int = Field(8, ge=1)
    hits_k: list[Annotated[int, Field(ge=1)]] = Field([20, 50, 100], min_length=1)


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Rules that span blocks (the project context calls this before any node runs)."""
    data, model, evaluation, baselines = (
        blocks.get(k) for k in ("data", "model", "evaluation", "baselines")
    )
    errors = []
    if data is not None:
        for name in ("hierarchy", "real"):
            graph = getattr(data, name)
            if graph.source == "hsbm" and graph.n_nodes < 2**graph.levels:
                errors.append(
                    f"leaf_matching.data.{name}.n_nodes = {graph.n_nodes} is smaller than the "
                    f"2^levels = {2**graph.levels} HSBM blocks; raise n_nodes or lower "
                    f"leaf_matching.data.{name}.levels"
                )
    matched = evaluation.matched_dim if evaluation is not None else None
    if model is not None and matched is not None and matched not in model.hierarchy.trees:
        errors.append(
            f"leaf_matching.evaluation.matched_dim = {evaluation.matched_dim} must be one of "
            f"leaf_matching.model.hierarchy.trees {model.hierarchy.trees} (the matched T = d)"
        )
    euclidean = baselines is not None and "euclidean" in baselines.methods
    if euclidean and matched is not None and matched not in baselines.euclidean.hierarchy_dims:
        errors.append(
            f"leaf_matching.evaluation.matched_dim = {evaluation.matched_dim} must be one of "
            f"leaf_matching.baselines.euclidean.hierarchy_dims "
            f"{baselines.euclidean.hierarchy_dims} (the matched T = d)"
        )
    if errors:
        raise ValueError("; ".join(errors))
