"""Scale: the measured whole ViLAMP path on one long video (peak RSS, seconds, tokens) and the analytic
projection of a real LLM's KV-cache memory from each method's visual token count (the Fig. 1 analogue)."""

from __future__ import annotations

import os
import resource
import threading
import time
from contextlib import contextmanager

import numpy as np
import pandas as pd


def current_rss_gb() -> float:
    """Resident set size of this process now (Linux /proc; ru_maxrss elsewhere), GB."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e9
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


@contextmanager
def peak_rss(every: float = 0.005):
    """Sample the RSS on a thread while the block runs; yields a dict that gets ``peak_gb``, ``seconds``."""
    out = {"peak_gb": current_rss_gb(), "start_gb": current_rss_gb()}
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            out["peak_gb"] = max(out["peak_gb"], current_rss_gb())
            stop.wait(every)

    thread = threading.Thread(target=sample, daemon=True)
    started = time.perf_counter()
    thread.start()
    try:
        yield out
    finally:
        stop.set()
        thread.join()
        out["seconds"] = time.perf_counter() - started
        out["peak_gb"] = max(out["peak_gb"], current_rss_gb())


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, bytes_per: int) -> int:
    """KV cache per token: 2 (K and V) x layers x kv_heads x head_dim x bytes (Qwen2-7B bf16: 57 344)."""
    return 2 * layers * kv_heads * head_dim * bytes_per


def dense_tokens(n_frames, tokens_per_frame: int):
    """Full-token input (LLaVA-OneVision style): N x tokens per frame (+ newline)."""
    return np.asarray(n_frames) * tokens_per_frame + 1


def vilamp_tokens(n_frames, keyframes: int, tokens_per_frame: int):
    """ViLAMP's input: K x tokens per keyframe + (N - K) merged + 1 newline (K capped at N)."""
    n = np.asarray(n_frames)
    k = np.minimum(keyframes, n)
    return k * tokens_per_frame + (n - k) + 1


def projection_table(p) -> pd.DataFrame:
    """Projected KV-cache memory (GB) of dense and ViLAMP input for N from 1 to p.max_frames."""
    frames = np.unique(np.linspace(1, p.max_frames, p.points).round().astype(int))
    per = kv_bytes_per_token(p.layers, p.kv_heads, p.head_dim, p.bytes)
    rows = []
    for method, tokens in (
        ("dense", dense_tokens(frames, p.tokens_per_frame)),
        ("vilamp", vilamp_tokens(frames, p.keyframes, p.tokens_per_frame)),
    ):
        for n, t in zip(frames, tokens, strict=True):
            rows.append(
                {"method": method, "n_frames": int(n), "tokens": int(t), "gb": t * per / 1e9}
            )
    return pd.DataFrame(rows)


def frames_to_fill(p, gb: float | None = None) -> float:
    """N at which dense input's KV cache reaches ``gb`` (default: the GPU's memory)."""
    per = kv_bytes_per_token(p.layers, p.kv_heads, p.head_dim, p.bytes)
    return ((gb or p.gpu_gb) * 1e9 / per - 1) / p.tokens_per_frame


def scaling_sweep(
    assets, data, selector, reader, dks, dfm, cache, evaluation, heads, rng
) -> pd.DataFrame:
    """Per N: the whole path (render, encode, select, merge, read) of one retrieval video, measured.

    Dense full tokens run only while eager attention's predicted score buffer (4 h L^2 bytes) stays
    under ``evaluation.dense_memory_cap_gb``; above it the row says "OOM (predicted)" and its time is
    extrapolated quadratically in L from the largest measured dense run.
    """
    import gc

    import torch

    from paper_pipelines.common.progress import progress

    from . import data as synth
    from .distillation import choose_keyframes, visual_sequence
    from .evaluation import OOM, answer, predicted_attention_gb
    from .training import encode, keyframe_budget

    vocab = synth.answer_vocabulary(list(data.colours), data.max_count)
    frames = sorted({*evaluation.n_frames, *evaluation.long.n_frames, evaluation.scale_frames})
    m = selector.patches  # tokens per frame of the towers in use
    device = reader.newline.device
    rows = []
    for n in progress(frames, "vilamp scaling sweep"):
        spec = synth.make_video_spec("retrieval", n, data, assets["glyphs"]["labels"], rng)
        for method in ("vilamp", "dense"):
            tokens = n * m + 1 if method == "dense" else None
            attention_gb = predicted_attention_gb(tokens + 1, heads) if tokens else None
            if method == "dense" and attention_gb > evaluation.dense_memory_cap_gb:
                rows.append(
                    {"method": method, "n_frames": n, "visual_tokens": tokens, "status": OOM,
                     "predicted_attention_gb": attention_gb, "patches_per_frame": m}
                )  # fmt: skip
                continue
            gc.collect()
            if device.type == "cuda":  # the GPU's own high-water mark, beside the process RSS
                torch.cuda.synchronize(device)
                torch.cuda.reset_peak_memory_stats(device)
            with torch.no_grad(), peak_rss() as usage:
                enc = encode(
                    synth.render_video(spec, assets, data),
                    spec["question"],
                    selector,
                    reader,
                    cache,
                )
                keys = choose_keyframes(method, enc, keyframe_budget("retrieval", dks), dks)
                sequence = visual_sequence(method, enc, keys, reader, dfm)
                predicted = answer(
                    reader, sequence, spec["question"], spec["options"], vocab, cache
                )
                if device.type == "cuda":
                    torch.cuda.synchronize(device)  # the seconds include the GPU's work
            gpu_gb = (
                torch.cuda.max_memory_allocated(device) / 1e9 if device.type == "cuda" else None
            )
            del enc, sequence
            rows.append(
                {
                    "method": method,
                    "n_frames": n,
                    "patches_per_frame": m,
                    "visual_tokens": int(n * m + 1)
                    if method == "dense"
                    else int(len(keys) * m + n - len(keys) + 1),
                    "status": "ok",
                    "peak_rss_gb": usage["peak_gb"],
                    "added_rss_gb": usage["peak_gb"] - usage["start_gb"],
                    "seconds": usage["seconds"],
                    "peak_gpu_gb": gpu_gb,
                    "correct": float(predicted == spec["answer"]),
                    "predicted_attention_gb": predicted_attention_gb(
                        (n * m if method == "dense" else len(keys) * m + n - len(keys)) + 2,
                        heads,
                    ),
                }
            )
    table = pd.DataFrame(rows)
    dense = table[(table.method == "dense") & (table.status == "ok")]
    if len(dense):
        last = dense.sort_values("n_frames").iloc[-1]
        oom = (table.method == "dense") & (table.status != "ok")
        table.loc[oom, "seconds_extrapolated"] = (
            last.seconds * (table.loc[oom, "visual_tokens"] / last.visual_tokens) ** 2
        )
    return table
