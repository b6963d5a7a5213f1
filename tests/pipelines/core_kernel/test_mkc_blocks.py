"""The MKC building blocks on matrices small enough to check by hand."""

import numpy as np
import pytest

from paper_pipelines.pipelines.core_kernel.core import CoreKernels
from paper_pipelines.pipelines.core_kernel.mkc import (
    combine_kernels,
    kernel_kmeans_relaxed,
    late_fusion,
    late_fusion_beta,
    mkkm,
    mkkm_traces,
    mkkm_weight_update,
    orthogonal_procrustes,
    quadratic_traces,
    reduced_descent_direction,
    run_mkc,
    simple_mkkm,
    simple_mkkm_cost,
    simple_mkkm_gradient,
    simple_mkkm_update,
    top_eigen,
)

DIAG = np.stack([np.diag([3.0, 1.0, 2.0]), np.diag([1.0, 4.0, 0.5])])


def test_combine_kernels_uses_squared_weights():
    np.testing.assert_allclose(
        combine_kernels(DIAG, np.array([0.5, 2.0])), np.diag([0.75 + 4, 0.25 + 16, 0.5 + 2])
    )
    np.testing.assert_allclose(combine_kernels(DIAG, np.array([1.0, 0.0])), DIAG[0])
    np.testing.assert_allclose(combine_kernels(DIAG, np.array([0.0, 1.0])), DIAG[1])
    assert combine_kernels(DIAG.astype(np.float32), np.array([0.5, 0.5])).dtype == np.float32


def test_quadratic_traces_and_relaxed_kmeans_by_hand():
    h = np.eye(3)[:, :2]  # e1, e2
    np.testing.assert_allclose(quadratic_traces(DIAG, h), [4.0, 5.0])
    # top-2 eigenvalues of diag(3, 1, 2) are 3 and 2, eigenvectors e1 and e3
    vecs, objective = kernel_kmeans_relaxed(DIAG[0], 2)
    assert objective == pytest.approx(5.0)
    np.testing.assert_allclose(np.abs(vecs), np.eye(3)[:, [0, 2]], atol=1e-12)


def test_top_eigen_dense_and_lanczos_agree():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((40, 40))
    sym = a @ a.T
    dense_vals, dense_vecs = top_eigen(sym, 3)
    lanczos_vals, lanczos_vecs = top_eigen(sym, 3, dense_max_n=10)  # n = 40 > 10: ARPACK
    np.testing.assert_allclose(lanczos_vals, dense_vals, rtol=1e-9)
    np.testing.assert_allclose(np.abs(lanczos_vecs.T @ dense_vecs), np.eye(3), atol=1e-6)
    assert np.all(np.diff(dense_vals) < 0)  # decreasing order
    np.testing.assert_allclose(dense_vals, np.linalg.eigvalsh(sym)[::-1][:3])
    # float32 input: ARPACK with a looser tolerance, same eigenvalues to float32 precision
    f32_vals, _ = top_eigen(sym.astype(np.float32), 3, dense_max_n=10)
    np.testing.assert_allclose(f32_vals, dense_vals, rtol=1e-4)
    # k >= n - 1 always goes dense (ARPACK needs k < n - 1)
    vals, _ = top_eigen(sym[:4, :4], 3, dense_max_n=1)
    np.testing.assert_allclose(vals, np.linalg.eigvalsh(sym[:4, :4])[::-1][:3])


def test_top_eigen_symmetrises_small_inputs():
    # an upper-triangular input is read as its symmetric part
    upper = np.array([[2.0, 2.0], [0.0, 2.0]])  # symmetric part [[2, 1], [1, 2]]: eigenvalues 3, 1
    vals, _ = top_eigen(upper, 1)
    assert vals[0] == pytest.approx(3.0)


def test_mkkm_weight_update_zeroes_negligible_weights_and_refuses_bad_residuals():
    h = np.array([[1.0], [0.0]])
    kernels = np.stack([np.diag([2.0, 1.0]), np.diag([4.0, 3.0])])
    with pytest.raises(
        ValueError, match="residuals tr\\(K_p\\) - tr\\(H\\^T K_p H\\) must be positive"
    ):
        mkkm_weight_update(h, kernels, traces=[2.0, 7.0])  # a_1 = 0
    # a = (1, 1e20): gamma_2 ~ 1e-20 < eps is set to 0
    gamma = mkkm_weight_update(h, kernels, traces=[3.0, 1e20])
    assert gamma.tolist() == [1.0, 0.0]


