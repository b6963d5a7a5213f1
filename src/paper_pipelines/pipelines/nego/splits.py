"""The OOD splits of GOOD-Motif as generation plans, and the checks that keep their parts apart.

Each split has five parts: ``train`` and ``id_val`` (the training distribution), ``ood_val`` (model
selection, GOOD protocol), ``ood_test`` and ``severe_test`` (the OOD test distribution with every base
width multiplied by ``severe_factor``: the spec's "doubled spurious base" experiment).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import data as gen

PARTS: tuple[str, ...] = ("train", "id_val", "ood_val", "ood_test", "severe_test")


@dataclass(frozen=True)
class PartPlan:
    """How one part is drawn: its bases, width centres and spread, and an optional spurious bias."""

    part: str
    n: int
    bases: tuple[str, ...]
    widths: tuple[int, ...]
    spread: int
    bias: float | None = None


def severe_widths(widths: Sequence[int], factor: float) -> tuple[int, ...]:
    """Every width centre multiplied by the severe-shift factor (2 = the paper's doubled base)."""
    return tuple(int(round(w * factor)) for w in widths)


def bias_plan(data, split, bias: float) -> list[PartPlan]:
    """Controllable bias: P(base = bias_bases[y]) = bias in train / id_val, 1/k (unbiased) elsewhere."""
    bases = tuple(split.bias_bases)
    w, s = (data.width_centre,), data.width_spread
    unbiased = 1.0 / len(bases)
    return [
        PartPlan("train", data.num_train, bases, w, s, bias),
        PartPlan("id_val", data.num_val, bases, w, s, bias),
        PartPlan("ood_val", data.num_val, bases, w, s, unbiased),
        PartPlan("ood_test", data.num_test, bases, w, s, unbiased),
        PartPlan(
            "severe_test", data.num_test, bases, severe_widths(w, data.severe_factor), s, unbiased
        ),
    ]


def basis_plan(data, split) -> list[PartPlan]:
    """Basis covariate shift (GOOD): train on train_bases, select on val_bases, test on test_bases."""
    w, s = (data.width_centre,), data.width_spread
    train = tuple(split.train_bases)
    return [
        PartPlan("train", data.num_train, train, w, s),
        PartPlan("id_val", data.num_val, train, w, s),
        PartPlan("ood_val", data.num_val, tuple(split.val_bases), w, s),
        PartPlan("ood_test", data.num_test, tuple(split.test_bases), w, s),
        PartPlan(
            "severe_test",
            data.num_test,
            tuple(split.test_bases),
            severe_widths(w, data.severe_factor),
            s,
        ),
    ]


def size_plan(data, split) -> list[PartPlan]:
    """Size covariate shift (GOOD): small widths in train, larger at validation, larger still at test."""
    bases, s = tuple(split.size_bases), split.size_spread
    train = tuple(split.size_train_widths)
    test = (split.size_test_width,)
    return [
        PartPlan("train", data.num_train, bases, train, s),
        PartPlan("id_val", data.num_val, bases, train, s),
        PartPlan("ood_val", data.num_val, bases, (split.size_val_width,), s),
        PartPlan("ood_test", data.num_test, bases, test, s),
        PartPlan("severe_test", data.num_test, bases, severe_widths(test, data.severe_factor), s),
    ]


def split_plans(data, split) -> dict[str, list[PartPlan]]:
    """Every split to generate, by name: ``bias`` (headline), ``bias<b>`` (sweep), ``basis``, ``size``."""
    plans: dict[str, list[PartPlan]] = {}
    for kind in split.kinds:
        if kind == "bias":
            plans["bias"] = bias_plan(data, split, split.bias)
        elif kind == "basis":
            plans["basis"] = basis_plan(data, split)
        elif kind == "size":
            plans["size"] = size_plan(data, split)
        # molecules: read, not generated (molecules.molecule_split)
    for b in split.bias_sweep:
        plans.setdefault(f"bias{b:g}", bias_plan(data, split, b))
    return plans


def generate_split(name: str, plan: list[PartPlan], data, rng: np.random.Generator) -> pd.DataFrame:
    """All graphs of one split, with ``split`` and ``part`` columns."""
    frames = []
    for p in plan:
        frame = gen.generate_part(
            p.n,
            p.bases,
            p.widths,
            p.spread,
            rng,
            data.edge_perturb,
            data.label_noise,
            tuple(data.motifs),
            p.bias,
        )
        frame.insert(0, "part", p.part)
        frame.insert(0, "split", name)
        frames.append(frame)
    return pd.concat(frames, ignore_index=True)


def split_indices(graphs: pd.DataFrame) -> dict[str, dict[str, list[int]]]:
    """``{split: {part: [graph_id, ...]}}``; fails on an empty part or a graph in two parts."""
    out: dict[str, dict[str, list[int]]] = {}
    for name, frame in graphs.groupby("split", sort=False):
        parts = {p: frame.index[frame.part == p].tolist() for p in PARTS}
        empty = [p for p, ids in parts.items() if not ids]
        if empty:
            raise ValueError(f"split {name!r} has empty parts {empty}: raise nego.data sizes")
        seen: set[int] = set()
        for ids in parts.values():
            if seen & set(ids):
                raise ValueError(f"split {name!r}: a graph is in two parts")
            seen |= set(ids)
        out[str(name)] = parts
    return out


def check_environment_shift(graphs: pd.DataFrame, kind: str) -> None:
    """The basis split's OOD parts share no base type with train (what makes it a basis shift)."""
    frame = graphs[graphs.split == kind]
    train = set(frame.base[frame.part == "train"])
    for part in ("ood_val", "ood_test", "severe_test"):
        overlap = train & set(frame.base[frame.part == part])
        if overlap:
            raise ValueError(f"split {kind!r}: {part} reuses training bases {sorted(overlap)}")
