"""LinearTCA pinned on small hand-checkable cases, plus the spec's parity, efficiency and bad-input checks."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.tca.adaptation import tca_on_outputs
from paper_pipelines.pipelines.tca.linear_tca import (
    chunked_mean_covariance,
    class_proportions,
    covariance,
    linear_tca,
    pseudo_source_shrinkage,
    select_pseudo_source,
    shrink_towards_target,
    softmax_entropy,
    solve_w_adam,
    solve_w_eig,
    transform_embeddings,
)
from paper_pipelines.pipelines.tca.metrics import peak_tensor_bytes
from tests.pipelines.tca.problems import linear_head_problem


def _problem(n: int = 300, d: int = 8, c: int = 4, seed: int = 0):
    return linear_head_problem(n, d, c, seed, shift=2.0)


def test_softmax_entropy_hand_values():
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0], [100.0, 0.0, 0.0, 0.0]])
    h = softmax_entropy(logits)
    assert h[0].item() == pytest.approx(math.log(4), abs=1e-6)  # uniform: ln C
    assert h[1].item() == pytest.approx(0.0, abs=1e-6)  # certain: 0


def test_select_pseudo_source_lowest_entropy_per_class():
    # Class 0 predicted for rows 0-2 (margins 3, 1, 5), class 1 for rows 3-5 (margins 2, 4, 0.5).
    logits = torch.tensor([[3.0, 0.0], [1.0, 0.0], [5.0, 0.0], [0.0, 2.0], [0.0, 4.0], [0.0, 0.5]])
    chosen = select_pseudo_source(logits, 2, filter_k=2, proportion=torch.ones(2))
    assert chosen.tolist() == [2, 0, 4, 3]  # per class, most confident first
    # r = [1, 0.5]: floor(2 * 0.5) = 1 sample of class 1
    chosen = select_pseudo_source(logits, 2, filter_k=2, proportion=torch.tensor([1.0, 0.5]))
    assert chosen.tolist() == [2, 0, 4]
    assert select_pseudo_source(logits, 2, filter_k=-1, proportion=torch.ones(2)).tolist() == list(
        range(6)
    )


def test_class_proportions():
    labels = torch.tensor([0, 0, 1, 1, 1, 1, 2])
    assert class_proportions("oracle", 3, labels=labels).tolist() == [1.0, 2.0, 0.5]
    assert class_proportions("uniform", 3).tolist() == [1.0, 1.0, 1.0]
    logits = torch.eye(3)[torch.tensor([0, 0, 0, 1, 1, 2])] * 5
    assert class_proportions("predicted", 3, logits=logits).tolist() == pytest.approx(
        [1.5, 1.0, 0.5]
    )
    with pytest.raises(ValueError, match="unknown proportions"):
        class_proportions("bogus", 3)


def test_covariance_hand_value_and_chunked_equivalence():
    x = torch.tensor([[1.0, 2.0], [3.0, 6.0], [5.0, 4.0]])
    # mean (3, 4); centred rows (-2,-2), (0,2), (2,0); X^T X / 2 = [[4, 2], [2, 4]]
    assert covariance(x).tolist() == [[4.0, 2.0], [2.0, 4.0]]
    z, _, _ = _problem()
    mu, cov = chunked_mean_covariance(z, chunk=7)
    assert torch.allclose(cov, covariance(z), atol=1e-4)
    assert torch.allclose(mu, z.mean(0, keepdim=True))
    assert np.allclose(cov.numpy(), np.cov(z.numpy().T), atol=1e-3)


def test_eig_solver_aligns_covariance_exactly():
    g = torch.Generator().manual_seed(1)
    a, b = torch.randn(6, 6, generator=g), torch.randn(6, 6, generator=g)
    c_t, c_s = a @ a.T + 0.5 * torch.eye(6), b @ b.T + 0.5 * torch.eye(6)
    W = solve_w_eig(c_t.double(), c_s.double(), eps=1e-12)
    assert torch.allclose(W.T @ c_t.double() @ W, c_s.double(), atol=1e-8)
    # 1-d hand case: W = sqrt(c_s / c_t)
    W1 = solve_w_eig(torch.tensor([[4.0]]), torch.tensor([[9.0]]), eps=1e-12)
    assert W1.item() == pytest.approx(1.5, rel=1e-6)


def test_adam_solver_starts_at_identity_and_reduces_the_coral_loss():
    g = torch.Generator().manual_seed(2)
    a = torch.randn(5, 5, generator=g)
    c_t, c_s = a @ a.T + torch.eye(5), torch.eye(5) * 2
    assert torch.equal(solve_w_adam(c_t, c_s, iterations=0, lr=1e-3), torch.eye(5))
    W = solve_w_adam(c_t, c_s, iterations=20, lr=1e-3)
    before = torch.linalg.norm(c_t - c_s)
    after = torch.linalg.norm(W.T @ c_t @ W - c_s)
    assert after < before
    assert (
        W - torch.eye(5)
    ).abs().max() <= 20 * 1e-3 + 1e-6  # Adam moves each entry <= lr per step


def test_linear_tca_matches_transformed_statistics():
    z, logits, head = _problem()
    res = linear_tca(z, logits, head, 4, filter_k=20, w_solver="eig", eig_eps=1e-9)
    z_new = transform_embeddings(z, res.W, res.mu_t, res.mu_s)
    s = z[res.support_index]
    # Instance alignment: the transformed target has the pseudo-source mean; correlation alignment:
    # its covariance is the pseudo-source covariance (d = 8 < 80 support rows: full rank).
    assert torch.allclose(z_new.mean(0), s.mean(0), atol=1e-3)
    assert torch.allclose(covariance(z_new), covariance(s), atol=1e-3)
    assert torch.allclose(res.logits, head(z_new).detach(), atol=1e-4)
    assert res.info["coral_residual"] < 1e-2 * res.info["coral_before"]


def test_mean_only_is_a_translation():
    z, logits, head = _problem()
    res = linear_tca(z, logits, head, 4, filter_k=20, w_solver="identity")
    assert torch.equal(res.W, torch.eye(8))
    assert torch.allclose(res.logits, head(z - res.mu_t + res.mu_s).detach(), atol=1e-5)


def _reference_tca(z, logits, head, num_classes, filter_k, proportion, iters, lr):
    """Independent reading of the official steps: full matrices, no chunking, Adam on W from I."""
    ent = -(logits.softmax(1) * logits.log_softmax(1)).sum(1)
    yhat = logits.argmax(1)
    picked = []
    for c in range(num_classes):
        idx = torch.nonzero(yhat == c).flatten()
        idx = idx[torch.sort(ent[idx]).indices][: math.floor(filter_k * float(proportion[c]))]
        picked.append(idx)
    s = z[torch.cat(picked)]

    def cov(x):
        xc = x - x.mean(0, keepdim=True)
        return xc.T @ xc / (x.shape[0] - 1)

    c_s, c_t = cov(s), cov(z)
    W = torch.eye(z.shape[1], requires_grad=True)
    opt = torch.optim.Adam([W], lr=lr)
    for _ in range(iters):
        opt.zero_grad()
        loss = torch.norm(W.T @ c_t @ W - c_s, p="fro") ** 2
        loss.backward()
        opt.step()
    with torch.no_grad():
        return head((z - z.mean(0, keepdim=True)) @ W + s.mean(0, keepdim=True))


def test_official_solver_parity_with_oracle_proportions():
    """Spec check 3 (in-repo form): adam + oracle proportions = the official algorithm, |diff| < 1e-5."""
    z, logits, head = _problem(n=600, d=32, c=10, seed=3)
    labels = torch.randint(0, 10, (600,), generator=torch.Generator().manual_seed(4))
    r = class_proportions("oracle", 10, labels=labels)
    ours = linear_tca(
        z, logits, head, 10, filter_k=20, proportion=r, w_solver="adam", w_iters=20, w_lr=1e-3
    )
    ref = _reference_tca(z, logits, head, 10, 20, r, 20, 1e-3)
    assert (ours.logits - ref).abs().max().item() < 1e-5
    assert torch.equal(ours.logits.argmax(1), ref.argmax(1))


def test_no_weight_update():
    z, logits, head = _problem()
    before = {k: v.clone() for k, v in head.state_dict().items()}
    for solver in ("eig", "adam"):
        linear_tca(z, logits, head, 4, w_solver=solver)
    assert all(torch.equal(before[k], v) for k, v in head.state_dict().items())


def test_tca_memory_is_small_next_to_the_embeddings():
    """Spec check 4 (memory part): TCA's extra tensors are O(d^2 + N d), measured with the profiler."""
    z, logits, head = _problem(n=800, d=64, c=10)
    _, peak = peak_tensor_bytes(lambda: linear_tca(z, logits, head, 10), "cpu")
    n, d = z.shape
    literal = 4 * (2 * d * d + n * d)  # spec: two d x d matrices + the N x d embeddings (float32)
    # Measured 290,672 B = 1.22x the literal bound: on top of it TCA holds the pseudo-source copy
    # (m x d, m <= K * C) and the output logits (N x C); still O(d^2 + N d), nothing per parameter.
    assert 0 < peak <= 1.5 * literal


