"""Stage 1 / Stage 2 losses and loops on tiny tensors; the network's shapes."""

import math

import numpy as np
import pytest
import torch

from paper_pipelines.pipelines.cpl_iqa import model as net
from paper_pipelines.pipelines.cpl_iqa import training as tr
from paper_pipelines.pipelines.cpl_iqa.parameters import Stage2Params


def test_vector_cross_entropy_by_hand():
    logits = torch.log(torch.tensor([[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]))
    v = torch.tensor([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5]])
    ce = tr.vector_cross_entropy(logits, v)
    assert torch.allclose(
        ce, torch.tensor([math.log(2), -0.5 * math.log(0.1) - 0.5 * math.log(0.8)])
    )


def test_cpl_loss_weights_the_unlabelled_term_by_confidence():
    logits = torch.log(torch.tensor([[0.5, 0.5], [0.25, 0.75], [0.5, 0.5]]))
    v_l = torch.tensor([[1.0, 0.0]])
    z_u = torch.tensor([[0.0, 1.0], [1.0, 0.0]])
    w_u = torch.tensor([1.0, 0.5])
    loss = tr.cpl_loss(logits[:1], v_l, logits[1:], z_u, w_u)
    expected = math.log(2) + (1.0 * -math.log(0.75) + 0.5 * math.log(2)) / 2
    assert float(loss) == pytest.approx(expected)
    assert float(tr.cpl_loss(logits[:1], v_l, None, None, None)) == pytest.approx(math.log(2))
    empty = torch.zeros((0, 2))
    assert float(tr.cpl_loss(logits[:1], v_l, empty, empty, torch.zeros(0))) == pytest.approx(
        math.log(2)
    )


def test_labeled_batches_cycle_through_permutations():
    g = torch.Generator().manual_seed(0)
    batches = tr.labeled_batches(5, 2, 5, g)
    assert [len(b) for b in batches] == [2, 2, 2, 2, 2]
    assert sorted(torch.cat(batches[:2]).tolist()) != []  # fresh permutation after two batches
    assert len(set(torch.cat(batches[:2]).tolist())) == 4
    assert all(0 <= int(i) < 5 for b in batches for i in b)


def test_networks_give_embeddings_and_bin_logits():
    cnn = net.build_network("small_cnn", 8, 5, [4, 6], [], 0)
    x = torch.randint(0, 255, (3, 3, 16, 16), dtype=torch.uint8)
    assert cnn(x).shape == (3, 5) and cnn.embed(x).shape == (3, 8)
    assert (cnn.embed(x) >= 0).all()  # ReLU embedding
    mlp = net.build_network("feature_mlp", 4, 5, [], [7, 6], 3)
    assert mlp(torch.randn(2, 3)).shape == (2, 5)
    assert mlp.backbone.width == 6
    assert net.build_network("feature_mlp", 4, 5, [], [], 3).backbone.width == 3
    with pytest.raises(ValueError, match="unknown backbone 'vit'"):
        net.build_network("vit", 4, 5, [], [], 3)


def tiny_problem(n=40, bins=5, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, 3)).astype(np.float32)
    score = 1 + (bins - 1) * (np.tanh(x[:, 0]) + 1) / 2
    from paper_pipelines.pipelines.cpl_iqa.labels import two_bin_label

    return torch.as_tensor(x), two_bin_label(score, bins), score


def test_train_supervised_lowers_the_loss():
    x, v, _ = tiny_problem()
    torch.manual_seed(0)
    model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
    vt = torch.as_tensor(v, dtype=torch.float32)
    with torch.no_grad():
        before = float(tr.vector_cross_entropy(model(x), vt).mean())
    tr.train_supervised(model, x, vt, 30, 1e-2, 0.0, 8, torch.Generator().manual_seed(0), "cpu")
    model.eval()
    with torch.no_grad():
        after = float(tr.vector_cross_entropy(model(x), vt).mean())
    assert after < before - 0.3


