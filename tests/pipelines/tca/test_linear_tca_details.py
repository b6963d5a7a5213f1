"""LinearTCA's smaller pieces on hand-checkable inputs: regularised eigen-solver, fall-backs, checks."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.tca.linear_tca import (
    class_proportions,
    coral_loss,
    linear_tca,
    solve_w_eig,
)
from paper_pipelines.pipelines.tca.metrics import (
    accuracy_of_logits,
    peak_tensor_bytes,
    state_fingerprint,
)
from tests.pipelines.tca.problems import linear_head_problem


def _problem(n: int = 120, d: int = 4, c: int = 3, seed: int = 0):
    return linear_head_problem(n, d, c, seed, random_bias=True)


def test_eig_solver_regularises_a_singular_target_by_hand():
    """C_t = diag(4, 0), C_s = I, eps = 0.1: shrinkage eps tr(C)/d = 0.2 for C_t and 0.1 for C_s, so
    W = diag(sqrt(1.1 / 4.2), sqrt(1.1 / 0.2)), and only the target is flagged singular."""
    info: dict = {}
    W = solve_w_eig(torch.diag(torch.tensor([4.0, 0.0])), torch.eye(2), eps=0.1, info=info)
    expected = torch.diag(torch.tensor([math.sqrt(1.1 / 4.2), math.sqrt(1.1 / 0.2)]))
    assert torch.allclose(W, expected, atol=1e-6)
    assert W.dtype == torch.float32  # back to the input's dtype
    assert info == {"singular_target": 1, "singular_pseudo_source": 0}


def test_eig_solver_on_zero_and_tiny_covariances_uses_a_unit_scale_or_the_floor():
    # tr(C) = 0: the scale falls back to 1, so C_t + eps I = 0.5 I and W = sqrt(2) I (C_s = I + 0.5 I)
    info: dict = {}
    W = solve_w_eig(
        torch.zeros(2, 2, dtype=torch.float64), torch.eye(2, dtype=torch.float64), 0.5, info
    )
    assert torch.allclose(W, math.sqrt(1.5 / 0.5) * torch.eye(2, dtype=torch.float64))
    assert info["singular_target"] == 2 and info["singular_pseudo_source"] == 0
    # eps * scale below 1e-12: the floor 1e-12 keeps the eigenvalues positive
    c = torch.diag(torch.tensor([1e-3, 0.0], dtype=torch.float64))
    W = solve_w_eig(c, c, eps=1e-15)
    assert torch.all(torch.isfinite(W))
    assert W[1, 1].item() == pytest.approx(1.0, rel=1e-6)  # (0 + 1e-12) / (0 + 1e-12)


def test_near_singular_threshold_is_relative_to_the_largest_eigenvalue():
    info: dict = {}
    c = torch.diag(torch.tensor([1.0, 2e-7, 5e-8], dtype=torch.float64))
    solve_w_eig(c, torch.eye(3, dtype=torch.float64), 1e-3, info)
    assert info["singular_target"] == 1  # 5e-8 <= 1e-7 x 1, 2e-7 is not


def test_coral_loss_is_the_squared_frobenius_norm():
    a = torch.tensor([[1.0, 2.0], [0.0, -1.0]])
    assert coral_loss(a, torch.zeros(2, 2)).item() == pytest.approx(6.0)
    assert coral_loss(a, a).item() == 0.0


def test_proportion_errors_name_what_is_missing():
    with pytest.raises(ValueError, match="'oracle' needs the ground-truth labels"):
        class_proportions("oracle", 3)
    with pytest.raises(ValueError, match="count of class 0, which is 0"):
        class_proportions("oracle", 3, labels=torch.tensor([1, 2, 2]))
    with pytest.raises(ValueError, match="'predicted' needs the logits"):
        class_proportions("predicted", 3)
    # a class never predicted gets proportion 0 (C * 0 / N)
    logits = torch.eye(3)[torch.tensor([0, 0, 1, 1])]
    assert class_proportions("predicted", 3, logits=logits).tolist() == [1.5, 1.5, 0.0]
    assert class_proportions("oracle", 3, labels=torch.tensor([0, 0, 2, 2, 2, 2])).tolist() == [
        1.0,
        0.0,
        2.0,
    ]


def test_input_checks_name_the_shapes():
    z, logits, head = _problem()
    with pytest.raises(ValueError, match=r"same N, got \(120, 4\) and \(119, 3\)"):
        linear_tca(z, logits[:119], head, 3)
    with pytest.raises(ValueError, match=r"embeddings \(N, d\)"):
        linear_tca(z[0], logits, head, 3)
    with pytest.raises(ValueError, match="logits have 3 classes, expected 4"):
        linear_tca(z, logits, head, 4)
    bad = logits.clone()
    bad[7, 1] = float("inf")
    with pytest.raises(ValueError, match="in 1 of 120 rows"):
        linear_tca(z, bad, head, 3)


def test_no_pseudo_source_keeps_the_target_mean_and_one_row_gives_its_mean(caplog):
    z, logits, head = _problem()
    zero = linear_tca(z, logits, head, 3, filter_k=0)
    assert zero.info["n_support"] == 0 and zero.info["w_solver"] == "identity"
    assert torch.allclose(zero.mu_s, zero.mu_t)
    assert torch.allclose(zero.logits, head(z), atol=1e-5)  # nothing moves
    one = linear_tca(z, logits, head, 3, filter_k=1, proportion=torch.tensor([1.0, 0.0, 0.0]))
    row = z[one.support_index]
    assert one.support_index.shape == (1,)
    assert torch.allclose(one.mu_s, row)
    assert torch.allclose(one.logits, head(z - z.mean(0) + row), atol=1e-5)
    assert one.info["coral_before"] == 0.0  # C_s is taken as C_t: no correlation to align


def test_info_reports_the_statistics_and_the_residual():
    z, logits, head = _problem()
    res = linear_tca(z, logits, head, 3, filter_k=10, w_solver="eig", eig_eps=1e-9)
    assert res.info["n"] == 120 and res.info["d"] == 4 and res.info["w_solver"] == "eig"
    assert res.info["n_support"] == len(res.support_index) <= 30
    s = z[res.support_index]
    xc, sc = z - z.mean(0), s - s.mean(0)
    c_t, c_s = xc.T @ xc / 119, sc.T @ sc / (len(s) - 1)
    assert res.info["coral_before"] == pytest.approx(torch.linalg.norm(c_t - c_s).item(), rel=1e-4)
    assert res.info["coral_residual"] < 1e-3 * res.info["coral_before"]
    assert torch.allclose(res.mu_t, z.mean(0, keepdim=True))
    auto = linear_tca(z, logits, head, 3, filter_k=10)
    assert auto.info["shrinkage"] == 0.0 and "shrinkage" not in res.info


def test_the_head_is_called_in_chunks_with_the_same_result():
    z, logits, head = _problem(n=50)
    calls = []

    def classifier(h):
        calls.append(h.shape[0])
        return head(h)

    one = linear_tca(z, logits, classifier, 3, filter_k=5, chunk=7)
    assert calls == [7] * 7 + [1]
    whole = linear_tca(z, logits, head, 3, filter_k=5, chunk=256)
    assert torch.allclose(one.logits, whole.logits, atol=1e-6)


def test_adam_solver_keeps_the_input_dtype():
    from paper_pipelines.pipelines.tca.linear_tca import solve_w_adam

    c = torch.eye(3, dtype=torch.float64) * 2
    assert solve_w_adam(c, c, iterations=2, lr=1e-3).dtype == torch.float64


def test_adam_solver_settings_reach_the_solver():
    z, logits, head = _problem()
    still = linear_tca(z, logits, head, 3, w_solver="adam", w_iters=0)
    assert torch.equal(still.W, torch.eye(4))
    moved = linear_tca(z, logits, head, 3, w_solver="adam", w_iters=3, w_lr=0.01)
    step = (moved.W - torch.eye(4)).abs().max().item()
    assert 0.01 < step <= 3 * 0.01 + 1e-6  # Adam moves each entry by at most lr per step


# ----------------------------------------------------------------------------- measures


def test_accuracy_of_logits_by_hand():
    logits = torch.tensor([[2.0, 1.0], [0.0, 3.0], [5.0, -1.0]])
    assert accuracy_of_logits(logits, np.array([0, 1, 1])) == pytest.approx(200 / 3)
    assert accuracy_of_logits(logits, np.array([0, 1, 0])) == 100.0


def test_state_fingerprint_sees_every_tensor_and_its_name():
    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    base = state_fingerprint(net)
    assert len(base) == 64 and base == state_fingerprint(net)
    with torch.no_grad():
        net[1].running_mean += 1e-6  # a buffer, not a parameter
    assert state_fingerprint(net) != base
    # the same tensors under other names are another model
    a = torch.nn.Module()
    a.register_buffer("x", torch.ones(2))
    b = torch.nn.Module()
    b.register_buffer("y", torch.ones(2))
    assert state_fingerprint(a) != state_fingerprint(b)


def test_peak_tensor_bytes_counts_what_the_function_allocates():
    def make():
        return torch.ones(1000, dtype=torch.float32) * 2.0  # two 4000-byte tensors alive at once

    assert peak_tensor_bytes(lambda: 3, "cpu") == (3, 0)  # nothing allocated, nothing counted
    out, peak = peak_tensor_bytes(make, "cpu")
    assert torch.equal(out, torch.full((1000,), 2.0))
    assert 4000 <= peak <= 16000
