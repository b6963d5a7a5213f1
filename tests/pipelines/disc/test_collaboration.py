"""DISC's collaboration modules pinned on hand-checkable cases and on random tensors in ResNet-50's layout
(256/512/1024 channels at strides 4/8/16), the anchor the issue asks for in place of the official code."""

import math

import pytest
import torch
from torch import nn

from paper_pipelines.pipelines.disc import collaboration as co
from paper_pipelines.pipelines.disc.experts import Specialist

RESNET50 = {"layer1": (256, 4), "layer2": (512, 8), "layer3": (1024, 16)}


def resnet_features(batch=2, side=32):
    torch.manual_seed(0)
    return {
        name: torch.randn(batch, c, side // s * 4 // 4, side // s * 4 // 4)
        for name, (c, s) in RESNET50.items()
    }


def test_sources_are_the_hierarchy_of_lower_levels():
    assert co.sources_of("layer1") == ("layer1",)
    assert co.sources_of("layer2") == ("layer1", "layer2")
    assert co.sources_of("layer3") == ("layer1", "layer2", "layer3")


def test_same_resolution_path_is_1x1_conv_without_bias_then_bn():
    path = co.transfer_path(512, 512, 1)
    assert [type(m) for m in path] == [nn.Conv2d, nn.BatchNorm2d]
    assert path[0].kernel_size == (1, 1) and path[0].bias is None and path[0].stride == (1, 1)


def test_fourfold_path_is_two_strided_convs_with_bn_relu_between_and_bn_last():
    path = co.transfer_path(256, 1024, 4)
    types = [type(m) for m in path]
    assert types == [nn.Conv2d, nn.BatchNorm2d, nn.ReLU, nn.Conv2d, nn.BatchNorm2d]
    first, last = path[0], path[3]
    assert (first.in_channels, first.out_channels) == (256, 256)  # intermediate keeps the source
    assert (last.in_channels, last.out_channels) == (256, 1024)
    for conv in (first, last):
        assert conv.kernel_size == (3, 3) and conv.stride == (2, 2) and conv.padding == (1, 1)
        assert conv.bias is None
    assert path[1].num_features == 256 and path[4].num_features == 1024


def test_twofold_path_is_one_strided_conv():
    path = co.transfer_path(16, 32, 2)
    assert [type(m) for m in path] == [nn.Conv2d, nn.BatchNorm2d]
    assert path[0].stride == (2, 2) and path[0].kernel_size == (3, 3)


def test_eightfold_path_has_log2_convs():
    convs = [m for m in co.transfer_path(8, 8, 8) if isinstance(m, nn.Conv2d)]
    assert len(convs) == 3


@pytest.mark.parametrize("ratio", [0, 3, 6])
def test_non_power_of_two_ratio_is_rejected(ratio):
    with pytest.raises(ValueError, match="power-of-two"):
        co.transfer_path(4, 4, ratio)


@pytest.mark.parametrize("level", ["layer1", "layer2", "layer3"])
def test_transfer_blocks_map_every_source_to_the_main_stage_shape_in_resnet50_layout(level):
    feats = resnet_features()
    block = co.TransferBlock(level, RESNET50)
    assert tuple(block.paths) == co.sources_of(level)
    for src, path in block.paths.items():
        assert path(feats[src]).shape == feats[level].shape, (src, level)
    assert block(feats).shape == feats[level].shape


def test_zero_initialised_transfer_is_an_exact_no_op_in_train_and_eval_mode():
    feats = resnet_features()
    block = co.TransferBlock("layer3", RESNET50)
    for mode in (True, False):
        block.train(mode)
        assert torch.count_nonzero(block(feats)) == 0


def test_init_draws_conv_weights_from_n_0_1e3_and_zeroes_bn():
    torch.manual_seed(1)
    block = co.TransferBlock("layer3", RESNET50)
    conv = block.paths["layer1"][3]  # 1024 x 256 x 3 x 3 weights
    assert abs(conv.weight.std().item() - 1e-3) < 5e-5
    assert abs(conv.weight.mean().item()) < 1e-5
    for m in block.modules():
        if isinstance(m, nn.BatchNorm2d):
            assert torch.all(m.weight == 0) and torch.all(m.bias == 0)


def test_transfer_block_sums_its_paths():
    feats = resnet_features()
    block = co.TransferBlock("layer2", RESNET50)
    for m in block.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
    block.eval()
    expected = block.paths["layer1"](feats["layer1"]) + block.paths["layer2"](feats["layer2"])
    assert torch.allclose(block(feats), expected)


def test_transfer_block_stops_the_gradient_into_the_auxiliary_features():
    feats = {k: v.requires_grad_(True) for k, v in resnet_features().items()}
    block = co.TransferBlock("layer2", RESNET50)
    nn.init.ones_(block.paths["layer2"][1].weight)
    block(feats).sum().backward()
    assert feats["layer1"].grad is None and feats["layer2"].grad is None
    assert block.paths["layer2"][0].weight.grad is not None


def test_inject_adds_lambda_times_the_transfer():
    h, t = torch.tensor([1.0, 2.0]), torch.tensor([10.0, -4.0])
    assert torch.allclose(co.inject(h, t, 0.5), torch.tensor([6.0, 0.0]))


def test_sin_schedule_follows_abs_sin_and_the_released_clamp():
    assert co.sin_schedule(0, 200) == 0.0
    assert co.sin_schedule(100, 200) == pytest.approx(1.0)
    assert co.sin_schedule(50, 200) == pytest.approx(math.sin(math.pi / 4))
    assert co.sin_schedule(150, 200) == pytest.approx(math.sin(3 * math.pi / 4))
    assert co.sin_schedule(-5, 200) == 0.0
    # released code: i >= T is mapped to i = 100
    assert co.sin_schedule(200, 200) == pytest.approx(1.0)
    assert co.sin_schedule(900, 400) == pytest.approx(math.sin(math.pi / 4))
    assert co.sin_schedule(399, 400) == pytest.approx(abs(math.sin(399 * math.pi / 400)))
    # (max - min) scaling plus min
    assert co.sin_schedule(50, 200, hi=0.8, lo=0.2) == pytest.approx(
        0.2 + 0.6 * math.sin(math.pi / 4)
    )


def test_lambda_at_constant_or_schedule():
    assert co.lambda_at(37, 0.59, "constant", 200, 1.0, 0.0) == 0.59
    assert co.lambda_at(50, 0.59, "sin", 200, 1.0, 0.0) == pytest.approx(math.sin(math.pi / 4))
    assert co.lambda_at(50, 0.59, "sin", 200, 0.5, 0.1) == pytest.approx(
        0.1 + 0.4 * math.sin(math.pi / 4)
    )


def test_holo_confidence_co_belief_and_weights_by_hand():
    c_main, c_aux = torch.tensor([0.9]), torch.tensor([0.5])
    h_main = co.holo_confidence(c_main, c_aux)
    h_aux = co.holo_confidence(c_aux, c_main)
    assert h_main.item() == pytest.approx(math.log(0.5) / math.log(0.45), abs=1e-6)  # 0.868
    assert h_aux.item() == pytest.approx(math.log(0.9) / math.log(0.45), abs=1e-6)  # 0.132
    b_main, b_aux = co.co_belief(c_main, c_aux)
    assert b_main.item() == pytest.approx(1.768, abs=1e-3)
    assert b_aux.item() == pytest.approx(0.632, abs=1e-3)
    w_main, w_aux = co.selective_weights(c_main, c_aux)
    assert w_main.item() == pytest.approx(0.757, abs=1e-3)
    assert w_aux.item() == pytest.approx(0.243, abs=1e-3)


def test_holo_confidence_uses_the_eps_guard():
    # ln(1 * 1) = 0: the 1e-8 in the denominator keeps it finite
    assert co.holo_confidence(torch.tensor([1.0]), torch.tensor([1.0])).item() == 0.0
    c_self, c_other = torch.tensor([0.999999]), torch.tensor([0.999999])
    expected = math.log(0.999999) / (2 * math.log(0.999999) + 1e-8)
    assert co.holo_confidence(c_self, c_other).item() == pytest.approx(expected, rel=1e-3)


def test_sure_main_gets_the_larger_weight_and_weights_sum_to_one():
    sure = torch.tensor([0.999, 0.95, 0.3, 0.01])
    other = torch.tensor([0.3, 0.5, 0.999, 0.6])
    w_main, w_aux = co.selective_weights(sure, other)
    assert w_main[0] > 0.5 and w_main[1] > 0.5
    assert w_main[2] < 0.5 and w_main[3] < 0.5
    assert torch.allclose(w_main + w_aux, torch.ones(4))
    w_swapped, _ = co.selective_weights(other, sure)
    assert torch.allclose(w_swapped, w_aux)


def test_co_belief_is_detached():
    c_main = torch.tensor([0.7], requires_grad=True)
    b_main, b_aux = co.co_belief(c_main, torch.tensor([0.4]))
    assert not b_main.requires_grad and not b_aux.requires_grad


def test_fuse_is_the_weighted_sum_of_detached_features():
    p_main = torch.tensor([[1.0, 2.0]], requires_grad=True)
    p_aux = torch.tensor([[3.0, -1.0]])
    out = co.fuse(p_main, p_aux, torch.tensor([0.25]), torch.tensor([0.75]))
    assert torch.allclose(out, torch.tensor([[2.5, -0.25]]))
    assert not out.requires_grad


def test_confidnet_is_three_linears_then_sigmoid_with_nothing_between():
    net = co.ConfidNet(6)
    linears = [m for m in net.net if isinstance(m, nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(6, 12), (12, 6), (6, 1)]
    assert isinstance(net.net[-1], nn.Sigmoid) and len(net.net) == 4
    torch.manual_seed(0)
    x1, x2 = torch.randn(1, 6), torch.randn(1, 6)
    c = net(torch.cat([x1, x2, (x1 + x2) / 2]))
    assert c.shape == (3,) and torch.all((c > 0) & (c < 1))
    logit = torch.log(c / (1 - c))
    # affine before the sigmoid: the logit of the midpoint is the mean of the logits
    assert logit[2].item() == pytest.approx(((logit[0] + logit[1]) / 2).item(), abs=1e-5)


def test_true_class_probability_is_detached_softmax_of_the_label():
    logits = torch.tensor([[0.0, math.log(3.0)], [math.log(4.0), 0.0]], requires_grad=True)
    tcp = co.true_class_probability(logits, torch.tensor([1, 1]))
    assert torch.allclose(tcp, torch.tensor([0.75, 0.2]))
    assert not tcp.requires_grad


def test_tcp_loss_is_mean_absolute_error():
    loss = co.tcp_loss(torch.tensor([0.9, 0.2]), torch.tensor([0.5, 0.6]))
    assert loss.item() == pytest.approx(0.4)


def small_central(selective="none", levels=("layer1", "layer2", "layer3")):
    torch.manual_seed(0)
    main, aux = Specialist(4, (4, 6, 8), "cls").eval(), Specialist(4, (4, 6, 8), "box").eval()
    for m in (main, aux):
        m.requires_grad_(False)
    return co.CentralModel(main, aux, levels, selective)


def test_central_model_before_training_equals_the_isolated_expert_exactly():
    central = small_central()
    x = torch.randn(5, 1, 12, 12)
    central.lam = 1.0
    assert torch.equal(central(x), central.main(x))
    central.train()
    assert torch.equal(central.branches(x)["p_main"], central.main(x))


def test_central_model_keeps_specialists_in_eval_mode_and_builds_the_chosen_levels():
    central = small_central(levels=("layer2", "layer3"))
    central.train()
    assert not central.main.training and not central.aux.training
    assert central.transfer.training
    assert tuple(central.transfer) == ("layer2", "layer3")
    assert not hasattr(central, "confid_main")


def test_transferred_knowledge_propagates_to_the_next_stage():
    central = small_central(levels=("layer1",))
    for m in central.transfer.modules():
        if isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
    central.eval()
    x = torch.randn(3, 1, 12, 12)
    central.lam = 0.0
    assert torch.allclose(central(x), central.main(x))
    central.lam = 0.59
    assert not torch.allclose(central(x), central.main(x))


def test_selective_central_model_returns_the_fused_or_weighted_concat_feature():
    x = torch.randn(4, 1, 12, 12)
    central = small_central("feature").eval()
    out = central.branches(x)
    assert torch.allclose(out["w_main"] + out["w_aux"], torch.ones(4))
    expected = out["w_main"][:, None] * out["p_main"] + out["w_aux"][:, None] * out["p_aux"]
    assert torch.allclose(central(x), expected)
    assert torch.allclose(out["c_main"], central.confid_main(out["p_main"]))
    late = small_central("late").eval()
    out = late.branches(x)
    feat = late(x)
    assert feat.shape == (4, 16)
    assert torch.allclose(feat[:, :8], out["w_main"][:, None] * out["p_main"])
    assert torch.allclose(feat[:, 8:], out["w_aux"][:, None] * out["p_aux"])


def test_unknown_selective_mode_is_rejected():
    with pytest.raises(ValueError, match="selective"):
        small_central("gate")


def test_central_model_starts_at_the_released_constant_lambda():
    # the released code's lambda_aux = 0.59 until a schedule (train_central) sets it
    assert small_central().lam == 0.59


def test_central_model_defaults_to_hierarchical_collaboration_only():
    torch.manual_seed(0)
    main, aux = Specialist(4, (4, 6, 8), "cls").eval(), Specialist(4, (4, 6, 8), "box").eval()
    central = co.CentralModel(main, aux, ("layer1",))
    assert central.selective == "none" and not hasattr(central, "confid_main")
    x = torch.randn(2, 1, 12, 12)
    assert torch.equal(central(x), central.branches(x)["p_main"])