def test_predict_and_embed_give_distributions_and_embeddings():
    x, _, _ = tiny_problem(n=7)
    model = net.build_network("feature_mlp", 4, 5, [], [6], 3)
    p = tr.predict_distribution(model, x, "cpu", batch=3)
    assert p.shape == (7, 5) and np.allclose(p.sum(axis=1), 1.0)
    assert tr.embed(model, x, "cpu", batch=2).shape == (7, 4)
    assert tr.srcc(np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])) == pytest.approx(-1.0)
    assert tr.srcc(np.ones(3), np.array([3.0, 2.0, 1.0])) == 0.0


@pytest.mark.parametrize("mode", ["cpl", "supervised", "oracle"])
def test_run_stage2_logs_each_round_and_pseudo_labels_only_for_cpl(mode):
    x, v, score = tiny_problem(n=60)
    torch.manual_seed(0)
    model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
    stage2 = Stage2Params(
        rounds=2, epochs_per_round=1, knn_k=5, batch_labeled=8, batch_unlabeled=16
    )
    setting = tr.Stage2Setting(mode, 0.9, "entropy")
    model, log = tr.run_stage2(
        model, x[:20], v[:20], x[20:], setting, stage2, 5, score[20:],
        torch.Generator().manual_seed(0), "cpu", oracle_u=v[20:],
    )  # fmt: skip
    assert [row["round"] for row in log] == [1, 2]
    assert all(np.isfinite(row["loss"]) and row["train_seconds"] >= 0 for row in log)
    has_pseudo = "pseudo_srcc" in log[0]
    assert has_pseudo == (mode == "cpl")
    if mode == "cpl":
        assert -1 <= log[0]["pseudo_srcc"] <= 1 and log[0]["isolated"] == 0
        assert 0 < log[0]["mean_confidence"] <= 1


def test_the_supervised_control_takes_the_same_number_of_steps():
    x, v, score = tiny_problem(n=60)
    calls = {}
    for mode in ("cpl", "supervised"):
        model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
        opt = torch.optim.SGD(model.parameters(), lr=0.0)
        steps = []
        original = opt.step

        def counting(*a, _orig=original, _steps=steps, **k):
            _steps.append(1)
            return _orig(*a, **k)

        opt.step = counting
        z = torch.as_tensor(v[20:], dtype=torch.float32) if mode == "cpl" else None
        w = torch.ones(40) if mode == "cpl" else None
        tr.train_mixed_epoch(
            model, opt, x[:20], torch.as_tensor(v[:20], dtype=torch.float32),
            x[20:] if mode == "cpl" else None, z, w, 8, 16, 3, torch.Generator(), "cpu",
        )  # fmt: skip
        calls[mode] = len(steps)
    assert calls == {"cpl": 3, "supervised": 3}


def test_labeled_batches_take_consecutive_slices_then_reshuffle():
    order = torch.randperm(4, generator=torch.Generator().manual_seed(5))
    batches = tr.labeled_batches(4, 2, 3, torch.Generator().manual_seed(5))
    assert batches[0].tolist() == order[:2].tolist()
    assert batches[1].tolist() == order[2:].tolist()


def test_the_cnn_sees_pixels_scaled_to_minus_half_half_and_halves_resolution_per_block():
    cnn = net.SmallCNN([4, 6])
    seen = {}
    cnn.features[0].register_forward_hook(lambda mod, inp, out: seen.update(x=inp[0]))
    cnn.features[3].register_forward_hook(lambda mod, inp, out: seen.update(out=out))
    cnn(torch.full((1, 3, 16, 16), 255, dtype=torch.uint8))
    assert torch.allclose(seen["x"], torch.full((1, 3, 16, 16), 0.5))
    assert seen["out"].shape == (1, 6, 4, 4)