# ---------------------------------------------------------------- bad input


def test_fewer_samples_than_classes_fails_clearly():
    z, logits, head = _problem(n=3, c=4)
    with pytest.raises(ValueError, match="fewer samples than classes"):
        linear_tca(z, logits, head, 4)


def test_nan_features_fail_clearly():
    z, logits, head = _problem()
    z[5, 2] = float("nan")
    with pytest.raises(ValueError, match=r"non-finite embeddings .* in 1 of 300 rows"):
        linear_tca(z, logits, head, 4)


def test_singular_covariance_is_regularised_and_logged(caplog):
    z, logits, head = _problem(n=200, d=8)
    z[:, 3] = 0.0  # a dead ReLU channel: both covariances are singular
    z[:, 5] = z[:, 4]  # and a duplicated one
    with caplog.at_level(logging.INFO):
        res = linear_tca(z, logits, head, 4, filter_k=20, w_solver="eig")
    assert torch.isfinite(res.logits).all()
    assert "singular" in caplog.text and "regularised" in caplog.text
    assert res.info["singular_target"] >= 2 and res.info["singular_pseudo_source"] >= 2


def test_more_dimensions_than_pseudo_source_rows_does_not_crash(caplog):
    z, logits, head = _problem(n=300, d=64, c=4)  # 4 classes x K=5 = 20 rows < 64 dims
    with caplog.at_level(logging.INFO):
        res = linear_tca(z, logits, head, 4, filter_k=5, w_solver="eig")
    assert torch.isfinite(res.logits).all()
    assert "pseudo-source covariance is singular" in caplog.text


