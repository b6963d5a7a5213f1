"""LES side by side: our batched score against the per-position reference, the cost of each score, and
(when given) anchors on the official pretrained expressions GRU VAE and the official LES class.

    .venv/bin/python benchmarks/les_score_cost.py                     # random-weight official architecture
    .venv/bin/python benchmarks/les_score_cost.py --weights W.pth     # + the AUROC anchor on those weights
    .venv/bin/python benchmarks/les_score_cost.py --weights W.pth --checkout /path/to/OmerRonen/les

``--weights``: e.g. trained_models/expressions_gru_1/w.pth of a checkout of OmerRonen/les;
``--checkout``: that checkout's root, whose les/utils/les.py (the official LES class) is loaded with
stand-ins for the modules it imports but LES does not use. Nothing is fetched; without the paths those
parts are skipped. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
import types
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from paper_pipelines.pipelines.les import baselines, experiments, grammar, metrics, scores  # noqa: E402
from paper_pipelines.pipelines.les.nodes import build_vae  # noqa: E402
from paper_pipelines.pipelines.les.parameters import VAEParams  # noqa: E402


def seconds_per_latent(fn, z: torch.Tensor, repeats: int = 1) -> float:
    started = time.perf_counter()
    for _ in range(repeats):
        fn(z)
    return (time.perf_counter() - started) / (repeats * len(z))


def parity_and_cost(model, n: int, seed: int) -> dict:
    """Batched LES vs the per-position float64 reference, FD vs exact, float32 vs float64, eval vs train."""
    z = torch.randn(n, model.decoder.latent_dim, generator=torch.Generator().manual_seed(seed))
    z64 = z.double()
    dec64 = scores.decoder_view(model.decoder, "eval", torch.float64)
    dec32 = scores.decoder_view(model.decoder, "eval", torch.float32)
    train64 = scores.decoder_view(model.decoder, "train", torch.float64)
    with torch.no_grad():
        slope = scores.local_slope(dec64, z64)
        ours = scores.les(dec64, z64, slope).values.numpy()
        started = time.perf_counter()
        reference = scores.les_reference(dec64(z64), slope)
        reference_seconds = (time.perf_counter() - started) / n
        exact = scores.les(dec64, z64, method="exact").values.numpy()
        single = scores.les(dec32, z).values.double().numpy()
        train = scores.les(train64, z64).values.numpy()
        out = {
            "n_latents": n,
            "max_abs_batched_minus_reference": float(np.max(np.abs(ours - reference))),
            "max_abs_fd_minus_exact": float(np.nanmax(np.abs(ours - exact))),
            "max_abs_float32_minus_float64": float(np.nanmax(np.abs(single - ours))),
            "les_eval_range": [float(np.nanmin(ours)), float(np.nanmax(ours))],
            "les_train_mode_range": [float(np.nanmin(train)), float(np.nanmax(train))],
            "seconds_per_latent": {
                "les_batched_float64": seconds_per_latent(lambda v: scores.les(dec64, v), z64),
                "les_reference_loop_S_and_G_only": reference_seconds,
                "likelihood": seconds_per_latent(lambda v: baselines.likelihood(dec64, v), z64),
                "uncertainty_mc10": seconds_per_latent(
                    lambda v: baselines.decoder_uncertainty(train64, v, 10), z64
                ),
            },
        }
    return out


def auroc_anchor(model, n: int, seed: int) -> dict:
    """The spec's OOD anchor: n generated expressions encoded, n prior and n far latents."""
    rng = np.random.default_rng(seed)
    tokens = grammar.tokenize(grammar.sample_expressions(n + 2000, 15, 19, rng))
    z, groups, reference = experiments.ood_latents(model, tokens, n, 5.0, rng)
    valid = experiments.validity(model.decoder, z)
    names = ["les", "polarity", "likelihood", "prior", "train_distance"]
    values, seconds, singular = experiments.ood_scores(
        model, z, reference, names, "eval", "fd", 1e-4, "float64", 64, 3, 10
    )
    train_values, _, _ = experiments.ood_scores(
        model, z, reference, ["les"], "train", "fd", 1e-4, "float64", 64, 3, 10
    )
    out = {f"auroc_{k}": metrics.validity_auroc(valid, v) for k, v in values.items()}
    out["auroc_les_train_mode"] = metrics.validity_auroc(valid, train_values["les"])
    out["valid_frac"] = {g: float(valid[groups == g].mean()) for g in ("data", "prior", "far")}
    out["singular"] = singular
    out["spec_anchor"] = {"auroc_les": 0.88, "auroc_prior": 0.52, "auroc_polarity": 0.60}
    return out


def official_les(checkout: Path, model, n: int, seed: int) -> dict:
    """The official LES class (les/utils/les.py) on our decoder in float64 with dropout off, against ours."""
    for name, attrs in {
        "les": {},
        "les.nets": {},
        "les.nets.utils": {"get_vae": None},
        "les.utils": {},
        "les.utils.utils": {"get_mu_sigma": None},
    }.items():
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        module.__path__ = []
        sys.modules.setdefault(name, module)
    spec = importlib.util.spec_from_file_location("les_official", checkout / "les/utils/les.py")
    official = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(official)
    decoder = scores.decoder_view(model.decoder, "eval", torch.float64)
    # the official class forces train mode: with dropout off that is eval mode
    decoder.gru.dropout = 0.0

    class Wrapper(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.decoder = decoder
            self.dtype, self.device = torch.float64, torch.device("cpu")

    z = torch.randn(n, decoder.latent_dim, generator=torch.Generator().manual_seed(seed)).double()
    started = time.perf_counter()
    theirs = official.LES(Wrapper())(z).detach().numpy()
    their_seconds = (time.perf_counter() - started) / n
    ours = scores.les(decoder.eval(), z).values.detach().numpy()
    return {
        "max_abs_ours_minus_official": float(np.max(np.abs(ours - theirs))),
        "official_values": [float(v) for v in theirs],
        "official_seconds_per_latent": their_seconds,
        "within_1e-5": bool(np.max(np.abs(ours - theirs)) <= 1e-5),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--weights", type=Path, help="a state dict of the official expressions GRU VAE"
    )
    parser.add_argument("--checkout", type=Path, help="root of a checkout of OmerRonen/les")
    parser.add_argument("--n", type=int, default=16, help="latents for parity and timing")
    parser.add_argument("--n-ood", type=int, default=300, help="latents per OOD group (anchor)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    torch.set_num_threads(1)
    state = (
        torch.load(args.weights, weights_only=True, map_location="cpu") if args.weights else None
    )
    torch.manual_seed(args.seed)
    model = build_vae(VAEParams(), state)
    report = {"weights": str(args.weights) if args.weights else "random (official architecture)"}
    report["parity_and_cost"] = parity_and_cost(model, args.n, args.seed)
    if args.weights:
        report["auroc_anchor"] = auroc_anchor(model, args.n_ood, args.seed)
    else:
        report["auroc_anchor"] = "skipped: no --weights"
    if args.checkout:
        report["official_les"] = official_les(args.checkout, model, min(args.n, 8), args.seed)
    else:
        report["official_les"] = "skipped: no --checkout"
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
