"""The benchmark run: every method on the same SynthNIAH videos, keyframes, tokens, answers and time."""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd
import torch

from paper_pipelines.common.progress import progress

from . import data as synth
from .distillation import USES_DKS, choose_keyframes, visual_sequence
from .metrics import OOM, events_hit, needle_recall
from .training import encode, keyframe_budget, text_matrix

logger = logging.getLogger(__name__)


def predicted_attention_gb(tokens: int, heads: int, bytes_per: int = 4) -> float:
    """Eager attention's score buffer, bytes_per * heads * L^2 (one layer), in GB."""
    return bytes_per * heads * tokens**2 / 1e9


@torch.no_grad()
def answer(reader, sequence, question: str, options: list[str], vocab: list[str], cache) -> str:
    """The reader's choice among the question's options (greedy, one answer token)."""
    logits = reader([sequence], text_matrix([question], cache, reader.newline.device))[0]
    index = {a: i for i, a in enumerate(vocab)}
    scores = [logits[index[o]].item() for o in options]
    return options[int(np.argmax(scores))]


def run_video(
    spec: dict, methods, assets, data, selector, reader, dks, dfm, cache, cap_gb: float, heads: int
) -> list[dict]:
    """One video under every method: shared rendering and encoding, then each method's sequence."""
    vocab = synth.answer_vocabulary(list(data.colours), data.max_count)
    with torch.no_grad():
        enc = encode(
            synth.render_video(spec, assets, data), spec["question"], selector, reader, cache
        )
        k = keyframe_budget(spec["task"], dks)
        shared: dict = {}
        rows = []
        for method in methods:
            base = {
                "task": spec["task"],
                "n_frames": spec["n_frames"],
                "method": method,
                "question": spec["question"],
                "answer": spec["answer"],
                "keyframe_budget": k,
            }
            if method == "dense":
                tokens = spec["n_frames"] * selector.patches + 1  # M of the towers in use
                if predicted_attention_gb(tokens + 1, heads) > cap_gb:
                    rows.append({**base, "status": OOM, "visual_tokens": tokens})
                    continue
            started = time.perf_counter()
            keys = choose_keyframes(method, enc, k, dks, shared)
            sequence = visual_sequence(method, enc, keys, reader, dfm)
            predicted = answer(reader, sequence, spec["question"], spec["options"], vocab, cache)
            rows.append(
                {
                    **base,
                    "status": "ok",
                    "visual_tokens": int(sequence[0].shape[0]),
                    "keyframes": len(keys),
                    "predicted": predicted,
                    "correct": float(predicted == spec["answer"]),
                    "needle_recall": needle_recall(keys, spec["needle_frames"])
                    if method != "dense"
                    else 1.0,
                    "needles_hit": events_hit(keys, spec),
                    "seconds": time.perf_counter() - started,
                }
            )
    return rows


def run_benchmark(
    specs: list[dict], method_of, assets, data, selector, reader, dks, dfm, cache, evaluation, heads
) -> pd.DataFrame:
    """Predictions for every (video, method); ``method_of(spec)`` lists the methods a video gets."""
    rows = []
    for spec in progress(specs, "vilamp benchmark videos"):
        rows += run_video(
            spec, method_of(spec), assets, data, selector, reader, dks, dfm, cache,
            evaluation.dense_memory_cap_gb, heads,
        )  # fmt: skip
    return pd.DataFrame(rows)


__all__ = ["OOM", "USES_DKS", "predicted_attention_gb", "run_benchmark"]
