"""tca benchmark: the W solvers when the embedding is much wider than the pseudo-source (d >> m).

A synthetic shifted target with a known source model: C = 10 Gaussian classes in R^d with a shared,
correlated covariance S (eigenvalues decaying as 1 / (1 + j / 10)) and means that differ in every
direction, an LDA head fitted on S (the source classifier), and a target that scales every coordinate by a factor drawn in [0.6, 1.4] and adds
a mean shift (a covariance and instance shift for TCA to correct). N = 2000 target rows; K = 20 per
class gives m = 200 pseudo-source rows, as with the paper's K and CIFAR-10. For each d the script
prints the target accuracy of the source head, of mean alignment only (W = I) and of LinearTCA with
each solver: ``eig`` at the configured eps (1e-3), ``adam`` (official, 20 steps of lr 1e-3) and
``auto`` (the default: ``eig`` while m >= d, otherwise eig with shrinkage set by d / m).

    .venv/bin/python benchmarks/tca_wide_embedding.py [--dims 64 512 2048] [--seeds 0 1 2]
"""

from __future__ import annotations

import argparse
import math
import time

import torch

from paper_pipelines.pipelines.tca.linear_tca import linear_tca

C, N, K = 10, 2000, 20
SEPARATION = 0.25


def _spread(d: int) -> float:
    """sum_j 1 / eval_j = sum_j (1 + j / 10): the squared Mahalanobis length of a unit-scale mean."""
    return d + d * (d - 1) / 20.0


def problem(d: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.nn.Linear]:
    """Target embeddings, their labels and the source LDA head (float32)."""
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    evals = 1.0 / (1.0 + torch.arange(d, dtype=torch.float64) / 10.0)
    # Class means differ in every direction; the scale keeps the Mahalanobis separation (and the
    # source accuracy) about the same at every d.
    sep = SEPARATION * math.sqrt(_spread(192) / _spread(d))
    means = sep * torch.randn(C, d, generator=g, dtype=torch.float64) @ q.T
    y = torch.arange(N) % C
    z = means[y] + torch.randn(N, d, generator=g, dtype=torch.float64) @ (q * evals.sqrt()).T
    precision = (q / evals) @ q.T
    head = torch.nn.Linear(d, C)
    with torch.no_grad():
        head.weight.copy_(means @ precision)
        head.bias.copy_(-0.5 * ((means @ precision) * means).sum(1))
    scale = 0.6 + 0.8 * torch.rand(d, generator=g, dtype=torch.float64)
    centre = means.mean(0)
    z_t = (z - centre) * scale + centre + 0.3 * torch.randn(d, generator=g, dtype=torch.float64)
    return z_t.float(), y, head


def accuracy(logits: torch.Tensor, y: torch.Tensor) -> float:
    return 100.0 * float((logits.argmax(1) == y).float().mean())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[64, 512, 2048])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = parser.parse_args()
    torch.set_num_threads(1)
    solvers = ("identity", "eig", "adam", "auto")
    print(f"{'d':>5} {'m/d':>6} {'source':>7} " + " ".join(f"{s:>9}" for s in solvers) + "  sec")
    for d in args.dims:
        rows = []
        t0 = time.perf_counter()
        for seed in args.seeds:
            z, y, head = problem(d, seed)
            with torch.no_grad():
                logits = head(z)
            row = [accuracy(logits, y)]
            for solver in solvers:
                res = linear_tca(z, logits, head, C, filter_k=K, w_solver=solver)
                row.append(accuracy(res.logits, y))
            rows.append(row)
        mean = torch.tensor(rows).mean(0).tolist()
        print(
            f"{d:>5} {C * K / d:>6.3f} {mean[0]:>7.1f} "
            + " ".join(f"{v:>9.1f}" for v in mean[1:])
            + f"  {time.perf_counter() - t0:.0f}"
        )


if __name__ == "__main__":
    main()
