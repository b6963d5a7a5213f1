"""One-off: the exact full method against the projection core at n = 10 000, all three algorithms, measured.

The scaling benchmark (``core_kernel_full_vs_core.py``) extrapolates full MKC above n = 5000. This one
runs the full method on the exact n x n kernels at n (10 000 by default) for MKKM, SimpleMKKM and late
fusion, so every time ratio it prints is measured, none extrapolated. Same generator, kernels and
settings as the pipeline's scaling study (4 views, one RBF kernel each, centred and normalised, float32,
s = 80, one BLAS thread).

The core side is profiled against its floor, one pass over the m kernels (K_p @ V for an n x s block V,
what any construction that looks at every kernel entry must pay at least once): the randomized SVD basis
(2 * power_iters + 1 such passes of s + oversample columns), the projection K~_p = U^T K_p U (one pass),
MKC on the s x s core, and the extension to all n points. The basis is the same for every algorithm
(deterministic), so it is built once and its time is added to each algorithm's core time, as the pipeline
would spend it. ``--power-iters`` lists extra subspace-iteration counts whose weight error and core time
are reported beside the default (3), for the question of what a cheaper basis costs in accuracy.

    /work/bin/heavy .venv/bin/python benchmarks/core_kernel_exact_10k.py --json /tmp/ck10k.json
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import time

import numpy as np
from threadpoolctl import threadpool_limits

from paper_pipelines.common.runtime import substream, substream_seed
from paper_pipelines.pipelines.core_kernel.core import (
    CoreKernels,
    concatenated_left_singular_vectors,
)
from paper_pipelines.pipelines.core_kernel.data import make_multiview_blobs
from paper_pipelines.pipelines.core_kernel.extension import projection_embedding
from paper_pipelines.pipelines.core_kernel.kernels import KernelSpec, build_base_kernels
from paper_pipelines.pipelines.core_kernel.metrics import evaluate_embedding, relative_weight_error
from paper_pipelines.pipelines.core_kernel.mkc import run_mkc
from paper_pipelines.pipelines.core_kernel.parameters import MKCParams, ScalingParams

logger = logging.getLogger("core_kernel_exact_10k")


def _load() -> str:
    return "/".join(f"{v:.1f}" for v in os.getloadavg())


def _timed(fn, *args, **kwargs):
    start = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - start


def build_kernels(n: int, scaling: ScalingParams, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """The scaling study's exact kernels at n (same generator draws and sub-streams)."""
    x, y, slices = make_multiview_blobs(
        n,
        scaling.k,
        scaling.views,
        scaling.dim,
        scaling.separation,
        scaling.noise,
        scaling.irrelevant_dims,
        substream(seed, "scaling"),
    )
    specs = [KernelSpec("rbf", t) for t in scaling.bandwidth_factors]
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
    return kernels, y