def test_mkkm_traces_rules():
    core = CoreKernels("uniform", np.stack([2 * np.eye(3), np.eye(3)]), None)
    np.testing.assert_allclose(mkkm_traces(core, None), [6.0, 3.0])  # a sampled core's own traces
    exact = CoreKernels("projection", np.stack([np.eye(2)]), np.array([10.0]))
    np.testing.assert_allclose(mkkm_traces(exact, None), [10.0])
    with pytest.raises(ValueError, match="either a CoreKernels .* or traces, not both"):
        mkkm_traces(core, np.array([1.0, 1.0]))
    with pytest.raises(ValueError, match=r"one tr\(K_p\) per kernel, shape \(2,\), got \(3,\)"):
        mkkm_traces(DIAG[:, :2, :2], np.ones(3))
    np.testing.assert_allclose(mkkm_traces(np.stack([np.eye(4)] * 2), None), [4.0, 4.0])
    # unit diagonal up to float32 precision (1e-4) passes, 1e-3 off does not
    almost = np.stack([np.eye(3) * (1 + 5e-5)])
    np.testing.assert_allclose(mkkm_traces(almost, None), [3 * (1 + 5e-5)])
    with pytest.raises(ValueError, match=r"K_ii in \[1.001, 1.001\]"):
        mkkm_traces(np.stack([np.eye(3) * 1.001]), None)


def test_mkkm_iteration_limits():
    rng = np.random.default_rng(3)
    feats = rng.standard_normal((3, 20, 4))
    kernels = np.stack([np.corrcoef(f) for f in feats])  # unit diagonal, PSD
    few = mkkm(kernels, 2, tol=0.0, max_iter=4)
    assert few.n_iter == 5 and len(few.objective) == 5  # stops once it > max_iter
    loose = mkkm(kernels, 2, tol=1e9)
    assert loose.n_iter == 3  # never before the third iteration
    # the objective is tr(K_gamma) - tr(H^T K_gamma H) at each step's weights
    full = mkkm(kernels, 2, tol=0.0, max_iter=3)
    kg = combine_kernels(kernels, full.weights)
    h, _ = kernel_kmeans_relaxed(combine_kernels(kernels, full.weights), 2)
    assert full.objective[-1] >= np.trace(kg) - np.trace(h.T @ kg @ h) - 1e-9
    assert np.all(np.diff(full.objective) <= 1e-9)


def test_simple_mkkm_cost_and_gradient_by_hand():
    # K_gamma = diag(3/4 + 1/4*... ): gamma = (1/2, 1/2) -> diag(1, 1.25, 0.625); top-1 = 1.25 at e2
    cost, h = simple_mkkm_cost(DIAG, np.array([0.5, 0.5]), 1)
    assert cost == pytest.approx(1.25)
    grad = simple_mkkm_gradient(DIAG, h, np.array([0.5, 0.5]))
    np.testing.assert_allclose(grad, [2 * 0.5 * 1.0, 2 * 0.5 * 4.0])  # 2 gamma_p tr(H^T K_p H)


def test_reduced_descent_direction_by_hand():
    # g = grad / ||grad||; reference mu = argmax gamma = 0; d_p = -(g_p - g_0), d_0 = -sum of the others
    gamma = np.array([0.5, 0.3, 0.2])
    desc, mu = reduced_descent_direction(gamma, np.array([3.0, 1.0, 2.0]))
    np.testing.assert_allclose(desc, np.array([-3.0, 2.0, 1.0]) / np.sqrt(14))
    # a weight at 0 whose reduced gradient is positive cannot decrease further: its d_p is 0
    desc, mu = reduced_descent_direction(np.array([0.0, 0.6, 0.4]), np.array([3.0, 1.0, 2.0]))
    assert mu == 1
    np.testing.assert_allclose(desc, np.array([0.0, 1.0, -1.0]) / np.sqrt(14))


def test_orthogonal_procrustes_and_beta_by_hand():
    # argmax_W tr(W^T T) for T = diag(2, -3) is diag(1, -1)
    np.testing.assert_allclose(orthogonal_procrustes(np.diag([2.0, -3.0])), np.diag([1.0, -1.0]))
    partitions = np.stack([np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]])])
    rotations = np.stack([np.eye(2), np.eye(2)])
    # alignments tr(H*^T H_p W_p) with H* = I: 2 and 0 -> beta = (1, 0)
    np.testing.assert_allclose(late_fusion_beta(partitions, rotations, np.eye(2)), [1.0, 0.0])
    consensus = np.array([[0.6, 0.8], [0.8, -0.6]])
    align = np.array([0.0, 1.6])  # tr(C^T I) = 0, tr(C^T swap) = 1.6
    expected = align / np.linalg.norm(align)
    np.testing.assert_allclose(late_fusion_beta(partitions, rotations, consensus), expected)


