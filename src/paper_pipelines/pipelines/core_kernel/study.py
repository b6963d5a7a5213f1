"""The experiments of the reproduction, Kedro-free: full MKC, core sweeps, extension, scaling in n."""

from __future__ import annotations

import logging
import time

import numpy as np
import pandas as pd

from .core import build_core, concatenated_left_singular_vectors
from .data import make_multiview_blobs
from .evaluation import evaluate_embedding, relative_weight_error
from .extension import nystrom_embedding, projection_embedding
from .kernels import KernelSpec, build_base_kernels, nystrom_features
from .mkc import MKCResult, kernel_kmeans_relaxed, run_mkc
from .parameters import CoreParams, ExtensionParams, MKCParams, ScalingParams

logger = logging.getLogger(__name__)


def run_full(kernels: np.ndarray, k: int, mkc: MKCParams, seed: int) -> dict[str, dict]:
    """Each algorithm on the full n x n kernels: weights, embedding, iterations, wall time."""
    out = {}
    for algorithm in mkc.algorithms:
        start = time.perf_counter()
        result = run_mkc(algorithm, kernels, k, mkc.settings(algorithm, seed))
        seconds = time.perf_counter() - start
        logger.info(
            "full %s: %d iterations, %.1f s, weights %s",
            algorithm,
            result.n_iter,
            seconds,
            np.round(result.weights, 4).tolist(),
        )
        out[algorithm] = {"result": result, "seconds": seconds}
    return out


def run_on_core(algorithm: str, core, k: int, mkc: MKCParams, seed: int) -> MKCResult:
    """One MKC algorithm on a core kernel set (MKKM gets the exact traces for the projection core)."""
    traces = core.traces if algorithm == "mkkm" else None
    return run_mkc(algorithm, core.kernels, k, mkc.settings(algorithm, seed), traces=traces)


def core_weight_sweep(
    kernels: np.ndarray,
    full: dict[str, dict],
    k: int,
    mkc: MKCParams,
    core: CoreParams,
) -> pd.DataFrame:
    """Relative weight error of core-kernel MKC vs full MKC for every (algorithm, method, s, seed)."""
    rows = []
    n = kernels.shape[1]
    for s in core.sizes_projection:
        if s > n:
            raise ValueError(f"core size s={s} is larger than n={n}; lower core.sizes_projection")
        start = time.perf_counter()
        projection = build_core(
            "projection",
            kernels,
            s,
            np.random.default_rng(0),
            solver=core.solver,
            power_iters=core.power_iters,
        )
        build_seconds = time.perf_counter() - start
        for algorithm in mkc.algorithms:
            start = time.perf_counter()
            result = run_on_core(algorithm, projection, k, mkc, 0)
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
    for method in core.sampling_methods:
        for s in core.sizes_sampling:
            if s > n:
                raise ValueError(f"core size s={s} is larger than n={n}; lower core.sizes_sampling")
            for seed in core.seeds:
                start = time.perf_counter()
                sampled = build_core(
                    method,
                    kernels,
                    s,
                    np.random.default_rng(seed),
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
                            seed,
                            result,
                            full,
                            build_seconds + time.perf_counter() - start,
                        )
                    )
            logger.info("%s core s=%d done (%s)", method, s, _errors(rows, s, method))
    return pd.DataFrame(rows)


