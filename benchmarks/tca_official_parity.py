"""Side-by-side anchor: our LinearTCA vs the official `TCA.calculate` (youlj109/TCA) on the same inputs.

Dev-only: needs a local checkout of https://github.com/youlj109/TCA (never committed, never downloaded
by the project). The official module hard-codes `.cuda()` and imports `imagenet_c`/`torchvision`, so it
is loaded on CPU with those imports stubbed and `.cuda()` made the identity.

    python benchmarks/tca_official_parity.py --official /path/to/TCA [--run-dir data]

Inputs compared: (a) a random 600 x 32 problem, (b) the source model's embeddings and logits on the
Digits-C domains of the latest default run under --run-dir (if present). For each: max |logits diff|
of our `w_solver=adam, proportions=oracle` against the official code, argmax agreement, both timings,
and the accuracy of the exact eig solver for comparison.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
import types
from pathlib import Path

import numpy as np
import torch


def load_official(path: Path):
    """Import the official adapt_algorithm.py on CPU."""
    for name in ("imagenet_c", "torchvision", "torchvision.transforms"):
        stub = types.ModuleType(name)
        stub.corrupt = None
        sys.modules.setdefault(name, stub)
    sys.modules["torchvision"].transforms = sys.modules["torchvision.transforms"]
    torch.Tensor.cuda = lambda self, *a, **k: self
    torch.nn.Module.cuda = lambda self, *a, **k: self
    file = path / "TCA" / "adapt_algorithm.py" if path.is_dir() else path
    spec = importlib.util.spec_from_file_location("official_adapt_algorithm", file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def compare(official, z, logits, labels, head, num_classes, k=20):
    """One problem: official vs ours (adam + oracle), and ours (eig) accuracy."""
    from paper_pipelines.pipelines.tca.linear_tca import class_proportions, linear_tca

    r = class_proportions("oracle", num_classes, labels=labels)
    wrapper = types.SimpleNamespace(classifier=head)
    t0 = time.perf_counter()
    ref = official.TCA(wrapper, filter_K=k, W_num_iterations=20, W_lr=1e-3).calculate(
        num_classes, z, logits, r
    )
    t_official = time.perf_counter() - t0
    t0 = time.perf_counter()
    ours = linear_tca(z, logits, head, num_classes, filter_k=k, proportion=r, w_solver="adam")
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    eig = linear_tca(z, logits, head, num_classes, filter_k=k, proportion=r, w_solver="eig")
    t_eig = time.perf_counter() - t0
    ref = ref.detach()

    def acc(x):
        return 100.0 * float((x.argmax(1) == labels).float().mean())

    return {
        "max_abs_diff": float((ours.logits - ref).abs().max()),
        "argmax_agreement": float((ours.logits.argmax(1) == ref.argmax(1)).float().mean()),
        "acc_official": acc(ref),
        "acc_ours_adam": acc(ours.logits),
        "acc_ours_eig": acc(eig.logits),
        "acc_source": acc(logits),
        "s_official": t_official,
        "s_ours_adam": t_ours,
        "s_ours_eig": t_eig,
    }


def random_problem():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(600, 32, generator=g).relu()
    head = torch.nn.Linear(32, 10)
    with torch.no_grad():
        logits = head(z)
    labels = torch.randint(0, 10, (600,), generator=g)
    labels[:10] = torch.arange(10)
    return z, logits, labels, head


def pipeline_problems(run_dir: Path):
    """Source-model (z, logits, labels) for each domain of the latest default run."""
    import pickle

    from paper_pipelines.datasets import TorchDataset
    from paper_pipelines.pipelines.tca.adaptation import (
        collect_domain,
        make_prepare,
        model_from_record,
    )

    def latest(path: Path) -> Path:
        return sorted(p for p in path.iterdir() if p.is_dir())[-1] / path.name

    model_path = run_dir / "06_models/tca/source_model.pt"
    sets_path = run_dir / "05_model_input/tca/corrupted_sets.pkl"
    if not (model_path.exists() and sets_path.exists()):
        return
    record = TorchDataset(filepath=str(latest(model_path))).load()
    with open(latest(sets_path), "rb") as f:
        sets = pickle.load(f)
    model = model_from_record(record)
    for key, images in sets["domains"].items():
        if not key.endswith("@3"):
            continue
        out = collect_domain(
            model,
            images,
            key,
            ["source"],
            batch_size=64,
            shuffle=True,
            tent_lr=1e-3,
            steps=1,
            t3a_filter_k=100,
            prepare=make_prepare(record),
            device="cpu",
            seed=0,
            num_classes=10,
        )["source"]
        yield key, out["z"], out["logits"], torch.as_tensor(sets["labels"]), model.classifier


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--official", type=Path, required=True, help="checkout of youlj109/TCA")
    parser.add_argument("--run-dir", type=Path, default=Path("data"))
    args = parser.parse_args()
    torch.set_num_threads(1)
    official = load_official(args.official)
    rows = [("random 600x32", *random_problem())]
    rows += list(pipeline_problems(args.run_dir))
    print(
        f"{'problem':<22} {'max|diff|':>10} {'argmax=':>8} {'official':>9} {'ours adam':>9} "
        f"{'ours eig':>9} {'source':>7} {'t_off ms':>9} {'t_adam ms':>9} {'t_eig ms':>9}"
    )
    diffs = []
    for name, z, logits, labels, head in rows:
        r = compare(official, z, logits, labels, head, 10)
        diffs.append(r["max_abs_diff"])
        print(
            f"{name:<22} {r['max_abs_diff']:>10.2e} {r['argmax_agreement']:>8.3f} "
            f"{r['acc_official']:>9.2f} {r['acc_ours_adam']:>9.2f} {r['acc_ours_eig']:>9.2f} "
            f"{r['acc_source']:>7.2f} {1e3 * r['s_official']:>9.1f} {1e3 * r['s_ours_adam']:>9.1f} "
            f"{1e3 * r['s_ours_eig']:>9.1f}"
        )
    print(f"max |ours - official| over all problems: {max(diffs):.3e} (check 3 needs < 1e-5)")
    sys.exit(0 if max(diffs) < 1e-5 else 1)


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    main()
