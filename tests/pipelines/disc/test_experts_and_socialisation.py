"""The specialists and the socialisation stage on tiny tensors (hand-checkable losses, frozen experts)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

from paper_pipelines.pipelines.disc import experts, socialisation
from paper_pipelines.pipelines.disc.collaboration import CentralModel
from paper_pipelines.pipelines.disc.parameters import VariantParams


def tiny(task, seed=0):
    torch.manual_seed(seed)
    return experts.freeze(experts.Specialist(3, (4, 5, 6), task).eval())


def tiny_pool(n=24, side=8, seed=0):
    rng = np.random.default_rng(seed)
    return {
        "images": rng.standard_normal((n, 1, side, side)).astype(np.float32),
        "labels": (np.arange(n) % 10).astype(np.int64),
        "boxes": rng.uniform(0.2, 0.8, (n, 4)).astype(np.float32),
    }


def test_specialist_stages_have_resnet_names_shapes_and_layout():
    model = experts.Specialist(3, (4, 5, 6), "box")
    out = model.stages(torch.zeros(2, 1, 8, 8))
    assert list(out) == list(experts.STAGES)
    assert out["layer1"].shape == (2, 4, 8, 8) and out["layer2"].shape == (2, 5, 4, 4)
    assert out["layer3"].shape == (2, 6, 2, 2) and out["pre_fc"].shape == (2, 6)
    assert model.layout == {"layer1": (4, 1), "layer2": (5, 2), "layer3": (6, 4)}
    assert model.feature_dim == 6 and model.head_box.out_features == 4
    assert experts.Specialist(3, (4, 5, 6), "cls").head_box is None
    assert torch.equal(
        model(torch.ones(1, 1, 8, 8)), model.stages(torch.ones(1, 1, 8, 8))["pre_fc"]
    )


def test_box_loss_is_smooth_l1_of_the_sigmoid():
    logits = torch.tensor([[0.0, 0.0, 0.0, 0.0]])
    boxes = torch.tensor([[0.5, 0.5, 0.5, 0.6]])
    # sigmoid(0) = 0.5: one error of 0.1 > beta = 0.05 -> 0.1 - 0.025, mean over 4 coordinates
    assert experts.box_loss(logits, boxes, 0.05).item() == pytest.approx(0.075 / 4, rel=1e-5)
    # below beta the loss is quadratic: 0.5 * 0.02^2 / 0.05
    near = torch.tensor([[0.5, 0.5, 0.5, 0.52]])
    assert experts.box_loss(logits, near, 0.05).item() == pytest.approx(
        0.5 * 0.02**2 / 0.05 / 4, rel=1e-4
    )


def test_task_loss_is_ce_for_the_classifier_and_box_plus_weighted_ce_for_the_detector():
    torch.manual_seed(0)
    pooled, labels = torch.randn(4, 6), torch.tensor([0, 1, 2, 3])
    boxes = torch.rand(4, 4)
    cls, det = experts.Specialist(3, (4, 5, 6), "cls"), experts.Specialist(3, (4, 5, 6), "box")
    ce = F.cross_entropy(cls.head_cls(pooled), labels)
    assert experts.task_loss(cls, pooled, labels, boxes, 0.1, 0.05).item() == pytest.approx(
        ce.item()
    )
    expected = experts.box_loss(det.head_box(pooled), boxes, 0.05) + 0.3 * F.cross_entropy(
        det.head_cls(pooled), labels
    )
    got = experts.task_loss(det, pooled, labels, boxes, 0.3, 0.05)
    assert got.item() == pytest.approx(expected.item())


def test_minibatches_partition_the_range():
    batches = experts.minibatches(10, 4, np.random.default_rng(0))
    assert [len(b) for b in batches] == [4, 4, 2]
    assert sorted(np.concatenate(batches).tolist()) == list(range(10))
    assert not np.array_equal(np.concatenate(batches), np.arange(10))


def test_train_specialist_learns_and_returns_a_frozen_eval_model():
    pool = tiny_pool(40)
    pool["labels"] = (pool["images"].mean(axis=(1, 2, 3)) > 0).astype(np.int64)
    pool["images"] += pool["labels"][:, None, None, None] * 2.0
    model = experts.train_specialist(pool, "cls", 3, (4, 5, 6), 15, 0.02, 20, 0.1, 0.05,
                                     np.random.default_rng(0))  # fmt: skip
    assert not model.training and not any(p.requires_grad for p in model.parameters())
    logits = model.head_cls(model(torch.as_tensor(pool["images"])))
    assert (logits.argmax(1).numpy() == pool["labels"]).mean() >= 0.9
    det = experts.train_specialist(pool, "box", 3, (4, 5, 6), 1, 0.01, 20, 0.1, 0.05,
                                   np.random.default_rng(0))  # fmt: skip
    assert det.task == "box" and det.head_box is not None


def test_load_specialist_round_trips_and_pooled_features_are_batched():
    model = tiny("cls")
    again = experts.load_specialist(model.state_dict(), 3, (4, 5, 6), "cls")
    images = tiny_pool(7)["images"]
    feats = experts.pooled_features(again, images, batch=3)
    assert feats.shape == (7, 6)
    assert np.allclose(feats, model(torch.as_tensor(images)).numpy(), atol=1e-6)
    assert not any(p.requires_grad for p in again.parameters()) and not again.training


def central(selective="none", task="cls"):
    main, aux = (tiny("cls"), tiny("box", 1)) if task == "cls" else (tiny("box", 1), tiny("cls"))
    return CentralModel(main, aux, ("layer1", "layer2", "layer3"), selective)


def test_heads_start_as_copies_of_the_experts_heads():
    c = central("feature")
    heads = socialisation.make_heads(c, "cls")
    assert set(heads) == {"main", "aux", "fused"}
    assert torch.equal(heads["main"].weight, c.main.head_cls.weight)
    assert torch.equal(heads["aux"].weight, c.aux.head_cls.weight)
    assert torch.equal(heads["fused"].weight, c.main.head_cls.weight)
    assert heads["main"] is not c.main.head_cls
    assert set(socialisation.make_heads(central("late"), "cls")) == {"main", "aux"}
    assert set(socialisation.make_heads(central(), "cls")) == {"main"}
    box = socialisation.make_heads(central(task="box"), "box")
    assert set(box) == {"cls", "box"} and torch.equal(
        box["box"].bias, central(task="box").main.head_box.bias
    )


def outputs(c, n=6):
    torch.manual_seed(3)
    return c.branches(torch.randn(n, 1, 8, 8))


def test_collaboration_loss_without_selective_is_the_main_ce():
    c = central()
    heads = socialisation.make_heads(c, "cls")
    out, labels = outputs(c), torch.arange(6)
    loss = socialisation.collaboration_loss(c, heads, out, labels, None, "cls", 0.1, 0.05)
    assert loss.item() == pytest.approx(
        F.cross_entropy(heads["main"](out["p_main"]), labels).item()
    )


def test_box_collaboration_loss_is_the_detector_objective():
    c = central(task="box")
    heads = socialisation.make_heads(c, "box")
    out, labels, boxes = outputs(c), torch.arange(6), torch.rand(6, 4)
    expected = experts.box_loss(heads["box"](out["p_main"]), boxes, 0.05) + 0.2 * F.cross_entropy(
        heads["cls"](out["p_main"]), labels
    )
    got = socialisation.collaboration_loss(c, heads, out, labels, boxes, "box", 0.2, 0.05)
    assert got.item() == pytest.approx(expected.item())


def test_selective_loss_is_fused_ce_plus_branch_ce_plus_tcp_l1():
    c = central("feature")
    heads = socialisation.make_heads(c, "cls")
    out, labels = outputs(c), torch.arange(6)
    z_m, z_a = heads["main"](out["p_main"]), heads["aux"](out["p_aux"])
    tcp_m = torch.softmax(z_m, 1)[torch.arange(6), labels]
    tcp_a = torch.softmax(z_a, 1)[torch.arange(6), labels]
    branch = (
        F.cross_entropy(z_m, labels) + F.cross_entropy(z_a, labels)
        + (out["c_main"] - tcp_m).abs().mean() + (out["c_aux"] - tcp_a).abs().mean()
    )  # fmt: skip
    assert socialisation.branch_losses(heads, out, labels).item() == pytest.approx(
        branch.item(), rel=1e-5
    )
    fused = out["w_main"][:, None] * out["p_main"] + out["w_aux"][:, None] * out["p_aux"]
    total = F.cross_entropy(heads["fused"](fused), labels) + branch
    got = socialisation.collaboration_loss(c, heads, out, labels, None, "cls", 0.1, 0.05)
    assert got.item() == pytest.approx(total.item(), rel=1e-5)


def test_late_fusion_weights_the_branch_logits():
    c = central("late")
    heads = socialisation.make_heads(c, "cls")
    out = outputs(c)
    expected = out["w_main"][:, None] * heads["main"](out["p_main"]) + out["w_aux"][
        :, None
    ] * heads["aux"](out["p_aux"])
    assert torch.allclose(socialisation.fused_logits(heads, out, "late"), expected)


def test_confidnets_learn_only_from_the_tcp_loss():
    c = central("feature")
    heads = socialisation.make_heads(c, "cls").requires_grad_(True)
    out, labels = outputs(c), torch.arange(6)
    F.cross_entropy(socialisation.fused_logits(heads, out, "feature"), labels).backward()
    assert all(p.grad is None for p in c.confid_main.parameters())
    assert all(p.grad is None for p in c.transfer.parameters())


def test_train_central_trains_only_the_collaboration_modules():
    c = central("feature")
    before_main = {k: v.clone() for k, v in c.main.state_dict().items()}
    before_aux = {k: v.clone() for k, v in c.aux.state_dict().items()}
    gamma = c.transfer["layer2"].paths["layer1"][1].weight.clone()
    confid = c.confid_main.net[0].weight.clone()
    fit = socialisation.train_central(c, tiny_pool(24), "cls", VariantParams(), 2, 0.01, 8, 0.1, 0.05,
                                      np.random.default_rng(0))  # fmt: skip
    assert (
        fit["steps"] == 6 and fit["lam"] == 0.59 and set(fit["heads"]) == {"main", "aux", "fused"}
    )
    assert all(torch.equal(v, before_main[k]) for k, v in c.main.state_dict().items())
    assert all(torch.equal(v, before_aux[k]) for k, v in c.aux.state_dict().items())
    assert not torch.equal(c.transfer["layer2"].paths["layer1"][1].weight, gamma)
    assert not torch.equal(c.confid_main.net[0].weight, confid)
    assert not c.training


def test_train_central_sets_lambda_per_iteration_and_keeps_the_last():
    c = central()
    seen = []
    original = c.branches

    def spy(x):
        seen.append(c.lam)
        return original(x)

    c.branches = spy
    variant = VariantParams(lambda_schedule="sin", lambda_T=8)
    fit = socialisation.train_central(c, tiny_pool(16), "cls", variant, 2, 0.01, 4, 0.1, 0.05,
                                      np.random.default_rng(0))  # fmt: skip
    assert seen == pytest.approx([abs(np.sin(np.pi * i / 8)) for i in range(8)])
    assert fit["lam"] == pytest.approx(1.0)  # i = T maps to i = 100 -> |sin(100 pi / 8)| = 1


def test_selective_weight_values_are_w_main_or_empty():
    c = central("feature").eval()
    images = tiny_pool(5)["images"]
    w = socialisation.selective_weight_values(c, images, batch=2)
    assert w.shape == (5,) and np.allclose(w, c.branches(torch.as_tensor(images))["w_main"].numpy())
    assert socialisation.selective_weight_values(central(), images).size == 0


def test_transfer_blocks_get_gradients_from_the_main_task():
    c = central()
    for m in c.transfer.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
    heads = socialisation.make_heads(c, "cls").requires_grad_(True)
    out = outputs(c)
    socialisation.collaboration_loss(
        c, heads, out, torch.arange(6), None, "cls", 0.1, 0.05
    ).backward()
    assert c.transfer["layer3"].paths["layer3"][0].weight.grad.abs().sum() > 0
    assert all(p.grad is None for p in c.aux.parameters())


def test_specialist_convs_have_no_bias_before_their_batch_norm():
    # ResNet's conv-BN layout: the BN shift is the only bias, so a saved state has no conv bias
    keys = set(experts.Specialist(3, (4, 5, 6), "cls").state_dict())
    for stage in ("pre_layer", "layer1", "layer2", "layer3"):
        assert f"{stage}.0.weight" in keys and f"{stage}.0.bias" not in keys
        assert f"{stage}.1.bias" in keys


def test_train_specialist_trains_on_the_requested_device():
    # the meta device stands in for an accelerator: any tensor left on the CPU fails the step
    pool = tiny_pool(8)
    model = experts.train_specialist(pool, "box", 3, (4, 5, 6), 1, 0.01, 4, 0.1, 0.05,
                                     np.random.default_rng(0), device="meta")  # fmt: skip
    assert {p.device.type for p in model.parameters()} == {"meta"}
    assert not model.training and not any(p.requires_grad for p in model.parameters())


def test_train_central_trains_on_the_central_models_device():
    c = central("feature").to("meta")
    fit = socialisation.train_central(c, tiny_pool(8), "cls", VariantParams(), 1, 0.01, 4, 0.1, 0.05,
                                      np.random.default_rng(0))  # fmt: skip
    assert fit["steps"] == 2
    assert {p.device.type for p in fit["heads"].parameters()} == {"meta"}


def test_every_specialist_stage_ends_in_a_relu():
    torch.manual_seed(0)
    model = experts.Specialist(3, (4, 5, 6), "cls").train()
    out = model.stages(torch.randn(4, 1, 8, 8))
    for stage in ("pre_layer", "layer1", "layer2", "layer3"):
        assert out[stage].min() == 0.0 and out[stage].max() > 0  # BN output half negative, clipped


def test_box_socialisation_leaves_the_detector_and_its_box_head_untouched():
    c = central(task="box")
    before = {k: v.clone() for k, v in c.main.state_dict().items()}
    fit = socialisation.train_central(c, tiny_pool(8), "box", VariantParams(), 1, 0.05, 4, 0.1, 0.05,
                                      np.random.default_rng(0))  # fmt: skip
    assert all(torch.equal(v, before[k]) for k, v in c.main.state_dict().items())
    assert not torch.equal(fit["heads"]["box"].weight, c.main.head_box.weight)  # the copy trained


def test_train_central_takes_one_adam_step_of_size_lr_on_the_heads():
    # Adam's first step moves every parameter with a non-zero gradient by lr (m / sqrt(v) = sign g)
    c = central()
    start = c.main.head_cls.weight.clone()
    fit = socialisation.train_central(c, tiny_pool(8), "cls", VariantParams(), 1, 0.05, 8, 0.1, 0.05,
                                      np.random.default_rng(0))  # fmt: skip
    assert fit["steps"] == 1 and all(p.requires_grad for p in fit["heads"].parameters())
    step = (fit["heads"]["main"].weight - start).abs()
    assert step.max().item() == pytest.approx(0.05, rel=1e-3)
    assert torch.all((step < 1e-6) | ((step - 0.05).abs() < 1e-4))


def test_box_socialisation_trains_on_the_central_models_device():
    c = central(task="box").to("meta")
    fit = socialisation.train_central(c, tiny_pool(8), "box", VariantParams(), 1, 0.01, 4, 0.1, 0.05,
                                      np.random.default_rng(0))  # fmt: skip
    assert fit["steps"] == 2 and {p.device.type for p in fit["heads"].parameters()} == {"meta"}


def test_a_specialist_starts_from_the_torch_seed_drawn_below_2_to_the_31():
    # no epoch: the returned weights are the initial ones, from torch.manual_seed(rng.integers(2**31))
    pool = {"images": np.zeros((4, 1, 8, 8), np.float32), "labels": np.zeros(4, np.int64),
            "boxes": np.full((4, 4), 0.5, np.float32)}  # fmt: skip
    model = experts.train_specialist(pool, "cls", 3, [4, 5, 6], 0, 0.01, 2, 1.0, 1.0, np.random.default_rng(4))  # fmt: skip  # noqa: E501
    torch.manual_seed(int(np.random.default_rng(4).integers(2**31)))
    expect = experts.Specialist(3, [4, 5, 6], "cls").state_dict()
    assert all(torch.equal(v, expect[k]) for k, v in model.state_dict().items())
