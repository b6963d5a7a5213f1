"""The experiments of the reproduction, Kedro-free: core-weight sweeps, the extension, scaling in n.

Randomness comes from the paper's one seed through named sub-streams (common.runtime.substream):
``core/<method>/<s>/<draw>`` for each sampled core of the sweep, ``extension/<method>`` for the
extension's landmarks, ``scaling`` for the generator and pilots, ``mkc`` for the late-fusion k-means
start and ``kmeans`` for the evaluation's k-means restarts. The projection core is deterministic.
"""

from __future__ import annotations

import logging
import time
from itertools import product

import numpy as np
import pandas as pd

from paper_pipelines.common.progress import progress
from paper_pipelines.common.runtime import substream, substream_seed

from .baselines import average_kernel, best_single_kernel, run_full
from .core import build_core, concatenated_left_singular_vectors
from .data import make_multiview_blobs
from .extension import nystrom_embedding, projection_embedding
from .kernels import KernelSpec, build_base_kernels, nystrom_features
from .metrics import evaluate_embedding, relative_weight_error
from .mkc import MKCResult, run_mkc
from .parameters import CoreParams, ExtensionParams, MKCParams, ScalingParams

logger = logging.getLogger(__name__)


def run_on_core(algorithm: str, core, k: int, mkc: MKCParams, seed: int) -> MKCResult:
    """One MKC algorithm on a core kernel set (the CoreKernels carries MKKM's exact traces)."""
    settings = mkc.settings(algorithm, substream_seed(seed, "mkc"))
    return run_mkc(algorithm, core, k, settings)


def core_weight_sweep(
    kernels: np.ndarray,
    full: dict[str, dict],
    k: int,
    mkc: MKCParams,
    core: CoreParams,
    seed: int,
) -> pd.DataFrame:
    """Relative weight error of core-kernel MKC vs full MKC for every (algorithm, method, s, draw)."""
    rows = []
    n = kernels.shape[1]
    for s in progress(core.sizes_projection, desc="projection cores", logger=logger):
        if s > n:
            raise ValueError(f"core size s={s} is larger than n={n}; lower core.sizes_projection")
        start = time.perf_counter()
        projection = build_core(
            "projection",
            kernels,
            s,
            substream(seed, "core", "projection"),
            solver=core.solver,
            power_iters=core.power_iters,
        )
        build_seconds = time.perf_counter() - start
        for algorithm in mkc.algorithms:
            start = time.perf_counter()
            result = run_on_core(algorithm, projection, k, mkc, seed)
            rows.append(
                _row(
                    algorithm,
                    "projection",
                    s,
                    0,
                    result,
                    full,
                    build_seconds + time.perf_counter() - start,
                )
            )
        logger.info("projection core s=%d done (%s)", s, _errors(rows, s, "projection"))
    basis = None
    if "leverage" in core.sampling_methods:
        start = time.perf_counter()
        basis = concatenated_left_singular_vectors(
            kernels, core.rank, solver=core.solver, power_iters=core.power_iters
        )
        basis_seconds = time.perf_counter() - start
    algorithms = [a for a in core.sampling_algorithms if a in mkc.algorithms]
    grid = list(product(core.sampling_methods, core.sizes_sampling))
    for method, s in progress(grid, desc="sampled cores", logger=logger):
        if s > n:
            raise ValueError(f"core size s={s} is larger than n={n}; lower core.sizes_sampling")
        for draw in range(core.draws):
            start = time.perf_counter()
            sampled = build_core(
                method,
                kernels,
                s,
                substream(seed, "core", method, s, draw),
                rank=core.rank,
                mix_beta=core.mix_beta,
                basis=basis,
            )
            build_seconds = (
                time.perf_counter() - start + (basis_seconds if method == "leverage" else 0.0)
            )
            for algorithm in algorithms:
                start = time.perf_counter()
                result = run_on_core(algorithm, sampled, k, mkc, seed)
                rows.append(
                    _row(
                        algorithm,
                        method,
                        s,
                        draw,
                        result,
                        full,
                        build_seconds + time.perf_counter() - start,
                    )
                )
        logger.info("%s core s=%d done (%s)", method, s, _errors(rows, s, method))
    return pd.DataFrame(rows)


