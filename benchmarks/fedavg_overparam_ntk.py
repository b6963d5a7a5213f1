"""Anchors for fedavg_overparam's measures (issue item 6), against library references:

1. the layerwise NTK (no Jacobian materialised) against the explicit J J^T from torch.func.jacrev on a
   small MLP, equal to rtol 1e-5, with the time ratio and the ratio of floats each holds at once as the width grows;
2. the jvp linearisation f_0 + J_0 d against a central finite-difference directional derivative;
3. FedAvg with M = 1 client and tau = 1 against centralised GD (bitwise equal after 20 rounds).

    .venv/bin/python benchmarks/fedavg_overparam_ntk.py [--widths 8 32 128 512] [--points 50]
"""

from __future__ import annotations

import argparse
import time

import torch

from paper_pipelines.pipelines.fedavg_overparam.fedavg import Schedule, fedavg_round, local_update
from paper_pipelines.pipelines.fedavg_overparam.network import NTKMLP, build_network
from paper_pipelines.pipelines.fedavg_overparam.ntk import (
    flat_parameters,
    jacobian_ntk,
    layerwise_ntk,
    linearised_outputs,
    parameter_dict,
)


def _timed(fn):
    fn()  # warm-up: the first torch.func call pays one-off set-up costs
    started = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - started


def ntk_rows(widths: list[int], points: int) -> list[dict]:
    torch.set_default_dtype(torch.float64)
    rows = []
    x = torch.rand(points, 64, generator=torch.Generator().manual_seed(0))
    for width in widths:
        net = NTKMLP(64, width, 1, 2, 1.5, 0.1, "ntk", torch.Generator().manual_seed(width))
        theta = flat_parameters(net)
        fast, t_fast = _timed(lambda: layerwise_ntk(net, theta, x))  # noqa: B023
        ref, t_ref = _timed(lambda: jacobian_ntk(net, theta, x))  # noqa: B023
        # what each holds at once: J is (points x P); the layerwise formula keeps each layer's input
        # and output gradient per point (torch's allocator is invisible to tracemalloc, so count)
        held_layerwise = points * sum(layer.fan_in + layer.weight.shape[0] for layer in net.layers)
        err = float(((fast - ref).abs() / ref.abs().clamp_min(1e-12)).max())
        rows.append(
            {
                "width": width,
                "params": theta.numel(),
                "max_rel_err": err,
                "equal_rtol_1e-5": bool(torch.allclose(fast, ref, rtol=1e-5, atol=1e-10)),
                "time_ratio_jacrev_over_layerwise": t_ref / t_fast,
                "memory_ratio_jacrev_over_layerwise": points * theta.numel() / held_layerwise,
            }
        )
    torch.set_default_dtype(torch.float32)
    return rows


def linearisation_check() -> float:
    torch.set_default_dtype(torch.float64)
    net = NTKMLP(64, 128, 1, 2, 1.5, 0.1, "ntk", torch.Generator().manual_seed(1))
    x = torch.rand(20, 64, generator=torch.Generator().manual_seed(2))
    theta = flat_parameters(net)
    d = torch.randn(theta.shape, generator=torch.Generator().manual_seed(3))
    f = lambda t: torch.func.functional_call(net, parameter_dict(net, t), (x,))  # noqa: E731
    eps = 1e-6
    finite = (f(theta + eps * d) - f(theta - eps * d)) / (2 * eps)
    err = float((linearised_outputs(net, theta, theta + d, x) - f(theta) - finite).abs().max())
    torch.set_default_dtype(torch.float32)
    return err


def one_client_check(rounds: int = 20) -> bool:
    net = build_network("mlp", (1, 8, 8), 64, 1, 2, 1.5, 0.1, "ntk", seed=0)
    gen = torch.Generator().manual_seed(0)
    x, y = torch.rand(40, 1, 8, 8, generator=gen), torch.randint(0, 2, (40,), generator=gen)
    schedule = Schedule(lr=0.5, tau=1)
    fed = central = flat_parameters(net)
    for _ in range(rounds):
        fed, _ = fedavg_round(net, fed, [(x, y)], schedule)
        central = local_update(net, central, x, y, schedule)
    return bool(torch.equal(fed, central))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[8, 32, 128, 512])
    parser.add_argument("--points", type=int, default=50)
    args = parser.parse_args()
    torch.set_num_threads(1)
    print(
        "| width | params | max rel. error | equal (rtol 1e-5) | time jacrev / layerwise | memory jacrev / layerwise |"
    )
    print("|---|---|---|---|---|---|")
    for r in ntk_rows(args.widths, args.points):
        print(f"| {r['width']} | {r['params']} | {r['max_rel_err']:.1e} | {r['equal_rtol_1e-5']} | "
              f"{r['time_ratio_jacrev_over_layerwise']:.1f} | {r['memory_ratio_jacrev_over_layerwise']:.1f} |")  # fmt: skip
    print(f"jvp linearisation vs finite difference, max abs error: {linearisation_check():.1e}")
    print(
        f"FedAvg (M = 1, tau = 1) equals centralised GD bitwise after 20 rounds: {one_client_check()}"
    )


if __name__ == "__main__":
    main()
