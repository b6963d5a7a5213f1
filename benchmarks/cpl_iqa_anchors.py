"""Anchors for cpl_iqa: our label propagation against a dense solve and scikit-learn's LabelSpreading,
our GMSD / SSIM against piq (when installed), our IQA measures against scipy.

There is no official CPL-IQA code to run side by side. The graph is built on the NSS features of a
SynAuth-IQA set (the same generator as the pipeline, no training needed), labelled : unlabelled = 1 : 3.

    .venv/bin/python benchmarks/cpl_iqa_anchors.py --images 800
"""

from __future__ import annotations

import argparse
import json

import numpy as np
from scipy import stats
from sklearn.semi_supervised import LabelSpreading

from paper_pipelines.common.runtime import substream
from paper_pipelines.pipelines.cpl_iqa import data, features, labels, metrics, quality
from paper_pipelines.pipelines.cpl_iqa import propagation as lp


def synthetic(n: int, seed: int = 0):
    refs = data.load_shipped_images()
    pristine, distorted, _ = data.make_synthetic_set(
        refs, n, 64, (0.25, 0.6), list(data_distortions()), (1, 3), substream(seed, "images")
    )
    return pristine, distorted


def data_distortions():
    return ("blur", "noise", "jpeg", "contrast", "brightness", "saturation")


def propagation_anchor(feats: np.ndarray, mos: np.ndarray, k: int, gamma: float) -> dict:
    n = len(mos)
    n_l = n // 4
    scaled = labels.rescale_mos(mos, mos.min(), mos.max(), 100)
    y = np.zeros((n, 100))
    y[:n_l] = labels.two_bin_label(scaled[:n_l], 100)
    w_n = lp.normalise_graph(lp.symmetrise(lp.knn_affinity(feats, k, 3.0)))
    z_cg = lp.diffuse(w_n, y, gamma, iters=20, tol=1e-6)
    z_dense = np.linalg.solve(np.eye(n) - gamma * w_n.toarray(), y)
    out = {
        "cg20_vs_dense_max_abs": float(np.abs(z_cg - z_dense).max()),
        "cg20_vs_dense_rel": float(np.linalg.norm(z_cg - z_dense) / np.linalg.norm(z_dense)),
    }
    z_more = lp.diffuse(w_n, y, gamma, iters=500, tol=1e-10)
    out["cg500_vs_dense_max_abs"] = float(np.abs(z_more - z_dense).max())
    # LabelSpreading takes hard labels: the argmax bin of each labelled vector (10-point classes
    # so that every class has several seeds), -1 for unlabelled; connectivity kNN graph, alpha = gamma
    classes = np.minimum((scaled - 1) // 10, 9).astype(int)
    hard = np.full(n, -1)
    hard[:n_l] = classes[:n_l]
    spread = LabelSpreading(kernel="knn", n_neighbors=k, alpha=gamma, max_iter=1000, tol=1e-8)
    spread.fit(lp.l2_normalise(feats), hard)
    onehot = np.zeros((n, 10))
    onehot[np.arange(n_l), classes[:n_l]] = 1.0
    ours_conn = lp.diffuse(
        lp.normalise_graph(lp.symmetrise(lp.knn_affinity(feats, k, 1e-9))),
        onehot,
        gamma,
        500,
        1e-10,
    )
    ours_cubed = lp.diffuse(w_n, onehot, gamma, 500, 1e-10)
    unl = slice(n_l, n)
    sk = spread.transduction_[unl]
    out["argmax_agreement_vs_labelspreading_connectivity"] = float(
        np.mean(ours_conn[unl].argmax(1) == sk)
    )
    out["argmax_agreement_vs_labelspreading_cubed_affinity"] = float(
        np.mean(ours_cubed[unl].argmax(1) == sk)
    )
    pseudo = labels.expected_score(lp.clip_and_normalise(z_cg[n_l:]), 100)
    out["pseudo_mos_srcc_on_nss_graph"] = float(stats.spearmanr(pseudo, scaled[n_l:]).statistic)
    return out


def piq_gmsd_ssim():
    """piq's own ``gmsd`` and ``ssim`` without running ``piq/__init__.py``, which imports torchvision
    for its VGG-based metrics (PyPI's torchvision does not load beside this project's CPU torch). The
    two metric modules need only torch and piq's ``functional`` and ``utils`` subpackages, so piq is
    registered as a bare package of its own folder and the two modules are imported from it."""
    import importlib
    import importlib.util
    import sys
    import types

    spec = importlib.util.find_spec("piq")  # a top-level find_spec does not execute the package
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "piq is not installed (pip install --no-deps piq==0.8.0; make install does)"
        )
    if "piq" not in sys.modules:
        package = types.ModuleType("piq")
        package.__path__ = list(spec.submodule_search_locations)
        sys.modules["piq"] = package
    return importlib.import_module("piq.gmsd").gmsd, importlib.import_module("piq.ssim").ssim


