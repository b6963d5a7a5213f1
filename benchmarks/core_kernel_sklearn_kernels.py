"""Our in-place base-kernel stack vs scikit-learn's kernel functions, side by side (issue 13, item 8).

``kernels.build_base_kernels`` writes each n x n kernel straight into its slot of the (m, n, n) stack;
scikit-learn's ``rbf_kernel`` / ``polynomial_kernel`` / ``linear_kernel`` return a new n x n array that
must then be copied into the stack (and float32 input takes its chunked float64-upcast distance path).
Each variant runs in a fresh subprocess so its peak resident memory (ru_maxrss) is its own; the figure
reported is the peak above the process's footprint once the data are generated.

    .venv/bin/python benchmarks/core_kernel_sklearn_kernels.py                 # n = 20 000, float32, RBF
    .venv/bin/python benchmarks/core_kernel_sklearn_kernels.py --n 1500 --dtype float64 --kinds rbf polynomial linear
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def run_variant(variant: str, n: int, dtype: str, kinds: list[str]) -> dict:
    import numpy as np
    from sklearn.metrics.pairwise import linear_kernel, polynomial_kernel, rbf_kernel
    from threadpoolctl import threadpool_limits

    from paper_pipelines.pipelines.core_kernel.data import make_multiview_blobs
    from paper_pipelines.pipelines.core_kernel.kernels import (
        KernelSpec,
        _kcenter_inplace,
        _knorm_inplace,
        _symmetrize_inplace,
        build_base_kernels,
        median_sq_distance,
    )

    # One view of the benchmark's generator (8 informative + 4 noise columns).
    x, _, slices = make_multiview_blobs(n, 10, 1, 8, 3.0, [1.0], 4, np.random.default_rng(0))
    specs = [KernelSpec(kind) for kind in kinds]
    base = _peak_mb()
    with threadpool_limits(1):
        start = time.perf_counter()
        if variant == "ours":
            stack = build_base_kernels(x, specs, np.random.default_rng(0), dtype=dtype)
        else:
            med = median_sq_distance(x, np.random.default_rng(0))
            xd = np.asarray(x, dtype=dtype)
            stack = np.empty((len(specs), n, n), dtype=dtype)
            for p, spec in enumerate(specs):
                if spec.kind == "rbf":
                    stack[p] = rbf_kernel(xd, gamma=1.0 / (spec.bandwidth_factor * med))
                elif spec.kind == "polynomial":
                    stack[p] = polynomial_kernel(
                        xd, degree=spec.degree, gamma=1.0 / xd.shape[1], coef0=spec.offset
                    )
                else:
                    stack[p] = linear_kernel(xd)
                _symmetrize_inplace(stack[p])
                _kcenter_inplace(stack[p])
                _knorm_inplace(stack[p])
        seconds = time.perf_counter() - start
    stack_mb = stack.nbytes / 2**20
    return {
        "variant": variant,
        "n": n,
        "dtype": dtype,
        "kinds": kinds,
        "seconds": round(seconds, 2),
        "stack_mb": round(stack_mb),
        "peak_above_data_mb": round(_peak_mb() - base),
        "checksum": float(np.float64(stack[:, :50, :50].sum())),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--kinds", nargs="+", default=["rbf"])
    parser.add_argument("--variant", choices=["ours", "sklearn"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.variant:
        print(json.dumps(run_variant(args.variant, args.n, args.dtype, args.kinds)))
        return
    for variant in ("ours", "sklearn"):
        cmd = [sys.executable, __file__, "--variant", variant, "--n", str(args.n)]
        cmd += ["--dtype", args.dtype, "--kinds", *args.kinds]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
        print(out.strip().splitlines()[-1])


if __name__ == "__main__":
    main()
