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
    return run_mkc(algorithm, core, 10, SETTINGS[algorithm]).weights


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


def _rotated_diagonal_kernels(n: int = 12):
    """K_p = Q D_p Q^T with hand-picked spectra: the top direction of sum_p K_p^2 is not that of sum_p K_p.

    Directions q_0, q_1, q_2 carry (d_1, d_2) = (3, 0), (2, 2), (1, 1): sum K_p^2 ranks them 9 > 8 > 2,
    sum K_p ranks them 4 (q_1) > 3 (q_0) > 2, so a basis from the wrong matrix picks q_1 at s = 1.
    """
    q = np.linalg.qr(np.random.default_rng(3).standard_normal((n, n)))[0]
    tail = 0.05 * np.ones(n - 3)
    d1 = np.concatenate([[3.0, 2.0, 1.0], tail])
    d2 = np.concatenate([[0.0, 2.0, 1.0], tail])
    kernels = np.stack([(q * d) @ q.T for d in (d1, d2)])
    features = np.stack([q * np.sqrt(d) for d in (d1, d2)])  # F_p F_p^T = K_p
    return kernels, features, q, (d1, d2)


@pytest.mark.parametrize(
    "route", ["exact", "randomized", "features"], ids=["exact", "randomized", "features"]
)
def test_basis_is_top_left_singular_vector_of_the_concatenation(route):
    kernels, features, q, _ = _rotated_diagonal_kernels()
    if route == "features":
        basis = concatenated_left_singular_vectors(features, 1, features=True)
    else:
        basis = concatenated_left_singular_vectors(
            kernels, 1, solver=route, oversample=2, power_iters=4
        )
    # |<u, q_0>| = 1: the top left singular vector of [K_1, K_2], not q_1 (top of K_1 + K_2).
    assert abs(float(basis[:, 0] @ q[:, 0])) == pytest.approx(1.0, abs=1e-8)


@pytest.mark.parametrize("features", [False, True], ids=["stack", "features"])
def test_projection_core_values_by_hand(features):
    """s = 2 keeps q_0, q_1: K~_p = U^T K_p U has the eigenvalues (3, 2) and (0, 2); traces are exact."""
    kernels, feats, _, (d1, d2) = _rotated_diagonal_kernels()
    core = projection_core(feats if features else kernels, 2, features=features, solver="exact")
    np.testing.assert_allclose(np.linalg.eigvalsh(core.kernels[0]), [2.0, 3.0], atol=1e-10)
    np.testing.assert_allclose(np.linalg.eigvalsh(core.kernels[1]), [0.0, 2.0], atol=1e-10)
    # MKKM needs the full traces (sum of all of D_p), not the core's 5 and 2.
    np.testing.assert_allclose(core.traces, [d1.sum(), d2.sum()], atol=1e-10)
    np.testing.assert_allclose(core.basis.T @ core.basis, np.eye(2), atol=1e-10)


def test_mkkm_on_a_core_uses_its_exact_traces_by_default(digits_kernels, full_weights):
    """run_mkc on the CoreKernels object is the only easy call, and it is the right one."""
    kernels, _ = digits_kernels
    core = projection_core(kernels, 80)
    by_object = run_mkc("mkkm", core, 10, SETTINGS["mkkm"]).weights
    explicit = run_mkc("mkkm", core.kernels, 10, SETTINGS["mkkm"], traces=core.traces).weights
    np.testing.assert_allclose(by_object, explicit, atol=1e-12)
    assert relative_weight_error(by_object, full_weights["mkkm"]) < 0.01
    # The bare s x s stack has K_ii != 1: refused, the message names the fix.
    with pytest.raises(ValueError, match="CoreKernels"):
        run_mkc("mkkm", core.kernels, 10, SETTINGS["mkkm"])
    # What the refusal prevents: the core's own traces give a far larger error.
    own = np.einsum("pii->p", core.kernels)
    wrong = run_mkc("mkkm", core.kernels, 10, SETTINGS["mkkm"], traces=own).weights
    assert relative_weight_error(wrong, full_weights["mkkm"]) > 0.1


def test_mkkm_refuses_unnormalised_full_kernels_unless_traces_are_given(digits_kernels):
    kernels, _ = digits_kernels
    scaled = 2.0 * kernels  # K_ii = 2
    with pytest.raises(ValueError, match="diagonal is not 1"):
        run_mkc("mkkm", scaled, 10, SETTINGS["mkkm"])
    # Full kernels on purpose: gamma is scale-invariant, so the normalised weights come back.
    on_purpose = run_mkc(
        "mkkm", scaled, 10, SETTINGS["mkkm"], traces=np.einsum("pii->p", scaled)
    ).weights
    np.testing.assert_allclose(on_purpose, run_mkc("mkkm", kernels, 10, {}).weights, atol=1e-10)