def fr_anchor(pristine: np.ndarray, distorted: np.ndarray) -> dict:
    try:
        import torch

        piq_gmsd, piq_ssim = piq_gmsd_ssim()
    except Exception as exc:
        return {"piq": f"skipped ({type(exc).__name__}: {exc})"}
    ref = torch.as_tensor(pristine.transpose(0, 3, 1, 2) / 255.0, dtype=torch.float32)
    dis = torch.as_tensor(distorted.transpose(0, 3, 1, 2) / 255.0, dtype=torch.float32)
    ours_g = np.array(
        [quality.gmsd(a / 255, b / 255) for a, b in zip(pristine, distorted, strict=True)]
    )
    ours_s = np.array(
        [quality.ssim(a / 255, b / 255) for a, b in zip(pristine, distorted, strict=True)]
    )
    theirs_g = piq_gmsd(dis, ref, reduction="none").numpy()
    theirs_s = piq_ssim(dis, ref, reduction="none").numpy()
    return {
        "images": len(pristine),
        "gmsd_srcc_vs_piq": float(stats.spearmanr(ours_g, theirs_g).statistic),
        "ssim_srcc_vs_piq": float(stats.spearmanr(ours_s, theirs_s).statistic),
        "gmsd_max_abs_diff_vs_piq": float(np.max(np.abs(ours_g - theirs_g))),
        "ssim_max_abs_diff_vs_piq": float(np.max(np.abs(ours_s - theirs_s))),
    }


def metric_anchor() -> dict:
    rng = np.random.default_rng(0)
    mos = rng.uniform(1, 100, 500)
    pred = mos + rng.normal(0, 25, 500)
    ours = metrics.iqa_scores(pred, mos)
    ref = {
        "plcc": stats.pearsonr(pred, mos).statistic,
        "srcc": stats.spearmanr(pred, mos).statistic,
        "krcc": stats.kendalltau(pred, mos).statistic,
        "rmse": float(np.sqrt(np.mean((pred - mos) ** 2))),
    }
    return {f"{k}_abs_diff_vs_scipy": float(abs(ours[k] - ref[k])) for k in ours}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--images", type=int, default=800)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--gamma", type=float, nargs="+", default=[0.9, 0.99])
    args = parser.parse_args()
    pristine, distorted = synthetic(args.images)
    g = np.array([quality.gmsd(a / 255, b / 255) for a, b in zip(pristine, distorted, strict=True)])
    s = np.array([quality.ssim(a / 255, b / 255) for a, b in zip(pristine, distorted, strict=True)])
    mos = quality.to_quality_scale(quality.latent_quality({"gmsd": g, "ssim": s}))
    feats = features.standardise(
        features.feature_matrix(distorted), features.feature_matrix(distorted)
    )
    report = {f"gamma_{gm}": propagation_anchor(feats, mos, args.k, gm) for gm in args.gamma}
    report["fr_metrics"] = fr_anchor(pristine, distorted)
    report["measures"] = metric_anchor()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
