"""From the shift grid to the tasks' arrays: pool indices (stored, small) and their embeddings (rebuilt).

A task's versioned record holds only what regenerates it: the pool indices and colours of a digits or
real task, the generator seed of a synthetic one. ``embed_task`` turns a record into training and test
arrays (x, y, a) in the frozen feature space the zoo and the descriptors read.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import data
from .shifts import group_counts


def task_record(
    row: dict, digits_pool: dict | None, real_pool: dict | None, seed: int
) -> dict[str, Any]:
    """The stored form of one task: its grid row plus pool indices (digits, real) or a seed (synth)."""
    rng = np.random.default_rng([seed, row["task_id"]])
    kind, _, partition = row["source"].partition(":")
    counts = group_counts(row["sc"], row["ci"], row["ai"], row["n"])
    record = dict(row)
    if kind == "synth":
        record["data_seed"] = int(rng.integers(2**31))
    elif kind == "digits":
        record.update(data.digits_task_index(digits_pool, partition, counts, rng))
        record["noise_seed"] = int(rng.integers(2**31))
    else:
        if not real_pool:
            raise ValueError(
                "ood_chameleon.data.sources has 'real' but no real pool was loaded: supply "
                "ood_chameleon.real_metadata, real_images and backbone in the catalog (--env paper)"
            )
        record.update(
            data.real_task_index(real_pool["y"], real_pool["a"], real_pool["split"], counts, rng)
        )
    return record


def embed_task(
    record: dict, digits_pool: dict | None, feature_map: dict | None, real_pool: dict | None,
    noise: float,
) -> dict[str, Any]:  # fmt: skip
    """Training and test arrays of one task in the frozen feature space."""
    kind = record["source"].split(":")[0]
    if kind == "synth":
        arrays = data.synthetic_task(record, np.random.default_rng(record["data_seed"]))
    elif kind == "digits":
        rng = np.random.default_rng(record["noise_seed"])
        arrays = data.digits_task(digits_pool, record, noise, rng)
        for split in ("tr", "te"):
            arrays[f"x_{split}"] = data.apply_digit_features(arrays[f"x_{split}"], feature_map)
    else:
        arrays = {}
        for split in ("tr", "te"):
            idx = record[f"idx_{split}"]
            arrays[f"x_{split}"] = real_pool["x"][idx].astype(np.float32)
            arrays[f"y_{split}"] = real_pool["y"][idx]
            arrays[f"a_{split}"] = real_pool["a"][idx]
    keep = ("task_id", "source", "n", "sc", "ci", "ai")
    return {**{k: record[k] for k in keep}, **arrays}