def test_late_fusion_and_dispatch_errors():
    with pytest.raises(
        ValueError, match="late fusion variant must be 'continuous' or 'discrete', got 'soft'"
    ):
        late_fusion(np.stack([np.eye(3)]), 2, variant="soft")
    with pytest.raises(
        ValueError, match="unknown MKC algorithm 'kmeans'; allowed: mkkm, simplemkkm"
    ):
        run_mkc("kmeans", np.stack([np.eye(3)]), 2, {})


def test_mkkm_on_identical_kernels_by_hand():
    # K_1 = K_2 = diag(3, 1, 2) with traces 6, k = 1: H = e1, a_p = 6 - 3 -> gamma = (1/2, 1/2);
    # objective sum gamma_p^2 tr(K_p) - tr(H^T K_gamma H) = 3 - 1.5 = 1.5 at every step.
    same = np.stack([DIAG[0], DIAG[0]])
    result = mkkm(same, 1, traces=np.array([6.0, 6.0]))
    np.testing.assert_allclose(result.weights, [0.5, 0.5])
    np.testing.assert_allclose(result.objective, 1.5)
    assert result.n_iter == 3  # the relative change is 0 at the first check (iteration 3)
    # tol = 0: a change of exactly 0 is not below it, so it runs until it > max_iter
    assert mkkm(same, 1, tol=0.0, max_iter=4, traces=np.array([6.0, 6.0])).n_iter == 5


def _relative_changes(objective):
    objective = np.asarray(objective)
    return np.abs(np.diff(objective)) / np.abs(objective[1:])


def test_mkkm_and_late_fusion_stop_at_the_first_small_relative_change():
    # Stopping rule of both MATLAB loops: from iteration 3 on, stop once |o_t - o_{t-1}| / |o| < tol.
    rng = np.random.default_rng(5)
    feats = rng.standard_normal((3, 30, 3)) * np.array([1.0, 0.3, 0.1])
    kernels = np.stack([np.corrcoef(f) for f in feats])
    mk = mkkm(kernels, 2, tol=1e-6, max_iter=200)
    # MKKM divides by the earlier objective, late fusion by the later one
    rel = np.abs(np.diff(mk.objective)) / np.abs(np.asarray(mk.objective)[:-1])
    assert mk.n_iter > 3 and rel[-1] < 1e-6 and np.all(rel[1:-1] >= 1e-6)
    lf = late_fusion(kernels, 2, tol=1e-9, max_iter=500)
    rel = _relative_changes(lf.objective)
    assert lf.n_iter > 3 and rel[-1] < 1e-9 and np.all(rel[1:-1] >= 1e-9)


def test_mkkm_refusal_names_the_fix():
    with pytest.raises(ValueError) as err:
        mkkm_traces(np.stack([2 * np.eye(3)]), None)
    message = str(err.value)
    assert (
        ") without traces: for a core kernel pass the CoreKernels object itself (run_mkc("
        in message
    )
    assert "for full kernels normalise them first (kernels.knorm; " in message
    assert "core_kernel.kernels.normalize: true) or pass traces=" in message


def test_golden_section_finds_the_line_minimum_when_the_full_step_overshoots():
    # n = 1: J(gamma) = gamma_1^2 * 1 + gamma_2^2 * 3, minimised on the simplex at (3/4, 1/4), J = 3/4.
    # From (0.7, 0.3) a step of max_step = 1 overshoots, so the golden section alone finds the minimum.
    kernels = np.array([[[1.0]], [[3.0]]])
    gamma = np.array([0.7, 0.3])
    cost, h = simple_mkkm_cost(kernels, gamma, 1)
    grad = simple_mkkm_gradient(kernels, h, gamma)
    new, new_cost, calls = simple_mkkm_update(
        kernels, gamma, grad, cost, 1, golden_tol=1e-6, max_step=1.0
    )
    np.testing.assert_allclose(new, [0.75, 0.25], atol=1e-5)
    assert new_cost == pytest.approx(0.75, abs=1e-9) and new.sum() == pytest.approx(1.0)
    assert calls > 2


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_lanczos_path_is_the_documented_eigsh_call(dtype):
    # eigs(K, k, 'LA') with a fixed start vector (default_rng(0)) and the tolerance the precision
    # allows (1e-10 in float64, 1e-6 in float32): bit for bit, in decreasing order.
    from scipy.sparse.linalg import eigsh

    a = np.random.default_rng(0).standard_normal((40, 40))
    sym = (a @ a.T).astype(dtype)
    v0 = np.random.default_rng(0).standard_normal(40).astype(dtype)
    tol = 1e-10 if dtype == np.float64 else 1e-6
    ref_vals, ref_vecs = eigsh(sym, k=3, which="LA", v0=v0, tol=tol)
    vals, vecs = top_eigen(sym, 3, dense_max_n=10)
    np.testing.assert_array_equal(vals, ref_vals[::-1])
    np.testing.assert_array_equal(vecs, ref_vecs[:, ::-1])
    # a given start vector is used as is
    other = np.random.default_rng(7).standard_normal(40)
    ref_other = eigsh(sym, k=3, which="LA", v0=other.astype(dtype), tol=tol)[0]
    np.testing.assert_array_equal(top_eigen(sym, 3, dense_max_n=10, v0=other)[0], ref_other[::-1])