def test_single_pseudo_source_row_falls_back_to_mean_alignment(caplog):
    z, logits, head = _problem()
    r = torch.tensor([1.0, 0.0, 0.0, 0.0])
    with caplog.at_level(logging.WARNING):
        res = linear_tca(z, logits, head, 4, filter_k=1, proportion=r)
    assert res.info["w_solver"] == "identity"
    assert "mean alignment only" in caplog.text


def test_unknown_solver_fails():
    z, logits, head = _problem()
    with pytest.raises(ValueError, match="unknown w_solver 'svd'"):
        linear_tca(z, logits, head, 4, w_solver="svd")


# ---------------------------------------------------------------- d >> pseudo-source rows


def _wide_problem(d: int, seed: int, c: int = 4, n: int = 400):
    """Gaussian classes whose means differ in every direction, a shared correlated covariance, the
    LDA source head, and a target with every coordinate rescaled (by 0.6-1.4) and shifted."""
    g = torch.Generator().manual_seed(seed)
    q, _ = torch.linalg.qr(torch.randn(d, d, generator=g, dtype=torch.float64))
    evals = 1.0 / (1.0 + torch.arange(d, dtype=torch.float64) / 10.0)
    means = 0.06 * torch.randn(c, d, generator=g, dtype=torch.float64) @ q.T
    y = torch.arange(n) % c
    z = means[y] + torch.randn(n, d, generator=g, dtype=torch.float64) @ (q * evals.sqrt()).T
    precision = (q / evals) @ q.T
    head = torch.nn.Linear(d, c)
    with torch.no_grad():
        head.weight.copy_(means @ precision)
        head.bias.copy_(-0.5 * ((means @ precision) * means).sum(1))
    scale = 0.6 + 0.8 * torch.rand(d, generator=g, dtype=torch.float64)
    z_t = (z - means.mean(0)) * scale + means.mean(0) + 0.3 * torch.randn(d, generator=g)
    return z_t.float(), y, head


def test_shrinkage_by_rows_per_dimension_by_hand():
    assert pseudo_source_shrinkage(201, 64) == 0.0  # m - 1 >= d: exact eig
    assert pseudo_source_shrinkage(65, 64) == 0.0
    assert pseudo_source_shrinkage(101, 200) == pytest.approx(0.5)
    assert pseudo_source_shrinkage(200, 2048) == pytest.approx(1 - 199 / 2048)
    c_s, c_t = torch.eye(2) * 4, torch.eye(2)
    assert shrink_towards_target(c_s, c_t, 0.25).tolist() == [[3.25, 0.0], [0.0, 3.25]]


