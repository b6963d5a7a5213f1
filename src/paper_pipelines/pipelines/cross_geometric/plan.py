"""Which graphs and runs one default run holds: the sources read into one event table, each source's
snapshots, and the (source, seed) runs of every geometry mode, ablation and baseline."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.runtime import substream_seed

from . import data as loaders
from . import snapshots as snaps
from .parameters import GENERATED, DataParams, GeometryParams, LossParams, ModelParams, TrainParams
from .training import Settings

EDGE_SETS = ("pos", "neg", "new_pos", "new_neg")
SANITY = ("pure_hyperbolic", "pure_euclidean")


def read_source(source: str, data: DataParams, htgn: Any, rng: np.random.Generator):
    """One source's events (u, v, t) and its regions (node, region; empty for real data)."""
    none = pd.DataFrame({"node": pd.Series(dtype="int64"), "region": pd.Series(dtype=str)})
    if source in GENERATED:
        mixed = data.mixed.model_dump()
        if source == "pure_hyperbolic":
            mixed["n_e"] = 0
        if source == "pure_euclidean":
            mixed["n_h"] = 0
        return loaders.mixed_geometry_events(**mixed, rng=rng)
    if source == "collegemsg":
        events = loaders.read_collegemsg().sort_values("t", kind="stable")
        if data.collegemsg_events is not None:
            events = events.iloc[: data.collegemsg_events]
        return events, none
    if source == "pubmed_temporal":
        events = loaders.read_pubmed(data.pubmed.year_start, data.pubmed.year_end)
        return (loaders.cumulate(events) if data.pubmed.cumulative else events), none
    return loaders.htgn_events(htgn), none


def load_sources(data: DataParams, htgn: Any, rng: np.random.Generator):
    """Every source's events in one table (source, u, v, t) and regions (source, node, region)."""
    events, regions = [], []
    for source in data.sources:
        ev, reg = read_source(source, data, htgn, rng)
        events.append(loaders.check_events(ev, source).assign(source=source))
        regions.append(reg.assign(source=source))
    ev = pd.concat(events, ignore_index=True)[["source", "u", "v", "t"]]
    return ev, pd.concat(regions, ignore_index=True)[["source", "node", "region"]]


def snapshots_of(source: str, events: pd.DataFrame, regions: pd.DataFrame, n_snapshots: int):
    """A source's snapshots: one per timestamp value for generated graphs, PubMed years and HTGN
    files; n_snapshots equal-count chunks for CollegeMsg (HTGN's uci)."""
    ev = events[events["source"] == source]
    reg = regions[regions["source"] == source]
    if source == "collegemsg":
        chunks = snaps.equal_count_chunks(ev, n_snapshots)
    else:
        chunks = snaps.timestamp_chunks(ev)
    return snaps.build_snapshots(chunks, dict(zip(reg["node"], reg["region"], strict=True)))


def settings(
    mode: str,
    model: ModelParams,
    geometry: GeometryParams,
    loss: LossParams,
    train: TrainParams,
    ablation: str | None = None,
) -> Settings:
    """One training configuration from the typed blocks, with one ablation switched off."""
    values = {
        **model.model_dump(),
        **geometry.model_dump(exclude={"score", "k_hop", "quadruples", "exact_diameter_max"}),
        **loss.model_dump(),
        **train.model_dump(
            include={"epochs", "patience", "lr", "weight_decay", "schedule"},
        ),
    }
    off = {
        "no_tree_score": {"use_tree_score": False},
        "no_temporal_attention": {"use_temporal_attention": False},
        "no_lambda_node": {"lambda_node": 0.0},
        "no_lambda_chg": {"lambda_chg": 0.0},
    }
    values.update(off.get(ablation or "", {}))
    return Settings(mode=mode, **values)


def mode_runs(mode: str, sources: list[str], train: TrainParams, seed: int):
    """(source, seed index, seed) for a mode: n_seeds on the main sources (hybrid_const only on
    train.hybrid_const_sources), sanity_seeds on the pure_* variants for train.sanity_modes."""
    runs = []
    for source in sources:
        if source in SANITY:
            n = train.sanity_seeds if mode in train.sanity_modes else 0
        elif mode == "hybrid_const" and source not in train.hybrid_const_sources:
            n = 0
        else:
            n = train.n_seeds
        runs += [(source, k, substream_seed(seed, "model", k)) for k in range(n)]
    return runs


def ablation_runs(train: TrainParams, seed: int):
    """(source, seed index, seed) of each ablation: train.ablation_seeds on ablation_sources."""
    return [
        (source, k, substream_seed(seed, "model", k))
        for source in train.ablation_sources
        for k in range(train.ablation_seeds)
    ]
