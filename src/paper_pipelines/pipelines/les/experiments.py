"""The two experiments wired from the method modules: Table 1's OOD scores and the LSO runs.

Only orchestration lives here (groups, batching, runs per penalty and replicate, timings); the maths is
in scores.py, baselines.py, lso.py and metrics.py.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

import numpy as np
import pandas as pd
import torch

from paper_pipelines.common.progress import progress
from paper_pipelines.common.runtime import substream, substream_seed

from . import baselines, lso, scores
from .grammar import detokenize, is_valid
from .vae import ExpressionVAE, decode_argmax, encode_means

logger = logging.getLogger(__name__)

DTYPES = {"float64": torch.float64, "float32": torch.float32}


def ood_latents(
    model: ExpressionVAE,
    train_tokens: np.ndarray,
    n: int,
    far_scale: float,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The three groups: encoded training data (posterior means), prior and far draws; plus a disjoint
    set of encoded training points (up to 2000) for the train-distance score."""
    order = rng.permutation(len(train_tokens))
    data = encode_means(model, train_tokens[order[:n]])
    reference = encode_means(model, train_tokens[order[n : n + 2000]])
    d = data.shape[1]
    prior = rng.normal(0.0, model.eps_std, size=(n, d))
    far = rng.normal(0.0, far_scale * model.eps_std, size=(n, d))
    z = np.concatenate([data, prior, far])
    groups = np.repeat(np.array(["data", "prior", "far"]), n)
    return z, groups, reference


def validity(
    decoder: torch.nn.Module, z: np.ndarray, evaluate: lso.Evaluate | None = None
) -> np.ndarray:
    """Whether the argmax decoding of each latent parses (or, with ``evaluate``, is valid for that
    task, e.g. a quality molecule)."""
    tokens = decode_argmax(decoder, torch.as_tensor(z, dtype=torch.float32))
    if evaluate is not None:
        return np.array([evaluate(row)[1] for row in tokens], dtype=bool)
    return np.array([is_valid(detokenize(row)) for row in tokens])


def _batched(
    fn: Callable[[torch.Tensor], dict[str, torch.Tensor]], z: torch.Tensor, batch: int, desc: str
) -> dict[str, np.ndarray]:
    chunks: dict[str, list] = {}
    starts = range(0, len(z), batch)
    for start in progress(starts, desc, total=len(starts), logger=logger):
        for key, value in fn(z[start : start + batch]).items():
            chunks.setdefault(key, []).append(value.detach().double().cpu().numpy())
    return {key: np.concatenate(parts) for key, parts in chunks.items()}


def ood_scores(
    model: ExpressionVAE,
    z: np.ndarray,
    reference: np.ndarray,
    names: list[str],
    decoder_mode: str,
    jacobian: str,
    fd_eps: float,
    dtype: str,
    batch: int,
    k: int,
    uncertainty_models: int,
) -> tuple[dict[str, np.ndarray], dict[str, float], dict[str, int]]:
    """Every requested score per latent, the seconds per latent of each, and singular-G counts."""
    decoder = scores.decoder_view(model.decoder, decoder_mode, DTYPES[dtype])
    zt = torch.as_tensor(z, dtype=DTYPES[dtype])
    values, seconds, singular = {}, {}, {}
    if "les" in names or "polarity" in names:
        started = time.perf_counter()
        slopes: dict[str, np.ndarray] = {}

        def jacobian_scores(chunk: torch.Tensor) -> dict[str, torch.Tensor]:
            slope = scores.local_slope(decoder, chunk, fd_eps, jacobian)
            out = {}
            with torch.no_grad():
                result = scores.les(decoder, chunk, slope)
            out["les"], out["les_singular"] = result.values, result.singular
            if "polarity" in names:
                pol = scores.polarity(slope)
                out["polarity"], out["polarity_singular"] = pol.values, pol.singular
            return out

        slopes = _batched(jacobian_scores, zt, batch, "les: LES and polarity")
        elapsed = (time.perf_counter() - started) / len(z)
        for name in ("les", "polarity"):
            if name in names:
                values[name] = slopes[name]
                singular[name] = int(slopes[f"{name}_singular"].sum())
                # the slope A is shared: each score is charged the whole time (its own cost alone)
                seconds[name] = elapsed
    if "likelihood" in names:
        started = time.perf_counter()
        with torch.no_grad():
            values["likelihood"] = _batched(
                lambda c: {"v": baselines.likelihood(decoder, c)}, zt, batch, "les: likelihood"
            )["v"]
        seconds["likelihood"] = (time.perf_counter() - started) / len(z)
    if "prior" in names:
        started = time.perf_counter()
        values["prior"] = baselines.prior(zt).double().numpy()
        seconds["prior"] = (time.perf_counter() - started) / len(z)
    if "train_distance" in names:
        started = time.perf_counter()
        values["train_distance"] = baselines.train_distance(z, reference, k)
        seconds["train_distance"] = (time.perf_counter() - started) / len(z)
    if "uncertainty" in names:
        started = time.perf_counter()
        mc = scores.decoder_view(model.decoder, "train", DTYPES[dtype])
        values["uncertainty"] = -_batched(
            lambda c: {"v": baselines.decoder_uncertainty(mc, c, uncertainty_models)},
            zt, batch, "les: MC-dropout uncertainty",
        )["v"]  # fmt: skip
        seconds["uncertainty"] = (time.perf_counter() - started) / len(z)
    for name in names:
        singular.setdefault(name, 0)
    return values, seconds, singular


