"""Baselines: full-scale MKC, the average kernel (A-MKKM) and the best single kernel."""

import numpy as np
import pytest

from paper_pipelines.common.runtime import substream_seed
from paper_pipelines.pipelines.core_kernel.baselines import (
    average_kernel,
    best_single_kernel,
    run_full,
)
from paper_pipelines.pipelines.core_kernel.kernels import KernelSpec, build_base_kernels
from paper_pipelines.pipelines.core_kernel.metrics import evaluate_embedding
from paper_pipelines.pipelines.core_kernel.mkc import run_mkc, top_eigen
from paper_pipelines.pipelines.core_kernel.parameters import MKCParams


@pytest.fixture(scope="module")
def blobs():
    """3 kernels on 3 Gaussian blobs (n = 45): two informative RBF kernels and a pure-noise one."""
    rng = np.random.default_rng(2)
    labels = np.repeat([0, 1, 2], 15)
    x = np.array([[0, 0], [5, 0], [0, 5]], dtype=float)[labels] + rng.standard_normal((45, 2))
    informative = build_base_kernels(x, [KernelSpec("rbf", 0.5), KernelSpec("linear")], rng)
    noise = build_base_kernels(rng.standard_normal((45, 2)), [KernelSpec("rbf", 1.0)], rng)
    return np.concatenate([noise, informative]), labels


def test_average_kernel_is_the_top_eigenspace_of_the_mean_kernel(blobs):
    kernels, _ = blobs
    emb = average_kernel(kernels, 3, dense_max_n=200)
    _, vecs = top_eigen(kernels.sum(axis=0) / 3, 3)
    np.testing.assert_allclose(np.linalg.svd(vecs.T @ emb, compute_uv=False), 1.0, atol=1e-8)
    # not the embedding of one kernel alone
    _, first = top_eigen(kernels[0], 3)
    assert np.linalg.svd(first.T @ emb, compute_uv=False).min() < 0.99


def test_best_single_kernel_picks_the_highest_accuracy(blobs):
    # one k-means start per repeat, so the seed matters (seed 0 ranks the kernels differently)
    kernels, labels = blobs
    scores, pred, p = best_single_kernel(kernels, labels, 3, 200, repeats=2, n_init=1, seed=3)
    accs = [evaluate_embedding(top_eigen(kp, 3)[1], labels, 3, 2, 1, 3)[0]["acc"] for kp in kernels]
    assert p == int(np.argmax(accs)) and p != 0  # the noise kernel (index 0) never wins
    assert scores["acc"] == pytest.approx(max(accs))
    assert len(pred) == 45
    # a strictly better later kernel replaces an earlier one, a tie keeps the first
    twice = np.concatenate([kernels[1:2], kernels[1:2]])
    assert best_single_kernel(twice, labels, 3, 200, 2, 1, 3)[2] == 0


def test_run_full_gives_each_algorithm_on_the_full_kernels(blobs):
    kernels, _ = blobs
    # one k-means replicate: late fusion's start then depends on the seed it is given
    mkc = MKCParams(algorithms=["mkkm", "latefusion_discrete"], latefusion={"kmeans_replicates": 1})
    out = run_full(kernels, 3, mkc, seed=1)
    assert list(out) == ["mkkm", "latefusion_discrete"]
    seed = substream_seed(1, "mkc")  # late fusion's k-means start: the "mkc" sub-stream of the seed
    for algorithm, entry in out.items():
        ref = run_mkc(algorithm, kernels, 3, mkc.settings(algorithm, seed))
        np.testing.assert_allclose(entry["result"].weights, ref.weights, atol=1e-12)
        assert entry["seconds"] >= 0.0
    # another stream gives other weights here, so the check above can fail
    other = run_mkc(
        "latefusion_discrete", kernels, 3, mkc.settings("latefusion_discrete", substream_seed(1))
    )
    assert not np.allclose(other.weights, out["latefusion_discrete"]["result"].weights)


def test_run_full_mkkm_uses_the_full_kernels_own_traces(blobs):
    # unnormalised full kernels (K_ii = 3): a bare MKKM call refuses them, run_full passes tr(K_p)
    kernels, _ = blobs
    mkc = MKCParams(algorithms=["mkkm"])
    out = run_full(3.0 * kernels, 3, mkc, seed=0)
    ref = run_mkc("mkkm", kernels, 3, mkc.settings("mkkm"))
    np.testing.assert_allclose(out["mkkm"]["result"].weights, ref.weights, atol=1e-10)
