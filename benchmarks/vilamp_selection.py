"""Side-by-side benchmark of ViLAMP's two modules (issue 17, item 6; spec checks 8 and 5).

1. Selection: our DKS walk (K x N cosines) against a naive walk on the materialised N x N cosine
   matrix (what the released SeqFrameSelector forms), same keyframes, at N in {600, 2000, 10000}.
2. Merging: DFM batched against the chunked path (60 frames per chunk), same tokens, both timed.
3. Official anchor, only when a read-only checkout of steven-ccq/ViLAMP is given with --official
   (never committed, nothing fetched here): ``SeqFrameSelector.forward`` + ``distribute_frames`` with
   its encoders replaced by our embeddings (50 random cases, keyframe indices must be equal), and
   ``SigPooling`` with our weights copied in (merged tokens within 1e-5, reference_keyframe =
   official_code). Without --official that part is reported as skipped.

    .venv/bin/python benchmarks/vilamp_selection.py [--official /path/to/ViLAMP]
"""

from __future__ import annotations

import argparse
import sys
import time
import types
from pathlib import Path

import numpy as np
import torch

from paper_pipelines.pipelines.vilamp.merging import DifferentialFeatureMerging, reference_keyframes
from paper_pipelines.pipelines.vilamp.selection import (
    differential_keyframe_selection,
    fill_budget,
    frame_relevance,
    greedy_keyframes,
    naive_greedy_keyframes,
)


def video_embeddings(n: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    """A drifting random walk: consecutive frames highly similar, as 1-fps video embeddings."""
    steps = rng.standard_normal((n, dim)).astype(np.float32)
    return (np.cumsum(steps, axis=0) / np.sqrt(np.arange(1, n + 1))[:, None]).astype(np.float32)


def bench_selection(rng) -> None:
    print("## selection: ours (K x N) vs naive (N x N), K = 32, tau = 0.85")
    for n in (600, 2000, 10000):
        emb = video_embeddings(n, 512, rng)
        query = rng.standard_normal(512).astype(np.float32)
        e, q = torch.from_numpy(emb), torch.from_numpy(query)
        rel = frame_relevance(e, q)
        t0 = time.perf_counter()
        ours = greedy_keyframes(e, rel, 32, 0.85)
        t1 = time.perf_counter()
        naive = naive_greedy_keyframes(emb, rel.numpy(), 32, 0.85)
        t2 = time.perf_counter()
        print(
            f"N={n:>6}: same keyframes {ours == naive}; ours {t1 - t0:.3f} s, naive {t2 - t1:.3f} s "
            f"(N x N matrix {n * n * 4 / 1e6:.0f} MB)"
        )


def bench_merging() -> None:
    print("## merging: batched vs chunked (60 frames per chunk), M = 16, d = 64")
    torch.manual_seed(0)
    dfm = DifferentialFeatureMerging(64, 64)
    for n in (600, 2000, 10000):
        p, k, q = torch.randn(n, 16, 64), torch.randn(n, 16, 64), torch.randn(64)
        with torch.no_grad():
            t0 = time.perf_counter()
            a = dfm(p, k, q)
            t1 = time.perf_counter()
            b = dfm(p, k, q, max_dense_length=60)
            t2 = time.perf_counter()
        diff = (a - b).abs().max().item()
        print(f"N={n:>6}: max |diff| {diff:.2e}; batched {t1 - t0:.3f} s, chunked {t2 - t1:.3f} s")


def load_official(root: Path):
    """The released frame_selector and SigPooling modules, their heavy imports stubbed."""
    for name in ("cv2", "llava", "llava.utils"):
        sys.modules.setdefault(name, types.ModuleType(name))
    sys.modules["llava.utils"].rank0_print = print
    import importlib.util

    def load(rel, name):
        spec = importlib.util.spec_from_file_location(name, root / rel)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    pooler = types.ModuleType("pooler_projector")
    pooler.PoolerProjector = object
    sys.modules["official_projector.pooler_projector"] = pooler
    selector = load("llava/model/multimodal_resampler/frame_selector.py", "official_selector")
    builder_src = (root / "llava/model/multimodal_projector/builder.py").read_text()
    builder = types.ModuleType("official_builder")
    exec(
        compile(
            builder_src.replace(
                "from .pooler_projector import", "from official_projector.pooler_projector import"
            ),
            "builder.py",
            "exec",
        ),
        builder.__dict__,
    )  # noqa: S102
    return selector, builder


def bench_official(root: Path, rng) -> None:
    selector_mod, builder = load_official(root)
    print(f"## official anchor: {root}")
    same = 0
    t_ours = t_off = 0.0
    for case in range(50):
        n = int(rng.integers(50, 2000))
        k, tau = int(rng.choice([4, 8, 32])), float(rng.choice([0.3, 0.5, 0.85]))
        emb = torch.from_numpy(video_embeddings(n, 64, rng))
        q = torch.randn(1, 64, generator=torch.Generator().manual_seed(case))
        off = selector_mod.SeqFrameSelector.__new__(selector_mod.SeqFrameSelector)
        torch.nn.Module.__init__(off)
        off.f2f_thrd, off.f2t_thrd, off.max_frame_num = tau, -1, k
        off.model = types.SimpleNamespace(device="cpu")
        unit = torch.nn.functional.normalize(emb, dim=-1)
        qn = torch.nn.functional.normalize(q, dim=-1)
        scores = (emb, q, unit @ unit.T, (unit @ qn.T).reshape(-1))
        off.process = lambda *_, scores=scores: scores
        t0 = time.perf_counter()
        hard, *_ = off.forward(None, None)
        t1 = time.perf_counter()
        ours, _ = differential_keyframe_selection(emb, q[0], k, tau)
        t2 = time.perf_counter()
        t_off, t_ours = t_off + t1 - t0, t_ours + t2 - t1
        same += torch.where(hard == 1)[0].tolist() == ours
    print(
        f"DKS: {same}/50 cases with identical keyframes; official {t_off:.2f} s, ours {t_ours:.2f} s"
    )
    cfg = types.SimpleNamespace(hidden_size=64, composer_proj_dim=32)
    official = builder.SigPooling(cfg)
    ours = DifferentialFeatureMerging(64, 32)
    ours.load_state_dict(official.state_dict())
    for n in (30, 130):
        p, q = torch.randn(n, 16, 64), torch.randn(32)
        keys = sorted(rng.choice(n, size=4, replace=False).tolist())
        ref = p[reference_keyframes(keys, n, "official_code")]
        with torch.no_grad():
            a = official(p, ref, q.view(1, 1, -1).repeat(n, 16, 1))
            b = ours(p, ref, q, max_dense_length=60)
        print(
            f"DFM N={n}: max |diff| {(a - b).abs().max().item():.2e} (reference_keyframe=official_code)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", type=Path, default=None, help="read-only ViLAMP checkout")
    args = parser.parse_args()
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    assert fill_budget([5], 10, 4) == [2, 4, 5, 8]
    bench_selection(rng)
    bench_merging()
    if args.official is None:
        print("## official anchor: skipped (no --official checkout given)")
    else:
        bench_official(args.official, rng)


if __name__ == "__main__":
    main()