def test_stage2_uses_its_learning_rate_and_generator():
    x, v, score = tiny_problem(n=60)
    results = []
    for lr, global_seed in ((1e-9, 0), (1e-2, 0), (1e-2, 1)):
        torch.manual_seed(0)
        model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
        before = model.head.weight.detach().clone()
        stage2 = Stage2Params(rounds=1, epochs_per_round=2, lr=lr, knn_k=5)
        torch.manual_seed(global_seed)  # the global stream must not matter
        setting = tr.Stage2Setting("cpl", 0.9, "entropy")
        model, log = tr.run_stage2(
            model, x[:20], v[:20], x[20:], setting, stage2, 5, score[20:],
            torch.Generator().manual_seed(0), "cpu",
        )  # fmt: skip
        results.append((model.head.weight.detach() - before).abs().max().item())
        results.append(model.head.weight.detach().clone())
        assert "mean_raw_confidence" in log[0]
    assert results[0] < 1e-6 < results[2]
    assert torch.equal(results[3], results[5])


def test_stage2_without_unlabelled_images_trains_the_labelled_term_only():
    x, v, score = tiny_problem(n=20)
    model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
    stage2 = Stage2Params(rounds=1, epochs_per_round=1, knn_k=5)
    setting = tr.Stage2Setting("cpl", 0.9, "entropy")
    _, log = tr.run_stage2(
        model, x, v, x[:0], setting, stage2, 5, score[:0], torch.Generator().manual_seed(0), "cpu"
    )
    assert log[0]["model_srcc_unlabeled"] == 0.0 and "pseudo_srcc" not in log[0]


def test_graph_on_nss_or_concatenated_features():
    x, v, score = tiny_problem(n=60)
    extra = np.random.default_rng(0).standard_normal((60, 4))
    for graph in ("nss", "concat"):
        model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
        stage2 = Stage2Params(rounds=1, epochs_per_round=1, knn_k=5, graph_features=graph)
        _, log = tr.run_stage2(
            model, x[:20], v[:20], x[20:], tr.Stage2Setting("cpl", 0.9, "entropy"), stage2, 5,
            score[20:], torch.Generator().manual_seed(0), "cpu", graph_extra=extra,
        )  # fmt: skip
        assert np.isfinite(log[0]["pseudo_srcc"])


def test_conv_blocks_use_3x3_kernels():
    cnn = net.SmallCNN([4, 6])
    convs = [m for m in cnn.features if isinstance(m, torch.nn.Conv2d)]
    assert [c.kernel_size for c in convs] == [(3, 3), (3, 3)]
    assert [c.stride for c in convs] == [(2, 2), (2, 2)] and convs[0].bias is None


def test_weight_decay_reaches_the_stage1_optimiser():
    x, v, _ = tiny_problem()
    vt = torch.as_tensor(v, dtype=torch.float32)
    norms = []
    for wd in (0.0, 50.0):
        torch.manual_seed(0)
        model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
        tr.train_supervised(model, x, vt, 5, 1e-2, wd, 8, torch.Generator().manual_seed(0), "cpu")
        norms.append(float(model.head.weight.detach().norm()))
    assert norms[1] < 0.8 * norms[0]


def test_mixed_epoch_returns_the_mean_loss_of_its_steps():
    x, v, _ = tiny_problem(n=30)
    vt = torch.as_tensor(v, dtype=torch.float32)
    model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    w = torch.full((20,), 0.5)
    got = tr.train_mixed_epoch(
        model,
        opt,
        x[:10],
        vt[:10],
        x[10:],
        vt[10:],
        w,
        4,
        8,
        1,
        torch.Generator().manual_seed(3),
        "cpu",
    )
    g = torch.Generator().manual_seed(3)
    idx_l = tr.labeled_batches(10, 4, 1, g)[0]
    idx_u = torch.randperm(20, generator=g)[:8]
    model.train()
    logits = model(torch.cat([x[:10][idx_l], x[10:][idx_u]]))
    expected = tr.cpl_loss(logits[:4], vt[:10][idx_l], logits[4:], vt[10:][idx_u], w[idx_u])
    assert got == pytest.approx(float(expected), rel=1e-5)


