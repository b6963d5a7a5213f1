"""The benchmark's measures, pure: needle recall of the keyframes, needle events covered, accuracy."""

from __future__ import annotations

import numpy as np
import pandas as pd

OOM = "OOM (predicted)"


def needle_recall(keyframes: list[int], needle_frames: list[int]) -> float:
    """1 if any keyframe shows the needle, else 0 (recall@K of one needle event)."""
    return float(bool(set(keyframes) & set(needle_frames)))


def events_hit(keys: list[int], spec: dict) -> float:
    """Fraction of the asked needle events (not distractors) that have a keyframe."""
    asked = [e for e in spec["events"] if any(e[0] == f for f in spec["needle_frames"])]
    if not asked:
        return float("nan")
    keyset = set(keys)
    return float(np.mean([any(f in keyset for f in range(e[0], e[0] + e[1])) for e in asked]))


def accuracy_table(predictions: pd.DataFrame) -> pd.DataFrame:
    """Accuracy, needle recall and mean visual tokens per (task, N, method); OOM rows stay marked."""
    ok = predictions[predictions.status == "ok"]
    table = (
        ok.groupby(["task", "n_frames", "method"])
        .agg(
            accuracy=("correct", "mean"),
            needle_recall=("needle_recall", "mean"),
            needles_hit=("needles_hit", "mean"),
            visual_tokens=("visual_tokens", "mean"),
            videos=("correct", "size"),
        )
        .reset_index()
    )
    oom = predictions[predictions.status != "ok"].drop_duplicates(["task", "n_frames", "method"])
    if len(oom):
        extra = oom[["task", "n_frames", "method", "visual_tokens"]].assign(status=OOM)
        table = pd.concat([table.assign(status="ok"), extra], ignore_index=True)
    else:
        table = table.assign(status="ok")
    return table.sort_values(["task", "n_frames", "method"]).reset_index(drop=True)
