"""Leaf matching's speed: seconds per epoch on Erdos-Renyi graphs (the paper's scalability generator),
our flat (start, other) pair layout against the padded [B, max_deg, M, T] layout of the official code,
and, when a checkout of the official repository is given, its main.py on our PubMed split.

    .venv/bin/python benchmarks/leaf_matching_scaling.py --sizes 1024 2048 4096 8192 16384
    .venv/bin/python benchmarks/leaf_matching_scaling.py --official /path/to/LeafMatching --epochs 3

The official anchor writes our split in its format (``datasets/PubMed/split/split_dict_0.1.pt``) into a
temporary copy of the checkout, makes ``.cuda()`` a no-op, and runs ``main.py`` as ``__main__`` (it reads
a module-level ``convergence``). Nothing here downloads; the official code is never copied into the repo.
Prints one JSON line per measurement.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from paper_pipelines.pipelines.leaf_matching import data  # noqa: E402
from paper_pipelines.pipelines.leaf_matching.decentralised_search import (  # noqa: E402
    SearchSettings,
    fit_leaf_matching,
)
from paper_pipelines.pipelines.leaf_matching.metrics import link_prediction_scores  # noqa: E402
from paper_pipelines.pipelines.leaf_matching.observed_links import observed_split  # noqa: E402
from paper_pipelines.pipelines.leaf_matching.study import lm_scores  # noqa: E402


def scaling(sizes: list[int], epochs: int, layouts: list[str], batch_size: int) -> None:
    """Per-epoch seconds (first epoch left out) per layout, ER mean degree 5, 90 % observed."""
    settings = SearchSettings(height=16, trees=16, alpha=16.0, epochs=epochs, batch_size=batch_size)
    for n in sizes:
        rng = np.random.default_rng(n)
        split = observed_split(data.erdos_renyi(n, 5.0, rng).to_numpy(), 0.9, 1, rng)
        for layout in layouts:
            fit = fit_leaf_matching(split["train"], split["n_nodes"], settings, 0, layout=layout)
            sec = float(np.mean(fit["seconds_per_epoch"][1:] or fit["seconds_per_epoch"]))
            edges = len(split["train"])
            print(
                json.dumps(
                    {
                        "n_nodes": n,
                        "edges": edges,
                        "layout": layout,
                        "seconds_per_epoch": round(sec, 4),
                        "microseconds_per_edge": round(1e6 * sec / edges, 2),
                    }
                ),
                flush=True,
            )


def official_anchor(checkout: Path, epochs: int, mu: float) -> None:
    """Official main.py and our fit on the same PubMed split after the same epochs: AUC, s/epoch."""
    rng = np.random.default_rng(0)
    split = observed_split(data.read_pubmed().to_numpy(), mu, 5, rng)
    settings = SearchSettings(height=12, trees=16, epochs=epochs)
    fit = fit_leaf_matching(split["train"], split["n_nodes"], settings, 1)
    fit.update(height=12, alpha=8.0, gamma=3.0, eps=1e-5)
    ours = link_prediction_scores(
        lm_scores(fit, split["test_pos"]), lm_scores(fit, split["test_neg"]), [50]
    )
    print(
        json.dumps(
            {
                "who": "ours",
                "epochs": epochs,
                "auc": ours["auc"],
                "ap": ours["ap"],
                "hits@50": ours["hits@50"],
                "seconds_per_epoch": float(np.mean(fit["seconds_per_epoch"])),
            }
        ),
        flush=True,
    )
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "official"
        shutil.copytree(checkout, work, ignore=shutil.ignore_patterns(".git", "datasets"))
        target = work / "datasets" / "PubMed" / "split"
        target.mkdir(parents=True)
        one = torch.as_tensor(split["train"][:1])
        torch.save(
            {
                "train": {"edge": torch.as_tensor(split["train"])},
                "test": {
                    "edge": torch.as_tensor(split["test_pos"]),
                    "edge_neg": torch.as_tensor(split["test_neg"]),
                },
                "valid": {"edge": one, "edge_neg": one},
            },
            target / f"split_dict_{mu}.pt",
        )
        shim = (
            "import torch,runpy,sys; torch.Tensor.cuda=lambda s,*a,**k: s; "
            "sys.argv=['main.py']+sys.argv[1:]; runpy.run_path('main.py', run_name='__main__')"
        )
        args = [
            "--dataset",
            "PubMed",
            "--split_ratio",
            str(mu),
            "--h",
            "12",
            "--tp",
            "16",
            "--c",
            "1",
            "--neg",
            "1",
            "--gamma",
            "3",
            "--pos_ratio",
            "1",
            "--alpha",
            "8",
            "--epoch",
            str(epochs),
            "--batch_size",
            "256",
            "--seed",
            "1",
            "--chunks",
            "1",
            "--convergence",
            "0.8",
            "--eval_step",
            str(epochs),
        ]
        started = time.perf_counter()
        out = subprocess.run(
            [sys.executable, "-c", shim, *args], cwd=work, capture_output=True, text=True
        )
        wall = time.perf_counter() - started
        found = re.findall(r"roc_auc, pr_auc, f1, mrr ([\d.e-]+) ([\d.e-]+)", out.stdout)
        if out.returncode or not found:
            print(json.dumps({"who": "official", "error": out.stderr[-2000:]}))
            return
        auc, ap = map(float, found[-1])
        print(
            json.dumps(
                {
                    "who": "official",
                    "epochs": epochs,
                    "auc": auc,
                    "ap": ap,
                    "seconds_per_epoch_upper_bound": wall / epochs,
                    "auc_diff": ours["auc"] - auc,
                }
            ),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048, 4096, 8192, 16384])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=256)
    parser.add_argument("--layouts", nargs="+", default=["flat", "padded"])
    parser.add_argument(
        "--official",
        type=Path,
        default=None,
        help="a checkout of github.com/KevinGao7/LeafMatching (skipped when absent)",
    )
    args = parser.parse_args()
    torch.set_num_threads(1)
    scaling(args.sizes, args.epochs, args.layouts, args.batch_size)
    if args.official is None or not (args.official / "main.py").is_file():
        print(json.dumps({"who": "official", "skipped": "no checkout given (--official PATH)"}))
        return
    official_anchor(args.official, args.epochs, 0.1)


if __name__ == "__main__":
    main()