def project(kernels: np.ndarray, basis: np.ndarray) -> np.ndarray:
    """K~_p = U^T K_p U, as ``core.projection_core`` computes it (one pass over the kernels)."""
    cast = basis.astype(kernels.dtype)
    core = (cast.T @ (kernels @ cast)).astype(np.float64)
    return 0.5 * (core + np.swapaxes(core, 1, 2))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=10000)
    parser.add_argument("--s", type=int, default=80)
    parser.add_argument("--algorithms", nargs="+", default=["mkkm", "latefusion", "simplemkkm"])
    parser.add_argument("--power-iters", type=int, nargs="*", default=[0, 1])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")
    mkc = MKCParams(algorithms=args.algorithms)
    scaling = ScalingParams(sizes=[args.n], s=args.s, kernel_dtype="float32")
    k = scaling.k
    out: dict = {"n": args.n, "s": args.s, "threads": args.threads, "load_start": _load()}
    with threadpool_limits(args.threads):
        (kernels, y), out["kernel_seconds"] = _timed(build_kernels, args.n, scaling, args.seed)
        logger.info("kernels %s in %.1f s, load %s", kernels.shape, out["kernel_seconds"], _load())
        kmeans_seed = substream_seed(args.seed, "kmeans")
        rng = np.random.default_rng(0)
        block = rng.standard_normal((args.n, args.s)).astype(kernels.dtype)
        _, out["floor_pass_seconds"] = _timed(lambda: kernels @ block)
        logger.info("floor: one pass K_p @ V (n x %d) %.2f s", args.s, out["floor_pass_seconds"])

        bases = {}
        for q in sorted({3, *args.power_iters}):
            bases[q], seconds = _timed(
                concatenated_left_singular_vectors,
                kernels,
                args.s,
                power_iters=q,
                seed=substream_seed(args.seed, "scaling", "projection"),
            )
            out[f"basis_seconds_q{q}"] = seconds
            logger.info("basis q=%d: %.2f s", q, seconds)
        cores = {}
        for q, basis in bases.items():
            cores[q], seconds = _timed(project, kernels, basis)
            out[f"projection_seconds_q{q}"] = seconds
        traces = np.einsum("pii->p", kernels).astype(np.float64)

        rows = []
        for algorithm in args.algorithms:
            settings = mkc.settings(algorithm, substream_seed(args.seed, "mkc"))
            load_before = _load()
            full, full_seconds = _timed(run_mkc, algorithm, kernels, k, settings)
            logger.info(
                "full %s: %.1f s, %d iterations, load %s -> %s",
                algorithm,
                full_seconds,
                full.n_iter,
                load_before,
                _load(),
            )
            for q, core_kernels in cores.items():
                core = CoreKernels("projection", core_kernels, traces, basis=bases[q])
                result, mkc_seconds = _timed(run_mkc, algorithm, core, k, settings)
                if algorithm == "latefusion":
                    embedding, ext_seconds = _timed(np.matmul, core.basis, result.embedding)
                else:
                    embedding, ext_seconds = _timed(
                        projection_embedding, core.basis, core.kernels, result.weights, k
                    )
                core_seconds = (
                    out[f"basis_seconds_q{q}"]
                    + out[f"projection_seconds_q{q}"]
                    + mkc_seconds
                    + ext_seconds
                )
                row = {
                    "algorithm": algorithm,
                    "power_iters": q,
                    "full_seconds": full_seconds,
                    "full_iterations": full.n_iter,
                    "core_seconds": core_seconds,
                    "basis_seconds": out[f"basis_seconds_q{q}"],
                    "projection_seconds": out[f"projection_seconds_q{q}"],
                    "core_mkc_seconds": mkc_seconds,
                    "extension_seconds": ext_seconds,
                    "time_ratio_measured": full_seconds / core_seconds,
                    "core_over_floor": core_seconds / out["floor_pass_seconds"],
                    "rel_error": relative_weight_error(result.weights, full.weights),
                    "linf_error": float(np.max(np.abs(result.weights - full.weights))),
                    "weights_full": full.weights.tolist(),
                    "weights_core": result.weights.tolist(),
                    "load_during_full": load_before,
                }
                row["acc_core"] = evaluate_embedding(embedding, y, k, 3, 10, kmeans_seed)[0]["acc"]
                rows.append(row)
                logger.info(
                    "%s q=%d: core %.2f s (basis %.2f, projection %.2f, mkc %.3f, ext %.3f), "
                    "ratio %.2f, error %.3g",
                    algorithm,
                    q,
                    core_seconds,
                    row["basis_seconds"],
                    row["projection_seconds"],
                    mkc_seconds,
                    ext_seconds,
                    row["time_ratio_measured"],
                    row["rel_error"],
                )
            if args.json:  # write as we go: the full SimpleMKKM run is the long one
                with open(args.json, "w") as handle:
                    json.dump({**out, "rows": rows, "load_end": _load()}, handle, indent=1)
    out["load_end"] = _load()
    for row in rows:
        print(
            f"{row['algorithm']:>10} q={row['power_iters']} full {row['full_seconds']:8.1f} s  "
            f"core {row['core_seconds']:6.2f} s  ratio {row['time_ratio_measured']:7.1f}  "
            f"error {row['rel_error']:.2e}  core/floor {row['core_over_floor']:.1f}"
        )
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({**out, "rows": rows}, handle, indent=1)


if __name__ == "__main__":
    main()
