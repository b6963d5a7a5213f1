"""Baselines: full-scale MKC (the reference weights), the average kernel (A-MKKM) and the best single kernel.

The sampling cores of Liang et al. (ICML 2023, uniform) and the leverage-score core share the projection
core's interface and live beside it in ``core.py``.
"""

from __future__ import annotations

import logging
import time

import numpy as np

from paper_pipelines.common.progress import progress
from paper_pipelines.common.runtime import substream_seed

from .metrics import evaluate_embedding
from .mkc import kernel_kmeans_relaxed, run_mkc
from .parameters import MKCParams

logger = logging.getLogger(__name__)


def run_full(kernels: np.ndarray, k: int, mkc: MKCParams, seed: int) -> dict[str, dict]:
    """Each algorithm on the full n x n kernels: weights, embedding, iterations, wall time.

    ``seed`` is the paper's seed; late fusion's k-means start uses its ``mkc`` sub-stream.
    """
    settings_seed = substream_seed(seed, "mkc")
    out = {}
    for algorithm in progress(mkc.algorithms, desc="full MKC", logger=logger):
        start = time.perf_counter()
        # These are the full kernels, so their own traces are MKKM's tr(K_p) even when
        # core_kernel.kernels.normalize is false (mkc.mkkm refuses a bare unnormalised stack).
        traces = np.einsum("pii->p", kernels) if algorithm == "mkkm" else None
        result = run_mkc(algorithm, kernels, k, mkc.settings(algorithm, settings_seed), traces)
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


def average_kernel(kernels: np.ndarray, k: int, dense_max_n: int) -> np.ndarray:
    """A-MKKM: relaxed kernel k-means on the equal-weight kernel (1/m) sum_p K_p; returns H (n x k)."""
    embedding, _ = kernel_kmeans_relaxed(kernels.mean(axis=0), k, dense_max_n)
    return embedding


def best_single_kernel(
    kernels: np.ndarray,
    labels: np.ndarray,
    k: int,
    dense_max_n: int,
    repeats: int,
    n_init: int,
    seed: int,
) -> tuple[dict[str, float], np.ndarray, int]:
    """The base kernel whose relaxed kernel k-means scores the best ACC (an oracle upper baseline).

    Returns (scores, first labelling, kernel index).
    """
    best = None
    for p in range(kernels.shape[0]):
        emb, _ = kernel_kmeans_relaxed(kernels[p], k, dense_max_n)
        scores, pred = evaluate_embedding(emb, labels, k, repeats, n_init, seed)
        if best is None or scores["acc"] > best[0]["acc"]:
            best = (scores, pred, p)
    return best