def test_stage2_without_unlabelled_images_takes_one_step_per_epoch(monkeypatch):
    seen = []
    original = tr.train_mixed_epoch

    def spy(*args):
        seen.append(args[9])
        return original(*args)

    monkeypatch.setattr(tr, "train_mixed_epoch", spy)
    x, v, score = tiny_problem(n=20)
    model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
    stage2 = Stage2Params(rounds=1, epochs_per_round=2, knn_k=5)
    tr.run_stage2(
        model, x, v, x[:0], tr.Stage2Setting("supervised", 0.9, "none"), stage2, 5, score[:0],
        torch.Generator().manual_seed(0), "cpu",
    )  # fmt: skip
    assert seen == [1, 1]


def test_pseudo_label_quality_by_hand():
    from paper_pipelines.pipelines.cpl_iqa.propagation import Propagation

    labels = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]])
    prop = Propagation(labels, np.array([1.0, 0.5, 0.0]), np.array([0.9, 0.45, 0.0]), 1)
    out = tr._pseudo_label_quality(prop, 3, np.array([1.5, 2.0, 3.0]))
    # pseudo-MOS 1 and 3 on the two reached images; errors 0.5 and 1.0
    assert out["pseudo_srcc"] == pytest.approx(1.0)
    assert out["pseudo_mae"] == pytest.approx(0.75)
    assert out["mean_confidence"] == pytest.approx(0.5)
    assert out["mean_raw_confidence"] == pytest.approx(0.45)
    assert out["confidence_error_srcc"] == pytest.approx(1.0)  # larger weight, smaller error
    assert out["isolated"] == 1


def test_labeled_batches_are_consecutive_slices_of_fresh_permutations_from_the_generator():
    g = torch.Generator().manual_seed(7)
    perms = [torch.randperm(6, generator=g) for _ in range(3)]
    torch.manual_seed(123)  # the global stream must not matter
    batches = tr.labeled_batches(6, 3, 6, torch.Generator().manual_seed(7))
    expected = [p[s : s + 3] for p in perms for s in (0, 3)]
    assert [b.tolist() for b in batches] == [e.tolist() for e in expected]


def test_mixed_epoch_returns_the_mean_of_its_step_losses(monkeypatch):
    seen = []
    original = tr.cpl_loss

    def spy(*args):
        loss = original(*args)
        seen.append(float(loss))
        return loss

    monkeypatch.setattr(tr, "cpl_loss", spy)
    x, v, _ = tiny_problem(n=30)
    vt = torch.as_tensor(v, dtype=torch.float32)
    torch.manual_seed(0)
    model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
    opt = torch.optim.SGD(model.parameters(), lr=0.5)
    got = tr.train_mixed_epoch(
        model, opt, x[:10], vt[:10], x[10:], vt[10:], torch.ones(20), 4, 8, 3,
        torch.Generator().manual_seed(0), "cpu",
    )  # fmt: skip
    assert len(seen) == 3 and len(set(seen)) == 3  # the steps train: each loss differs
    assert got == pytest.approx(sum(seen) / 3)


def test_stage1_trains_on_the_given_device():
    # the meta device has no data: the model must be moved there or the forward pass fails
    x, v, _ = tiny_problem(n=8)
    model = net.build_network("feature_mlp", 4, 5, [], [6], 3)
    vt = torch.as_tensor(v, dtype=torch.float32)
    tr.train_supervised(model, x, vt, 1, 1e-2, 0.0, 4, torch.Generator().manual_seed(0), "meta")
    assert all(p.device.type == "meta" for p in model.parameters())


