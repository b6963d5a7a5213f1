"""Side-by-side anchors for multilabel_bounds (spec: Anchors and side-by-side benchmark).

1. Optimiser / quality: on yeast (river wheel), n training rows, all usable labels, our projected-Adam trainer
   against scikit-learn's one-vs-rest LogisticRegression, RidgeClassifier and LinearSVC(hinge) at matched
   regularisation: train / test Hamming loss, 1 - Macro-AUC, CPU seconds per label (spec check 7).
2. Metrics: our Hamming loss, ranking loss and Macro-AUC against sklearn.metrics on random scores.
3. Rademacher: the ascent estimator on the identity loss against the closed form (within 2 %).
There is no official code (theory paper), so there is no official-code anchor.

    .venv/bin/python benchmarks/multilabel_bounds_anchors.py --n 1600 --splits 3
"""

from __future__ import annotations

import argparse
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # CPU seconds are compared

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402


def optimiser_anchor(n: int, splits: int, steps: int) -> pd.DataFrame:
    from paper_pipelines.pipelines.multilabel_bounds import baselines, data
    from paper_pipelines.pipelines.multilabel_bounds.parameters import AnchorParams

    table = data.load_yeast()
    frames = []
    for s in range(splits):
        perm = np.random.default_rng(s).permutation(len(table))
        x_tr, y_tr, x_te, y_te = data.real_features(table, perm[:n], perm[n:])
        usable = data.usable_labels(y_tr, y_te, 2, f"split {s}")
        out = baselines.anchor_comparison(
            x_tr, y_tr[:, usable], x_te, y_te[:, usable], AnchorParams(n=n), steps, 0.1, s
        )
        frames.append(out.assign(split=s))
    cols = ["train_hamming", "test_hamming", "test_auc_loss", "test_ranking", "seconds_per_label"]
    return pd.concat(frames).groupby("method", sort=False)[cols].mean()


def metric_anchor(trials: int = 20) -> float:
    from sklearn.metrics import hamming_loss, label_ranking_loss, roc_auc_score

    from paper_pipelines.pipelines.multilabel_bounds import metrics

    worst = 0.0
    for t in range(trials):
        rng = np.random.default_rng(t)
        s = np.round(rng.standard_normal((300, 8)), 1)
        y = np.where(rng.random((300, 8)) < 0.3, 1.0, -1.0)
        y01 = (y > 0).astype(int)
        worst = max(
            worst,
            abs(metrics.hamming_loss(s, y) - hamming_loss(y01, (s > 0).astype(int))),
            abs(metrics.ranking_loss(s, y) - label_ranking_loss(y01, s)),
            abs(metrics.macro_auc(s, y) - roc_auc_score(y01, s, average="macro")),
        )
    return worst


def ascent_anchor() -> float:
    from paper_pipelines.pipelines.multilabel_bounds import rademacher

    rng = np.random.default_rng(0)
    g = rng.standard_normal((400, 21))
    x = g / np.linalg.norm(g, axis=1, keepdims=True)
    signs = rademacher.rademacher_signs((400, 10), rng)
    exact = 10.0 * np.linalg.norm(x.T @ signs, axis=0).sum() / (400 * 10)
    found = rademacher.ascent_sup(
        x, np.ones((400, 10)), signs, "identity", "linear", 10.0, 5, 150, 0.1, 2, rng
    )
    return found / exact - 1


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=1600)
    parser.add_argument("--splits", type=int, default=3)
    parser.add_argument("--steps", type=int, default=600)
    args = parser.parse_args()
    print(f"yeast, n = {args.n}, mean over {args.splits} splits:")
    print(optimiser_anchor(args.n, args.splits, args.steps).round(4).to_string())
    print(f"largest |ours - sklearn.metrics| over 20 random score matrices: {metric_anchor():.2e}")
    print(f"ascent on the identity loss vs closed form: {100 * ascent_anchor():+.2f} %")


if __name__ == "__main__":
    main()
