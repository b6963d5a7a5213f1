"""Full vs core-kernel MKC for MKKM, SimpleMKKM and late fusion at n in {2k, 5k, 10k, 20k}, in one run.

For every n: exact base kernels of the multi-view generator (4 views, one RBF kernel each, centred and
normalised, float32 by default to fit n = 20 000 in memory), then each algorithm on the full n x n
kernels and on the projection core kernel (size s), reporting the wall-time ratio and the relative
weight error ||gamma_core - gamma_full|| / ||gamma_full||. Full runs above --full-max-n are skipped
(their time is then extrapolated by the pipeline's power-law fit). Kernel construction is timed
separately; both sides need it.

    .venv/bin/python benchmarks/core_kernel_full_vs_core.py                    # the issue's sizes
    .venv/bin/python benchmarks/core_kernel_full_vs_core.py --sizes 2000 5000  # quicker
"""

from __future__ import annotations

import argparse
import json
import logging
import time

from threadpoolctl import threadpool_limits

from paper_pipelines.pipelines.core_kernel.metrics import extrapolate_full_seconds
from paper_pipelines.pipelines.core_kernel.parameters import CoreParams, MKCParams, ScalingParams
from paper_pipelines.pipelines.core_kernel.study import scaling_study


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[2000, 5000, 10000, 20000])
    parser.add_argument("--full-max-n", type=int, default=20000)
    parser.add_argument("--s", type=int, default=80, help="core size")
    parser.add_argument("--algorithms", nargs="+", default=["mkkm", "simplemkkm", "latefusion"])
    parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0, help="the paper's seed (core_kernel.seed)")
    parser.add_argument("--json", default=None, help="also write the table to this JSON file")
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    mkc = MKCParams(algorithms=args.algorithms)
    core = CoreParams(default_s=args.s, sizes_projection=[args.s], sizes_sampling=[args.s], draws=1)
    scaling = ScalingParams(
        sizes=args.sizes,
        full_max_n=args.full_max_n,
        exact_max_n=max(args.sizes),
        s=args.s,
        kmeans_repeats=3,
        kernel_dtype=args.dtype,
    )
    start = time.perf_counter()
    with threadpool_limits(args.threads):
        table = scaling_study(mkc, core, scaling, args.algorithms, args.seed)
    table["time_ratio"] = table.full_seconds / table.core_seconds
    for row in table.itertuples():
        if row.full_seconds != row.full_seconds:  # NaN: full skipped, extrapolate
            seconds, exponent = extrapolate_full_seconds(table, row.algorithm, row.n)
            table.loc[row.Index, "time_ratio_extrapolated"] = seconds / row.core_seconds
    print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"total wall time {time.perf_counter() - start:.0f} s")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump(table.to_dict(orient="records"), handle, indent=1)


if __name__ == "__main__":
    main()