def test_auto_is_exact_eig_with_more_rows_than_dimensions():
    z, logits, head = _problem(n=300, d=8)  # 4 classes x K = 20 = 80 rows > 8 dims
    auto = linear_tca(z, logits, head, 4, filter_k=20, w_solver="auto")
    eig = linear_tca(z, logits, head, 4, filter_k=20, w_solver="eig")
    assert auto.info["shrinkage"] == 0.0
    assert torch.equal(auto.W, eig.W) and torch.equal(auto.logits, eig.logits)


def test_auto_aligns_to_the_pseudo_source_shrunk_towards_the_target():
    z, logits, head = _problem(n=300, d=64, c=4)  # 4 x K = 5 = 20 rows < 64 dims
    res = linear_tca(z, logits, head, 4, filter_k=5, w_solver="auto", eig_eps=1e-9)
    lam = 1 - 19 / 64
    assert res.info["shrinkage"] == pytest.approx(lam)
    _, c_t = chunked_mean_covariance(z, None)
    c_s = covariance(z[res.support_index])
    target = ((1 - lam) * c_s + lam * c_t).double()
    aligned = res.W.double().T @ c_t.double() @ res.W.double()
    assert torch.allclose(aligned, target, rtol=1e-3, atol=1e-3 * target.abs().max())


@pytest.mark.parametrize("seed", range(5))
def test_default_solver_does_not_collapse_when_d_is_much_wider_than_the_pseudo_source(seed):
    """d = 192 dimensions, m = 4 classes x K = 5 = 20 confident rows: plain eig maps the target onto
    the 19-dimensional span of the pseudo-source and loses the classes; the default must not."""
    z, y, head = _wide_problem(192, seed)
    with torch.no_grad():
        logits = head(z)

    def acc(solver):
        out = linear_tca(z, logits, head, 4, filter_k=5, w_solver=solver).logits
        return float((out.argmax(1) == y).float().mean())

    source = float((logits.argmax(1) == y).float().mean())
    eig, auto = acc("eig"), acc("auto")
    assert auto >= source - 0.02  # the default keeps the source model's accuracy (or better)
    assert eig <= auto - 0.10  # plain eig loses at least 10 pt: the collapse this guards against
    assert linear_tca(z, logits, head, 4, filter_k=5).info["w_solver"] == "auto"  # the default


# ---------------------------------------------------------------- LinearTCA+


def test_linear_tca_plus_selects_with_the_base_methods_own_logits():
    """LinearTCA+ on a TTA method picks the pseudo-source with that method's logits and predicts with
    that method's head (official ``TCA.calculate`` on the plugged method's outputs). With K = 1 the
    pseudo-source is the most confident row per predicted class; W = I keeps the check by hand."""
    z = torch.tensor([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [3.0, 1.0], [1.0, 3.0]])
    # Source is most confident on rows 0 (class 0) and 3 (class 1); BN on rows 1 and 4.
    source_logits = torch.tensor([[5.0, 0], [1, 0], [2, 0], [0, 5], [0, 1], [0, 2]])
    bn_logits = torch.tensor([[1.0, 0], [5, 0], [2, 0], [0, 1], [0, 5], [0, 2]])
    eye, swap = torch.eye(2), torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    outputs = {
        "source": {
            "z": z,
            "logits": source_logits,
            "head": {"weight": swap, "bias": torch.zeros(2)},
        },
        "bn": {"z": z + 1.0, "logits": bn_logits, "head": {"weight": eye, "bias": torch.ones(2)}},
    }
    rows = tca_on_outputs(
        outputs,
        np.array([0, 0, 0, 1, 1, 1]),
        2,
        plug_into=["source", "bn"],
        solvers=["identity"],
        filter_k=1,
        proportions="uniform",
        w_iters=0,
        w_lr=1e-3,
        eig_eps=1e-3,
        chunk=4,
        device="cpu",
    )
    zb = z + 1.0
    mu_t = zb.mean(0)  # (13/6, 13/6)
    mu_s = (zb[1] + zb[4]) / 2  # BN's two most confident rows: (3, 1.5)
    assert torch.allclose(rows["bn+tca"]["logits"], zb - mu_t + mu_s + 1.0)
    # Source's own rows 0 and 3, through the source head (columns swapped).
    expected = (z - z.mean(0) + (z[0] + z[3]) / 2) @ swap.T
    assert torch.allclose(rows["source+tca"]["logits"], expected)
    assert rows["bn+tca"]["info"]["n_support"] == 2