def _row(algorithm, method, s, seed, result, full, seconds) -> dict:
    reference = full[algorithm]["result"].weights
    row = {
        "algorithm": algorithm,
        "method": method,
        "s": int(s),
        "seed": int(seed),
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
        if r["s"] == s and r["method"] == method and r["seed"] == rows[-1]["seed"]
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
    m = kernels.shape[0]
    embeddings: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    if algorithm in full:
        embeddings[f"full_{algorithm}"] = full[algorithm]["result"].embedding
        seconds[f"full_{algorithm}"] = full[algorithm]["seconds"]
    # A-MKKM: equal weights, and the best single kernel (chosen by ACC, an oracle upper baseline).
    start = time.perf_counter()
    embeddings["average_kernel"], _ = kernel_kmeans_relaxed(
        kernels.mean(axis=0), k, mkc.dense_max_n
    )
    seconds["average_kernel"] = time.perf_counter() - start
    start = time.perf_counter()
    projection = build_core(
        "projection",
        kernels,
        core.default_s,
        np.random.default_rng(0),
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
            np.random.default_rng(seed),
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
            embedding, labels, k, ext.kmeans_repeats, ext.kmeans_n_init, seed
        )
        rows.append({"method": name, **scores, "seconds": seconds[name]})
        first_labels[name] = pred
        logger.info("clustering %s: ACC %.4f NMI %.4f", name, scores["acc"], scores["nmi"])
    best = None
    for p in range(m):
        emb, _ = kernel_kmeans_relaxed(kernels[p], k, mkc.dense_max_n)
        scores, pred = evaluate_embedding(
            emb, labels, k, max(1, ext.kmeans_repeats // 4), ext.kmeans_n_init, seed
        )
        if best is None or scores["acc"] > best[0]["acc"]:
            best = (scores, pred, p)
    rows.append({"method": f"best_single_kernel_{best[2]}", **best[0], "seconds": float("nan")})
    first_labels[f"best_single_kernel_{best[2]}"] = best[1]
    return pd.DataFrame(rows), first_labels


def scaling_study(
    mkc: MKCParams, core: CoreParams, scaling: ScalingParams, algorithms: list[str]
) -> pd.DataFrame:
    """Wall time of full vs core MKC on the multi-view generator for each n in ``scaling.sizes``.

    Full MKC runs for n <= full_max_n (exact kernels). The core pipeline (kernels excluded, then
    core construction + MKC on the core + extension to all n) runs for every n: on exact kernels up
    to exact_max_n, above that on per-kernel Nystrom features (never an n x n matrix).
    """
    rng = np.random.default_rng(scaling.seed)
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
    for n in sorted(scaling.sizes):
        x, y = x_all[:n], y_all[:n]
        features = n > scaling.exact_max_n
        start = time.perf_counter()
        if features:
            pilot = np.sort(rng.choice(n, min(scaling.pilot_size, n), replace=False))
            kernels = np.concatenate(
                [
                    nystrom_features(x[:, sl], specs, pilot, np.random.default_rng(0))
                    for sl in slices
                ]
            )
        else:
            kernels = np.concatenate(
                [
                    build_base_kernels(
                        x[:, sl], specs, np.random.default_rng(0), dtype=scaling.kernel_dtype
                    )
                    for sl in slices
                ]
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
            run_full(kernels, scaling.k, mkc, scaling.seed)
            if n <= scaling.full_max_n and not features
            else {}
        )
        for algorithm in algorithms:
            start = time.perf_counter()
            projection = build_core(
                "projection",
                kernels,
                scaling.s,
                np.random.default_rng(0),
                features=features,
                solver=core.solver,
                power_iters=core.power_iters,
            )
            result = run_on_core(algorithm, projection, scaling.k, mkc, scaling.seed)
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
                embedding, y, scaling.k, scaling.kmeans_repeats, 10, scaling.seed
            )
            row["acc_core"] = scores["acc"]
            if algorithm in full:
                reference = full[algorithm]["result"]
                row["full_seconds"] = full[algorithm]["seconds"]
                row["rel_error"] = relative_weight_error(result.weights, reference.weights)
                row["acc_full"] = evaluate_embedding(
                    reference.embedding, y, scaling.k, scaling.kmeans_repeats, 10, scaling.seed
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


def extrapolate_full_seconds(timing: pd.DataFrame, algorithm: str, n: int) -> tuple[float, float]:
    """Full time at n from a log-log fit over the measured sizes (exponent clipped to [2, 3]).

    Returns (seconds, fitted exponent). One measured size: cubic scaling from that point.
    """
    measured = timing[(timing.algorithm == algorithm) & timing.full_seconds.notna()]
    if measured.empty:
        return float("nan"), float("nan")
    if len(measured) == 1:
        slope = 3.0
    else:
        slope = float(np.polyfit(np.log(measured.n), np.log(measured.full_seconds), 1)[0])
    slope = float(np.clip(slope, 2.0, 3.0))
    last = measured.sort_values("n").iloc[-1]
    return float(last.full_seconds * (n / last.n) ** slope), slope
