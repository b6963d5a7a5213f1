"""The batched algorithm zoo against the per-task reference loop, and (optionally) the official train.py.

1. Equivalence and speed: the same coloured-digits tasks, initial weights and resampling indices go
   through ``zoo.train_heads`` (all heads at once) and ``zoo.train_head_reference`` (one head at a time,
   as train.py does); prints the largest weight difference and the speed ratio.
2. Official anchor (only with ``--official <checkout of LiangzeJiang/OOD-Chameleon>``; skipped without):
   each task is written in the official embedding layout (``emb_tr.npz`` / ``emb_te.npz`` with keys
   activ, ys, attrs), the official ``train.run`` trains it, and our reference loop trains it from the
   same initial weights (the official nn.Linear drawn under the same torch seed) and the same resampling
   indices (the official algs.oversample / undersample under the same NumPy seed); prints both
   worst-group test errors. The official code is never copied into this repository.

    .venv/bin/python benchmarks/ood_chameleon_batched_zoo.py --tasks 6 --n 250 --steps 300
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from paper_pipelines.pipelines.ood_chameleon import data, shifts, zoo  # noqa: E402


def make_tasks(k: int, n: int, seed: int) -> list[tuple]:
    rng = np.random.default_rng(seed)
    pool = data.load_digits_pool(1100, rng)
    fmap = data.fit_digit_features(pool, "pca", 32, 0.3, rng)
    out = []
    for sc, ci, ai in shifts.sample_valid_shifts(k, n, rng):
        index = data.digits_task_index(pool, "ge5", shifts.group_counts(sc, ci, ai, n), rng)
        task = data.digits_task(pool, index, 0.3, rng)
        x_tr = data.apply_digit_features(task["x_tr"], fmap)
        x_te = data.apply_digit_features(task["x_te"], fmap)
        out.append(
            (x_tr, task["y_tr"], task["a_tr"], x_te, task["y_te"], task["a_te"], (sc, ci, ai))
        )
    return out


def equivalence(tasks, settings) -> dict:
    xs, ys, gs, ws, ss, dro, inits, idxs = [], [], [], [], [], [], [], []
    for k, (x, y, a, *_rest) in enumerate(tasks):
        g = 2 * y + a
        init = zoo.init_heads(1, x.shape[1], settings, torch.Generator().manual_seed(k))
        for algorithm in zoo.ALGORITHMS:
            w, s = zoo.row_weights(algorithm, g, np.random.default_rng([k, 7]))
            rng = np.random.default_rng([k, 7])
            pick = {"oversample": zoo.oversample_indices, "undersample": zoo.undersample_indices}
            idxs.append(pick[algorithm](g, rng) if algorithm in pick else None)
            for store, value in zip((xs, ys, gs, ws, ss), (x, y, g, w, s), strict=True):
                store.append(value)
            dro.append(algorithm == "GroupDRO")
            inits.append(init)
    t0 = time.perf_counter()
    refs = []
    for b in range(len(xs)):
        algorithm = zoo.ALGORITHMS[b % len(zoo.ALGORITHMS)]
        refs.append(
            zoo.train_head_reference(
                xs[b], ys[b], gs[b], algorithm, [inits[b][0][0]], settings, idxs[b]
            )
        )
    loop_seconds = time.perf_counter() - t0
    f = lambda v, dt=torch.float32: torch.as_tensor(np.stack(v), dtype=dt)  # noqa: E731
    t0 = time.perf_counter()
    trained, steps = zoo.train_heads(
        f(xs), f(ys), f(gs, torch.long), f(ws), f(ss), torch.tensor(dro),
        [torch.cat([i[0] for i in inits])], settings,
    )  # fmt: skip
    batched_seconds = time.perf_counter() - t0
    diff = max(float((trained[0][b] - r[0][0]).abs().max()) for b, r in enumerate(refs))
    same_steps = all(int(steps[b]) == r[1] for b, r in enumerate(refs))
    return {
        "heads": len(xs), "max_abs_weight_diff": diff, "same_stopping_steps": same_steps,
        "loop_seconds": loop_seconds, "batched_seconds": batched_seconds,
        "speedup": loop_seconds / batched_seconds,
    }  # fmt: skip


def official_anchor(tasks, settings, checkout: Path) -> list[dict]:
    sys.path.insert(0, str(checkout))
    import algs as official_algs  # noqa: PLC0415  (the user's checkout, outside this repository)
    import train as official_train  # noqa: PLC0415

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for k, (x, y, a, x_te, y_te, a_te, (sc, ci, ai)) in enumerate(tasks):
            folder = Path(tmp) / f"task{k}" / "resnet"
            folder.mkdir(parents=True)
            np.savez(folder / "emb_tr.npz", activ=x, ys=y, attrs=a)
            np.savez(folder / "emb_te.npz", activ=x_te, ys=y_te, attrs=a_te)
            g = 2 * y + a
            for algorithm in zoo.ALGORITHMS:
                seed = 100 * k + len(algorithm)
                np.random.seed(seed)
                torch.manual_seed(seed)
                with contextlib.redirect_stdout(io.StringIO()):
                    res, _ = official_train.run(
                        "cmnist", str(folder.parent), algorithm, len(y), sc, ci, ai, 0, 0, "resnet",
                        "linear", settings.max_steps, tol=settings.tol,
                    )  # fmt: skip
                np.random.seed(seed)
                torch.manual_seed(seed)
                init = torch.nn.Linear(x.shape[1], 1, bias=False).weight.detach()[0]
                idx = None
                if algorithm == "oversample":
                    idx = official_algs.oversample(g, 4)
                elif algorithm == "undersample":
                    idx = official_algs.undersample(g, 4)
                params, _ = zoo.train_head_reference(x, y, g, algorithm, [init], settings, idx)
                with torch.no_grad():
                    logits = zoo.head_logits([params[0][None]], torch.as_tensor(x_te)[None])[0]
                pred = (logits > 0).numpy().astype(int)
                ours = zoo.worst_group_error(pred, y_te, 2 * y_te + a_te)
                rows.append(
                    {"task": k, "algorithm": algorithm, "official": res["wga_te_err"], "ours": ours}
                )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=6)
    parser.add_argument("--n", type=int, default=250)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument(
        "--official", type=Path, default=None, help="a checkout of the official repo"
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    settings = zoo.HeadSettings(max_steps=args.steps)
    tasks = make_tasks(args.tasks, args.n, seed=0)
    print("batched vs per-task loop:", equivalence(tasks, settings))
    if args.official is None or not (args.official / "train.py").is_file():
        print("official anchor skipped: pass --official <checkout of LiangzeJiang/OOD-Chameleon>")
        return
    rows = official_anchor(tasks, settings, args.official)
    gaps = [abs(r["official"] - r["ours"]) for r in rows]
    for r in rows:
        print(r)
    print(f"official anchor: {len(rows)} (task, algorithm) pairs, max |wg err diff| = {max(gaps):.4f}, "
          f"identical in {sum(g < 1e-9 for g in gaps)}")  # fmt: skip


if __name__ == "__main__":
    main()