def test_stage2_modes_use_the_unlabelled_images_as_their_names_say():
    x, v, score = tiny_problem(n=60)

    def trained(mode, x_u, oracle_u=None, confidence="entropy"):
        torch.manual_seed(0)
        model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
        stage2 = Stage2Params(
            rounds=1, epochs_per_round=1, knn_k=5, lr=1e-2, batch_labeled=8, batch_unlabeled=16
        )
        import time

        started = time.perf_counter()
        model, log = tr.run_stage2(
            model, x[:20], v[:20], x_u, tr.Stage2Setting(mode, 0.9, confidence), stage2, 5,
            score[20:], torch.Generator().manual_seed(0), "cpu", oracle_u=oracle_u,
        )  # fmt: skip
        wall = time.perf_counter() - started
        assert 0.0 <= log[0]["lp_seconds"] <= wall and 0.0 <= log[0]["train_seconds"] <= wall
        return model.head.weight.detach().clone()

    supervised = trained("supervised", x[20:])
    # the supervised control never trains on the unlabelled images (only their number sets the steps)
    assert torch.equal(supervised, trained("supervised", 3 * x[20:]))
    cpl = trained("cpl", x[20:])
    assert not torch.allclose(cpl, supervised)
    assert not torch.allclose(trained("cpl", x[20:], confidence="none"), cpl)  # unit weights
    oracle = trained("oracle", x[20:], v[20:])
    assert not torch.allclose(oracle, supervised)
    assert not torch.allclose(oracle, trained("oracle", x[20:], v[20:][:, ::-1].copy()))


def test_propagation_runs_on_the_embeddings_with_the_stage2_settings():
    from paper_pipelines.pipelines.cpl_iqa.propagation import propagate_labels

    x, v, _ = tiny_problem(n=30)
    torch.manual_seed(0)
    model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
    stage2 = Stage2Params(knn_k=4, cg_iters=1, cg_tol=1e-12, affinity_power=2.0)
    got = tr._propagate(model, x[:10], x[10:], v[:10], stage2, 0.99, "cpu", None)
    feats = np.concatenate([tr.embed(model, x[:10], "cpu"), tr.embed(model, x[10:], "cpu")])
    want = propagate_labels(feats, v[:10], 10, 4, 0.99, 2.0, 1, 1e-12)
    assert np.array_equal(got.labels, want.labels) and np.array_equal(got.weights, want.weights)
    converged = propagate_labels(feats, v[:10], 10, 4, 0.99, 2.0, 500, 1e-12)
    assert not np.allclose(got.labels, converged.labels)  # one CG iteration: the cap was used


def test_pseudo_label_quality_when_no_image_was_reached():
    from paper_pipelines.pipelines.cpl_iqa.propagation import Propagation

    prop = Propagation(np.zeros((2, 3)), np.zeros(2), np.zeros(2), 2)
    out = tr._pseudo_label_quality(prop, 3, np.array([1.0, 2.0]))
    assert out["pseudo_srcc"] == 0.0 and np.isnan(out["pseudo_mae"])
    assert out["confidence_error_srcc"] == 0.0 and out["isolated"] == 2


def test_stage2_takes_enough_steps_per_epoch_to_see_every_unlabelled_image(monkeypatch):
    seen = []
    original = tr.train_mixed_epoch

    def spy(*args):
        seen.append(args[9])
        return original(*args)

    monkeypatch.setattr(tr, "train_mixed_epoch", spy)
    x, v, score = tiny_problem(n=60)
    model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
    stage2 = Stage2Params(rounds=1, epochs_per_round=2, knn_k=5, batch_unlabeled=16)
    tr.run_stage2(
        model, x[:20], v[:20], x[20:], tr.Stage2Setting("supervised", 0.9, "none"), stage2, 5,
        score[20:], torch.Generator().manual_seed(0), "cpu",
    )  # fmt: skip
    assert seen == [3, 3]  # ceil(40 / 16)


