"""Core-kernel constructions, the large-scale extension and the evaluation, on small cases."""

import numpy as np
import pytest
from threadpoolctl import threadpool_limits

from paper_pipelines.pipelines.core_kernel.core import (
    build_core,
    concatenated_left_singular_vectors,
    leverage_probabilities,
    projection_core,
)
from paper_pipelines.pipelines.core_kernel.data import load_sklearn
from paper_pipelines.pipelines.core_kernel.extension import nystrom_embedding, projection_embedding
from paper_pipelines.pipelines.core_kernel.kernels import KernelSpec, build_base_kernels
from paper_pipelines.pipelines.core_kernel.metrics import (
    clustering_accuracy,
    purity,
    relative_weight_error,
)
from paper_pipelines.pipelines.core_kernel.mkc import run_mkc, top_eigen

SETTINGS = {"mkkm": {}, "simplemkkm": {"tol": 1e-5}, "latefusion": {}}


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    """One BLAS thread, as the pipeline runs (the shared machine is oversubscribed otherwise)."""
    with threadpool_limits(1):
        yield


@pytest.fixture(scope="module")
def digits_kernels():
    rng = np.random.default_rng(0)
    x, y = load_sklearn("digits", 300, rng)
    specs = [KernelSpec("rbf", 0.5), KernelSpec("rbf", 2.0), KernelSpec("linear")]
    return build_base_kernels(x, specs, rng), y


@pytest.fixture(scope="module")
def full_weights(digits_kernels):
    kernels, _ = digits_kernels
    return {a: run_mkc(a, kernels, 10, s).weights for a, s in SETTINGS.items()}


def _core_weights(core, algorithm):
    traces = core.traces if algorithm == "mkkm" else None
    return run_mkc(algorithm, core.kernels, 10, SETTINGS[algorithm], traces=traces).weights


def test_accuracy_is_permutation_invariant_and_purity_by_hand():
    truth = np.array([0, 0, 1, 1, 2, 2])
    assert clustering_accuracy(truth, np.array([2, 2, 0, 0, 1, 1])) == 1.0
    # clusters {0,0,1}, {1,2,2}: ACC 4/6 under the best map, purity (2 + 2) / 6.
    pred = np.array([0, 0, 0, 1, 1, 1])
    assert clustering_accuracy(truth, pred) == pytest.approx(4 / 6)
    assert purity(truth, pred) == pytest.approx(4 / 6)
    assert relative_weight_error(np.array([0.6, 0.4]), np.array([0.6, 0.8])) == pytest.approx(0.4)


def test_randomized_basis_matches_exact_top_subspace(digits_kernels):
    kernels, _ = digits_kernels
    exact = concatenated_left_singular_vectors(kernels, 20, solver="exact")
    approx = concatenated_left_singular_vectors(kernels, 20, solver="randomized", power_iters=4)
    np.testing.assert_allclose(approx.T @ approx, np.eye(20), atol=1e-10)
    # Principal angles: the top-10 exact directions lie in the randomized subspace.
    overlap = np.linalg.svd(exact[:, :10].T @ approx, compute_uv=False)
    assert overlap.min() > 0.999


@pytest.mark.parametrize("algorithm", ["mkkm", "simplemkkm", "latefusion"])
def test_full_rank_projection_core_reproduces_full_weights(digits_kernels, full_weights, algorithm):
    """s = n: the core kernels are orthogonal rotations of the full ones, so weights agree exactly."""
    kernels, _ = digits_kernels
    core = projection_core(kernels, kernels.shape[1], solver="exact")
    np.testing.assert_allclose(_core_weights(core, algorithm), full_weights[algorithm], atol=1e-6)


@pytest.mark.parametrize("algorithm", ["mkkm", "simplemkkm", "latefusion"])
def test_projection_error_shrinks_with_s(digits_kernels, full_weights, algorithm):
    kernels, _ = digits_kernels
    errors = [
        relative_weight_error(
            _core_weights(projection_core(kernels, s), algorithm), full_weights[algorithm]
        )
        for s in (20, 40, 80)
    ]
    assert errors[0] >= errors[1] >= errors[2]
    assert errors[2] < 0.01  # (1 + eps) with eps < 1% at s = 80 on n = 300


def test_projection_beats_uniform_sampling_of_larger_size(digits_kernels, full_weights):
    """Spec check 3 at fast scale: projection s = 20 beats uniform s = 80 (mean of 5 seeds), SimpleMKKM."""
    kernels, _ = digits_kernels
    proj = relative_weight_error(
        _core_weights(projection_core(kernels, 20), "simplemkkm"), full_weights["simplemkkm"]
    )
    uniform = np.mean(
        [
            relative_weight_error(
                _core_weights(
                    build_core("uniform", kernels, 80, np.random.default_rng(seed)), "simplemkkm"
                ),
                full_weights["simplemkkm"],
            )
            for seed in range(5)
        ]
    )
    assert proj < uniform


def test_leverage_probabilities_are_a_distribution():
    basis = np.linalg.qr(np.random.default_rng(0).standard_normal((50, 5)))[0]
    probs = leverage_probabilities(basis, 0.5)
    assert probs.sum() == pytest.approx(1.0)
    assert probs.min() >= 0.5 / 50


def test_core_size_larger_than_n_fails(digits_kernels):
    kernels, _ = digits_kernels
    for method in ("projection", "uniform", "leverage"):
        with pytest.raises(ValueError, match="larger than the number of points"):
            build_core(method, kernels, 301, np.random.default_rng(0))


def test_extensions_recover_exact_eigenvectors_when_nothing_is_dropped(digits_kernels):
    kernels, _ = digits_kernels
    weights = np.array([0.5, 0.3, 0.2])
    _, exact = top_eigen(np.tensordot(weights**2, kernels, axes=1), 10)
    n = kernels.shape[1]
    nystrom = nystrom_embedding(kernels, np.arange(n), weights, 10)
    core = projection_core(kernels, n, solver="exact")
    projected = projection_embedding(core.basis, core.kernels, weights, 10)
    for emb in (nystrom, projected):
        # Same subspace: singular values of exact^T emb are all 1.
        np.testing.assert_allclose(np.linalg.svd(exact.T @ emb, compute_uv=False), 1.0, atol=1e-6)