def turbo_settings(lso_params, dim: int) -> lso.TurboSettings:
    """les.lso.turbo as the optimiser's settings (a null failure tolerance: the official default)."""
    block = lso_params.turbo
    failure = block.failure_tolerance or lso.failure_tolerance(dim, lso_params.n_batch)
    return lso.TurboSettings(
        block.initial_length, block.length_min, block.length_max, block.success_tolerance, failure
    )


def lso_runs(
    model: ExpressionVAE,
    train_tokens: np.ndarray,
    train_objective: np.ndarray,
    lso_params,
    score_params,
    seed: int,
    evaluate: lso.Evaluate | None = None,
) -> pd.DataFrame:
    """Every penalty (and the optional bounded L-BFGS and TuRBO) x replicate: one candidate table."""
    eval_decoder = scores.decoder_view(model.decoder, "eval", torch.float64)
    score_decoder = scores.decoder_view(
        model.decoder, score_params.decoder_mode, DTYPES[score_params.dtype]
    )
    methods = list(lso_params.penalties) + (["lbfgs_bounded"] if lso_params.bounded_lbfgs else [])
    methods += ["turbo"] if lso_params.turbo.enabled else []
    grid = [(r, m) for r in range(lso_params.replicates) for m in methods]
    tables = []
    for replicate, method in progress(grid, "les: LSO runs", total=len(grid), logger=logger):
        rng = substream(seed, "lso", replicate)
        pick = rng.choice(len(train_tokens), size=lso_params.n_init, replace=False)
        z_init = encode_means(model, train_tokens[pick])
        y_init = train_objective[pick]
        censor = None
        if lso_params.censor_quantile is not None:
            mc = scores.decoder_view(model.decoder, "train", torch.float64)
            u = baselines.decoder_uncertainty(
                mc, torch.as_tensor(z_init), lso_params.uncertainty_models
            )
            censor = (mc, float(np.quantile(u.numpy(), lso_params.censor_quantile)),
                      lso_params.uncertainty_models)  # fmt: skip
        torch.manual_seed(substream_seed(seed, "lso-torch", replicate))
        started = time.perf_counter()
        singular = 0
        if method == "lbfgs_bounded":
            table = lso.optimise_bounded_lbfgs(
                eval_decoder, z_init, y_init, lso_params.n_rounds, lso_params.n_batch,
                lso_params.z_bound, lso_params.gp_iterations,
                substream_seed(seed, "lbfgs", replicate), evaluate=evaluate,
            )  # fmt: skip
        elif method == "turbo":
            table = lso.optimise_bounded_lbfgs(
                eval_decoder, z_init, y_init, lso_params.n_rounds, lso_params.n_batch,
                lso_params.z_bound, lso_params.gp_iterations,
                substream_seed(seed, "turbo", replicate),
                turbo_settings(lso_params, z_init.shape[1]), evaluate,
            )  # fmt: skip
        else:
            table, singular = lso.optimise(
                eval_decoder, score_decoder, z_init, y_init, method, rng,
                lso_params.n_rounds, lso_params.n_batch, lso_params.ga_steps, lso_params.lr,
                lso_params.alpha, score_params.fd_eps, score_params.jacobian,
                lso_params.gp_iterations, censor, evaluate,
            )  # fmt: skip
        table.insert(0, "method", method)
        table.insert(1, "replicate", replicate)
        table["singular_starts"] = singular
        table["run_seconds"] = time.perf_counter() - started
        logger.info(
            "LSO %s replicate %d: valid %.2f, best %.3f",
            method, replicate, table["valid"].mean(), table["objective"].max(),
        )  # fmt: skip
        tables.append(table)
    return pd.concat(tables, ignore_index=True)