def test_run_mkc_passes_the_settings_block():
    rng = np.random.default_rng(3)
    kernels = np.stack([np.corrcoef(f) for f in rng.standard_normal((3, 20, 4))])
    assert run_mkc("mkkm", kernels, 2, {"tol": 0.0, "max_iter": 4}).n_iter == 5
    assert run_mkc("simplemkkm", kernels, 2, {"max_iter": 1}).n_iter == 1
    assert run_mkc("latefusion", kernels, 2, {"tol": 0.0, "max_iter": 3}).n_iter == 4
    assert run_mkc("latefusion_discrete", kernels, 2, {"tol": 0.0, "max_iter": 3}).n_iter == 4


def test_golden_section_with_the_default_step_and_tolerance():
    # Same J as above; max_step 0.1 takes one full step, the next (to the simplex edge) overshoots,
    # and the golden section (default tolerance 1e-3 of the step) ends near the minimum (3/4, 1/4).
    kernels = np.array([[[1.0]], [[3.0]]])
    gamma = np.array([0.7, 0.3])
    cost, h = simple_mkkm_cost(kernels, gamma, 1)
    grad = simple_mkkm_gradient(kernels, h, gamma)
    new, new_cost, _ = simple_mkkm_update(kernels, gamma, grad, cost, 1)
    np.testing.assert_allclose(new, [0.75, 0.25], atol=1e-3)
    assert new_cost < cost and new_cost == pytest.approx(0.75, abs=1e-5)


def test_no_descent_direction_leaves_the_weights():
    # equal reduced gradients: nothing to move, no cost evaluated
    kernels = np.array([[[2.0]], [[2.0]]])
    gamma = np.array([0.5, 0.5])
    new, cost, calls = simple_mkkm_update(kernels, gamma, np.array([2.0, 2.0]), 1.0, 1)
    assert new.tolist() == [0.5, 0.5] and cost == 1.0 and calls == 0


def test_simple_mkkm_iteration_count_and_objective_log():
    rng = np.random.default_rng(3)
    kernels = np.stack([np.corrcoef(f) for f in rng.standard_normal((3, 20, 4))])
    one = simple_mkkm(kernels, 2, max_iter=1)
    assert one.n_iter == 1 and len(one.objective) == 2  # the start and one step
    cost, _ = simple_mkkm_cost(kernels, np.full(3, 1 / 3), 2)
    assert one.objective[0] == pytest.approx(cost)
    assert one.objective[1] == pytest.approx(simple_mkkm_cost(kernels, one.weights, 2)[0])
    # identical kernels: the first step changes nothing (change 0 < tol), so it stops at once
    same = simple_mkkm(np.stack([kernels[0]] * 3), 2)
    assert same.n_iter == 1 and same.weights.tolist() == [1 / 3] * 3


def _three_kernels():
    rng = np.random.default_rng(3)
    return np.stack([np.corrcoef(f) for f in rng.standard_normal((3, 20, 4))])


@pytest.mark.parametrize("variant", ["continuous", "discrete"])
def test_late_fusion_defaults_and_iteration_rules(variant):
    kernels = _three_kernels()
    default = late_fusion(kernels, 2, variant=variant)
    explicit = late_fusion(
        kernels, 2, variant, tol=1e-4, max_iter=100, seed=0, kmeans_replicates=30
    )
    np.testing.assert_array_equal(default.weights, explicit.weights)
    assert default.objective == explicit.objective
    # the relative change is first checked at iteration 3
    assert late_fusion(kernels, 2, variant=variant, tol=1e9).n_iter == 3
    # identical kernels: the objective stops changing, but a change of 0 is not below tol = 0
    same = np.stack([kernels[0]] * 3)
    assert late_fusion(same, 2, variant=variant, tol=0.0, max_iter=5).n_iter == 6


def test_mkkm_defaults():
    kernels = _three_kernels()
    default = mkkm(kernels, 2)
    explicit = mkkm(kernels, 2, tol=1e-4, max_iter=50, traces=None, dense_max_n=200)
    np.testing.assert_array_equal(default.weights, explicit.weights)