def _row(algorithm, method, s, draw, result, full, seconds) -> dict:
    reference = full[algorithm]["result"].weights
    row = {
        "algorithm": algorithm,
        "method": method,
        "s": int(s),
        "draw": int(draw),
        "rel_error": relative_weight_error(result.weights, reference),
        "linf_error": float(np.max(np.abs(result.weights - reference))),
        "seconds": float(seconds),
        "n_iter": int(result.n_iter),
    }
    row.update({f"w{p}": float(w) for p, w in enumerate(result.weights)})
    return row


def _errors(rows, s, method) -> str:
    return ", ".join(
        f"{r['algorithm']} {r['rel_error']:.4f}"
        for r in rows
        if r["s"] == s and r["method"] == method and r["draw"] == rows[-1]["draw"]
    )


def extension_comparison(
    kernels: np.ndarray,
    labels: np.ndarray,
    full: dict[str, dict],
    k: int,
    mkc: MKCParams,
    core: CoreParams,
    ext: ExtensionParams,
    seed: int,
) -> tuple[pd.DataFrame, dict[str, np.ndarray]]:
    """Clustering quality of all n points: full MKC vs core weights + extension vs simple baselines."""
    algorithm = ext.algorithm
    kmeans_seed = substream_seed(seed, "kmeans")
    embeddings: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    if algorithm in full:
        embeddings[f"full_{algorithm}"] = full[algorithm]["result"].embedding
        seconds[f"full_{algorithm}"] = full[algorithm]["seconds"]
    # A-MKKM: equal weights, and the best single kernel (chosen by ACC, an oracle upper baseline).
    start = time.perf_counter()
    embeddings["average_kernel"] = average_kernel(kernels, k, mkc.dense_max_n)
    seconds["average_kernel"] = time.perf_counter() - start
    start = time.perf_counter()
    projection = build_core(
        "projection",
        kernels,
        core.default_s,
        substream(seed, "extension", "projection"),
        solver=core.solver,
        power_iters=core.power_iters,
    )
    result = run_on_core(algorithm, projection, k, mkc, seed)
    embeddings[f"core_projection_s{core.default_s}"] = projection_embedding(
        projection.basis, projection.kernels, result.weights, k
    )
    seconds[f"core_projection_s{core.default_s}"] = time.perf_counter() - start
    for method in core.sampling_methods:
        start = time.perf_counter()
        sampled = build_core(
            method,
            kernels,
            ext.s_sampling,
            substream(seed, "extension", method),
            rank=core.rank,
            mix_beta=core.mix_beta,
        )
        result = run_on_core(algorithm, sampled, k, mkc, seed)
        name = f"{method}_nystrom_s{ext.s_sampling}"
        embeddings[name] = nystrom_embedding(kernels, sampled.indices, result.weights, k)
        seconds[name] = time.perf_counter() - start
    rows, first_labels = [], {}
    for name, embedding in embeddings.items():
        scores, pred = evaluate_embedding(
            embedding, labels, k, ext.kmeans_repeats, ext.kmeans_n_init, kmeans_seed
        )
        rows.append({"method": name, **scores, "seconds": seconds[name]})
        first_labels[name] = pred
        logger.info("clustering %s: ACC %.4f NMI %.4f", name, scores["acc"], scores["nmi"])
    best = best_single_kernel(
        kernels,
        labels,
        k,
        mkc.dense_max_n,
        max(1, ext.kmeans_repeats // 4),
        ext.kmeans_n_init,
        kmeans_seed,
    )
    rows.append({"method": f"best_single_kernel_{best[2]}", **best[0], "seconds": float("nan")})
    first_labels[f"best_single_kernel_{best[2]}"] = best[1]
    return pd.DataFrame(rows), first_labels


def scaling_study(
    mkc: MKCParams, core: CoreParams, scaling: ScalingParams, algorithms: list[str], seed: int
) -> pd.DataFrame:
    """Wall time of full vs core MKC on the multi-view generator for each n in ``scaling.sizes``.

    Full MKC runs for n <= full_max_n (exact kernels). The core pipeline (kernels excluded, then
    core construction + MKC on the core + extension to all n) runs for every n: on exact kernels up
    to exact_max_n, above that on per-kernel Nystrom features (never an n x n matrix).
    """
    rng = substream(seed, "scaling")
    kmeans_seed = substream_seed(seed, "kmeans")
    x_all, y_all, slices = make_multiview_blobs(
        max(scaling.sizes),
        scaling.k,
        scaling.views,
        scaling.dim,
        scaling.separation,
        scaling.noise,
        scaling.irrelevant_dims,
        rng,
    )
    specs = [KernelSpec("rbf", t) for t in scaling.bandwidth_factors]
    rows = []
    for n in progress(sorted(scaling.sizes), desc="scaling in n", logger=logger):
        x, y = x_all[:n], y_all[:n]
        features = n > scaling.exact_max_n
        start = time.perf_counter()
        if features:
            pilot = np.sort(rng.choice(n, min(scaling.pilot_size, n), replace=False))
            kernels = np.concatenate(
                [
                    nystrom_features(x[:, sl], specs, pilot, substream(seed, "scaling", "median"))
                    for sl in slices
                ]
            )
        else:
            # Each view's kernels are written into one preallocated stack: concatenating per-view
            # stacks would hold every kernel twice (12 GB instead of 6 GB at n = 20 000 in float32).
            m = len(specs)
            kernels = np.empty((len(slices) * m, n, n), dtype=scaling.kernel_dtype)
            for v, sl in enumerate(slices):
                build_base_kernels(
                    x[:, sl],
                    specs,
                    substream(seed, "scaling", "median"),
                    dtype=scaling.kernel_dtype,
                    out=kernels[v * m : (v + 1) * m],
                )
        kernel_seconds = time.perf_counter() - start
        logger.info(
            "scaling n=%d: %d kernels (%s) in %.1f s",
            n,
            kernels.shape[0],
            "Nystrom features" if features else "exact",
            kernel_seconds,
        )
        full = (
            run_full(kernels, scaling.k, mkc, seed)
            if n <= scaling.full_max_n and not features
            else {}
        )
        for algorithm in algorithms:
            start = time.perf_counter()
            projection = build_core(
                "projection",
                kernels,
                scaling.s,
                substream(seed, "scaling", "projection"),
                features=features,
                solver=core.solver,
                power_iters=core.power_iters,
            )
            result = run_on_core(algorithm, projection, scaling.k, mkc, seed)
            embedding = (
                projection_embedding(
                    projection.basis, projection.kernels, result.weights, scaling.k
                )
                if algorithm != "latefusion"
                else projection.basis @ result.embedding
            )
            core_seconds = time.perf_counter() - start
            row = {
                "n": n,
                "algorithm": algorithm,
                "kernel_seconds": kernel_seconds,
                "core_seconds": core_seconds,
                "full_seconds": np.nan,
                "rel_error": np.nan,
                "acc_full": np.nan,
            }
            scores, _ = evaluate_embedding(
                embedding, y, scaling.k, scaling.kmeans_repeats, 10, kmeans_seed
            )
            row["acc_core"] = scores["acc"]
            if algorithm in full:
                reference = full[algorithm]["result"]
                row["full_seconds"] = full[algorithm]["seconds"]
                row["rel_error"] = relative_weight_error(result.weights, reference.weights)
                row["acc_full"] = evaluate_embedding(
                    reference.embedding, y, scaling.k, scaling.kmeans_repeats, 10, kmeans_seed
                )[0]["acc"]
            logger.info(
                "scaling n=%d %s: core %.2f s (full %.2f s), error %.4g, ACC core %.3f",
                n,
                algorithm,
                core_seconds,
                row["full_seconds"],
                row["rel_error"],
                row["acc_core"],
            )
            rows.append(row)
        del kernels
    return pd.DataFrame(rows)