def test_stage1_shuffles_with_its_generator_and_trains_on_batches_of_two():
    x, v, _ = tiny_problem(n=4)
    vt = torch.as_tensor(v, dtype=torch.float32)
    weights = []
    for global_seed in (1, 2):
        torch.manual_seed(0)
        model = net.build_network("feature_mlp", 4, 5, [], [6], 3)
        before = model.head.weight.detach().clone()
        torch.manual_seed(global_seed)  # the global stream must not matter
        tr.train_supervised(model, x, vt, 3, 1e-2, 0.0, 2, torch.Generator().manual_seed(0), "cpu")
        weights.append(model.head.weight.detach().clone())
        assert not torch.equal(weights[-1], before)  # batches of two are trained on
    assert torch.equal(weights[0], weights[1])


def test_weight_decay_reaches_the_stage2_optimiser():
    x, v, score = tiny_problem(n=40)
    norms = []
    for wd in (0.0, 50.0):
        torch.manual_seed(0)
        model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
        stage2 = Stage2Params(rounds=1, epochs_per_round=10, lr=1e-2, weight_decay=wd, knn_k=5)
        tr.run_stage2(
            model, x[:20], v[:20], x[20:], tr.Stage2Setting("supervised", 0.9, "none"), stage2, 5,
            score[20:], torch.Generator().manual_seed(0), "cpu",
        )  # fmt: skip
        norms.append(float(model.head.weight.detach().norm()))
    assert norms[1] < 0.8 * norms[0]


def test_one_step_per_epoch_when_one_batch_holds_every_unlabelled_image(monkeypatch):
    seen = []
    original = tr.train_mixed_epoch

    def spy(*args):
        seen.append(args[9])
        return original(*args)

    monkeypatch.setattr(tr, "train_mixed_epoch", spy)
    x, v, score = tiny_problem(n=40)
    model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
    stage2 = Stage2Params(rounds=1, epochs_per_round=1, knn_k=5, batch_unlabeled=64)
    tr.run_stage2(
        model, x[:20], v[:20], x[20:], tr.Stage2Setting("supervised", 0.9, "none"), stage2, 5,
        score[20:], torch.Generator().manual_seed(0), "cpu",
    )  # fmt: skip
    assert seen == [1]


def test_unit_confidence_weights_are_ones_and_entropy_weights_are_the_propagated_ones(monkeypatch):
    seen = []
    original = tr.train_mixed_epoch

    def spy(*args):
        seen.append(args[6].clone())
        return original(*args)

    monkeypatch.setattr(tr, "train_mixed_epoch", spy)
    x, v, score = tiny_problem(n=60)
    for confidence in ("none", "entropy"):
        torch.manual_seed(0)
        model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
        stage2 = Stage2Params(rounds=1, epochs_per_round=1, knn_k=5)
        tr.run_stage2(
            model, x[:20], v[:20], x[20:], tr.Stage2Setting("cpl", 0.9, confidence), stage2, 5,
            score[20:], torch.Generator().manual_seed(0), "cpu",
        )  # fmt: skip
    unit, entropy = seen
    assert torch.equal(unit, torch.ones(40))
    assert float(entropy.max()) == pytest.approx(1.0) and float(entropy.min()) < 1.0


def test_stage2_trains_the_same_from_float32_or_float64_labels():
    x, v, score = tiny_problem(n=60)
    results = []
    for dtype in (np.float64, np.float32):
        for mode in ("supervised", "oracle"):
            torch.manual_seed(0)
            model = net.build_network("feature_mlp", 8, 5, [], [16], 3)
            stage2 = Stage2Params(rounds=1, epochs_per_round=1, lr=1e-2, knn_k=5)
            tr.run_stage2(
                model, x[:20], v[:20].astype(dtype), x[20:], tr.Stage2Setting(mode, 0.9, "none"),
                stage2, 5, score[20:], torch.Generator().manual_seed(0), "cpu",
                oracle_u=v[20:].astype(dtype),
            )  # fmt: skip
            results.append(model.head.weight.detach().clone())
    assert torch.equal(results[0], results[2]) and torch.equal(results[1], results[3])
