"""TTA baselines and the source model on tiny hand-made networks whose outputs can be checked by hand."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from paper_pipelines.pipelines.tca.baselines import (
    T3A,
    BNAdapt,
    FrozenTent,
    SourceOnly,
    Tent,
    configure_tent,
    iterate_stream,
    make_method,
    run_stream,
)
from paper_pipelines.pipelines.tca.metrics import state_fingerprint
from paper_pipelines.pipelines.tca.source_model import (
    FeaturizerClassifier,
    ResNet,
    SmallCNN,
    accuracy,
    build_model,
    clean_accuracy,
    map_checkpoint_keys,
    normalise,
    random_shift,
    record_from_checkpoint,
    to_float_images,
    train_digits_model,
    train_source,
)


class Linear2(FeaturizerClassifier):
    """z = x (identity featurizer), logits = z @ W^T + b: every output is arithmetic by hand."""

    def __init__(self, weight, bias=(0.0, 0.0)):
        super().__init__()
        self.featurizer = nn.Identity()
        self.classifier = nn.Linear(2, 2)
        with torch.no_grad():
            self.classifier.weight.copy_(torch.tensor(weight))
            self.classifier.bias.copy_(torch.tensor(bias))


def _bn_model(seed: int = 0) -> FeaturizerClassifier:
    torch.manual_seed(seed)
    m = FeaturizerClassifier()
    m.featurizer = nn.Sequential(
        nn.Conv2d(1, 4, 1), nn.BatchNorm2d(4), nn.AdaptiveAvgPool2d(1), nn.Flatten()
    )
    m.classifier = nn.Linear(4, 2)
    return m


def test_iterate_stream_prepares_batches_in_the_given_order():
    images = torch.arange(10.0).view(10, 1)
    order = np.array([9, 3, 0, 1, 2, 4, 5, 6, 7, 8])
    got = list(iterate_stream(images, order, 4, 3, lambda x: 2 * x, "cpu"))
    assert [idx.tolist() for idx, _ in got] == [
        [9, 3, 0, 1],
        [2, 4, 5, 6, 7, 8],
    ]  # tail 2 < 3 merged
    assert got[0][1].flatten().tolist() == [18.0, 6.0, 0.0, 2.0]


def test_source_only_and_bn_adapt_modes():
    model = _bn_model()
    x = torch.randn(8, 1, 2, 2) * 5 + 3
    src = SourceOnly(model)
    assert not model.training
    z, logits = src(x)
    assert torch.allclose(logits, model.classifier(model.featurizer(x)))
    assert src.classifier is model.classifier
    bn = BNAdapt(_bn_model())
    assert bn.model.training and bn.classifier is bn.model.classifier
    z, _ = bn(x)
    # batch statistics: each BN output channel has zero mean over the batch (affine = 1, 0 at init),
    # and pooling averages the pixels, so z has zero mean over the batch too
    assert torch.allclose(z.mean(0), torch.zeros(4), atol=1e-5)


def test_configure_tent_frees_only_the_norm_affine():
    model = _bn_model()
    params = configure_tent(model)
    bn = model.featurizer[1]
    assert [p.shape for p in params] == [torch.Size([4]), torch.Size([4])]
    assert bn.track_running_stats is False and bn.running_mean is None and bn.running_var is None
    assert model.training and not model.featurizer[0].weight.requires_grad
    assert bn.weight.requires_grad and not model.classifier.weight.requires_grad
    ln = FeaturizerClassifier()
    ln.featurizer, ln.classifier = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4)), nn.Linear(4, 2)
    assert configure_tent(ln)[0] is ln.featurizer[1].weight
    assert len(configure_tent(ln)) == 2  # LayerNorm's weight and bias count as well
    with pytest.raises(ValueError, match="normalisation layers with affine parameters"):
        configure_tent(Linear2([[1.0, 0.0], [0.0, 1.0]]))


def test_tent_returns_outputs_from_before_each_update_and_takes_steps():
    x = torch.randn(16, 1, 2, 2)
    tent = Tent(_bn_model(), lr=0.0, steps=1)  # lr 0: the outputs are BN's in train mode
    bn = BNAdapt(_bn_model())
    assert torch.allclose(tent(x)[1], bn(x)[1], atol=1e-6)
    assert Tent(_bn_model(), lr=0.05).steps == 1  # one step per batch by default
    tent = Tent(_bn_model(), lr=0.05, steps=3)
    before = tent.model.featurizer[1].weight.detach().clone()
    z, logits = tent(x)
    state = tent.optimizer.state[tent.model.featurizer[1].weight]
    assert int(state["step"]) == 3  # three Adam steps on the one batch
    assert not torch.equal(tent.model.featurizer[1].weight, before)
    assert not z.requires_grad and not logits.requires_grad
    # the last step's outputs were computed before that step's update
    frozen = FrozenTent(tent.model)
    assert not torch.allclose(frozen(x)[1], logits)


def test_t3a_prototypes_by_hand():
    """Warm supports are the head rows e0 (class 0) and e1 (class 1). The batch z = (2, 0.5) is class
    0 and more confident than e0, so with K = 1 class 0's prototype is (4, 1)/sqrt(17) and the logits
    are (8.5 / sqrt(17), 0.5)."""
    t3a = T3A(Linear2([[1.0, 0.0], [0.0, 1.0]]), filter_k=1)
    z, logits = t3a(torch.tensor([[2.0, 0.5]]))
    assert torch.allclose(logits, torch.tensor([[8.5 / 17**0.5, 0.5]]), atol=1e-6)
    assert t3a.supports.tolist() == [[2.0, 0.5], [0.0, 1.0]]
    keep_all = T3A(Linear2([[1.0, 0.0], [0.0, 1.0]]), filter_k=-1)
    keep_all(torch.tensor([[2.0, 0.5], [0.1, 3.0]]))
    assert keep_all.supports.shape == (4, 2) and keep_all.labels.argmax(1).tolist() == [0, 1, 0, 1]


def test_make_method_copies_the_source_and_rejects_unknown_names():
    model = _bn_model()
    before = state_fingerprint(model)
    kinds = {
        name: type(make_method(name, model, tent_lr=1e-3, steps=1, t3a_filter_k=4)).__name__
        for name in ("source", "bn", "tent", "t3a")
    }
    assert kinds == {"source": "SourceOnly", "bn": "BNAdapt", "tent": "Tent", "t3a": "T3A"}
    t3a = make_method("t3a", model, tent_lr=1e-3, steps=1, t3a_filter_k=4)
    assert t3a.filter_k == 4 and t3a.model is not model
    tent = make_method("tent", model, tent_lr=0.02, steps=2, t3a_filter_k=4)
    assert tent.steps == 2 and tent.optimizer.param_groups[0]["lr"] == 0.02
    assert state_fingerprint(model) == before and model.featurizer[1].track_running_stats
    with pytest.raises(ValueError, match="unknown TTA method 'cotta'"):
        make_method("cotta", model, tent_lr=1e-3, steps=1, t3a_filter_k=4)


def test_run_stream_times_itself_and_restores_the_order():
    model = Linear2([[1.0, 2.0], [3.0, 4.0]])
    x = torch.arange(12.0).view(6, 2)
    out = run_stream(
        SourceOnly(model),
        x,
        np.array([5, 4, 3, 2, 1, 0]),
        batch_size=4,
        min_last=1,
        prepare=lambda b: b,
        device="cpu",
    )
    assert torch.equal(out.z, x)
    assert torch.allclose(out.logits, x @ torch.tensor([[1.0, 3.0], [2.0, 4.0]]))
    assert 0.0 <= out.seconds < 10.0


# ----------------------------------------------------------------------------- source model


def test_small_cnn_shapes():
    net = SmallCNN(in_channels=3, width=4, num_classes=7)
    z = net.featurizer(torch.zeros(2, 3, 16, 16))
    assert z.shape == (2, 16)  # 4 w channels after global pooling
    assert net(torch.zeros(2, 3, 16, 16)).shape == (2, 7)
    assert net.featurizer[3].stride == (2, 2) and net.featurizer[6].stride == (2, 2)


def test_build_model_and_resnet_depths():
    assert isinstance(build_model("small_cnn", 5, width=2), SmallCNN)
    assert build_model("small_cnn", 5, width=2, in_channels=3).featurizer[0].in_channels == 3
    r18 = build_model("resnet18", 10)
    assert isinstance(r18, ResNet) and r18.classifier.in_features == 512
    assert len(r18.featurizer.layer1) == 2 and r18.featurizer.layer1[0].downsample is None
    assert r18.featurizer.layer2[0].downsample is not None  # stride 2: a 1x1 projection
    with pytest.raises(ValueError, match="unknown arch 'vgg'"):
        build_model("vgg", 10)
    with pytest.raises(ValueError, match="depth must be 18 or 50, got 34"):
        ResNet(depth=34)


def test_checkpoint_wrappers_and_prefixes_are_removed():
    w = torch.zeros(1)
    state = {"state_dict": {"module.fc.weight": w, "model.conv1.weight": w}}
    assert set(map_checkpoint_keys(state)) == {"classifier.weight", "featurizer.conv1.weight"}
    assert set(map_checkpoint_keys({"model_dict": {"featurizer.4.0.conv1.weight": w}})) == {
        "featurizer.layer1.0.conv1.weight"
    }
    assert set(map_checkpoint_keys({"model": {"network.0.x": w, "classifier.bias": w}})) == {
        "classifier.bias"
    }
    # the official featurizer has 8 named children (0-7); a higher index is not renamed
    mapped = map_checkpoint_keys({"featurizer.7.1.bn2.bias": w, "featurizer.8.weight": w})
    assert set(mapped) == {"featurizer.layer4.1.bn2.bias", "featurizer.8.weight"}


def test_images_to_float_and_normalisation():
    x = to_float_images(np.array([[[0, 255], [51, 102]]], dtype=np.uint8))
    assert x.shape == (1, 1, 2, 2) and x.dtype == torch.float32
    assert x.flatten().tolist() == pytest.approx([0.0, 1.0, 0.2, 0.4])
    f = to_float_images(np.full((2, 3, 4, 4), 0.25, dtype=np.float64))
    assert f.shape == (2, 3, 4, 4) and f.dtype == torch.float32 and float(f.max()) == 0.25
    assert normalise(torch.tensor([0.0, 0.5, 1.0])).tolist() == [-1.0, 0.0, 1.0]


def test_random_shift_translates_with_zero_padding():
    x = torch.zeros(20, 1, 5, 5)
    x[:, 0, 2, 2] = 1.0
    assert random_shift(x, 0, torch.Generator()) is x
    out = random_shift(x, 1, torch.Generator().manual_seed(0))
    assert out.shape == x.shape and torch.all(out.sum((1, 2, 3)) == 1.0)  # 1 px never leaves
    where = [tuple(torch.nonzero(o[0])[0].tolist()) for o in out]
    assert all(abs(i - 2) <= 1 and abs(j - 2) <= 1 for i, j in where)
    assert len(set(where)) > 3  # shifts vary between images
    again = random_shift(x, 1, torch.Generator().manual_seed(0))
    assert torch.equal(out, again)  # the shifts come from the given generator


def test_training_learns_a_separable_toy_problem_and_reports_accuracy():
    rng = np.random.default_rng(0)
    y = np.arange(16) % 2
    images = np.zeros((16, 1, 4, 4), dtype=np.float32)
    images[y == 0, :, :2] = 1.0  # top half bright for class 0, bottom half for class 1
    images[y == 1, :, 2:] = 1.0
    images += 0.05 * rng.standard_normal(images.shape).astype(np.float32)
    torch.manual_seed(0)
    net = SmallCNN(width=2, num_classes=2)
    log = train_source(
        net, images, y, epochs=4, lr=3e-2, weight_decay=0.0, batch_size=5, shift_px=0, seed=0
    )
    assert [h["epoch"] for h in log["history"]] == list(range(1, 5))
    assert log["history"][-1]["loss"] < log["history"][0]["loss"]
    assert not net.training  # left in eval mode
    assert accuracy(net, images, y, batch_size=7) == 1.0  # a fraction
    assert clean_accuracy(net, images[:, 0], y) == 100.0  # a percentage, (N, H, W) accepted
    assert 0.0 < log["seconds"] < 60.0


def test_digits_model_record_and_checkpoint_record():
    rng = np.random.default_rng(1)
    splits = {
        "X_train": rng.integers(0, 256, (12, 1, 8, 8), dtype=np.uint8),
        "y_train": np.arange(12) % 3,
        "X_test": rng.integers(0, 256, (6, 8, 8), dtype=np.uint8),
        "y_test": np.arange(6) % 3,
    }
    record, log = train_digits_model(
        splits, arch="small_cnn", width=2, epochs=1, lr=1e-3, weight_decay=0.0,
        batch_size=6, shift_px=1, seed=0, num_classes=3,
    )  # fmt: skip
    assert {k: record[k] for k in ("arch", "num_classes", "width", "in_channels")} == {
        "arch": "small_cnn",
        "num_classes": 3,
        "width": 2,
        "in_channels": 1,
    }
    assert record["input_size"] is None and record["mean"] == [0.5] and record["std"] == [0.5]
    assert record["state_dict"]["classifier.weight"].shape == (3, 8)
    assert 0.0 <= log["clean_test_accuracy"] <= 100.0 and len(log["history"]) == 1
    torch.manual_seed(0)
    state = {f"module.{k}": v for k, v in ResNet(18, 4).state_dict().items()}
    rec, info = record_from_checkpoint(
        state, arch="resnet18", num_classes=4, input_size=32, mean=[0.1] * 3, std=[0.2] * 3
    )
    assert (rec["in_channels"], rec["input_size"], rec["mean"], rec["std"]) == (
        3,
        32,
        [0.1] * 3,
        [0.2] * 3,
    )
    assert info == {"checkpoint": "tca.source_checkpoint", "unexpected_keys": []}
    assert rec["num_classes"] == 4 and rec["arch"] == "resnet18"
    assert rec["state_dict"].keys() == ResNet(18, 4).state_dict().keys()
    assert torch.equal(rec["state_dict"]["classifier.weight"], state["module.classifier.weight"])
    for key in [k for k in state if "layer4" in k][:7]:
        del state[key]
    with pytest.raises(ValueError, match="does not fit tca.real_data.arch = 'resnet18'") as err:
        record_from_checkpoint(
            state, arch="resnet18", num_classes=4, input_size=32, mean=[0.1] * 3, std=[0.2] * 3
        )
    assert str(err.value).count("featurizer.layer4") == 5  # the first five missing keys are named


def _randomise_norms(model: nn.Module, seed: int) -> None:
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.weight.copy_(0.5 + torch.rand(m.num_features, generator=g))
                m.bias.copy_(0.2 * torch.randn(m.num_features, generator=g))
                m.running_mean.copy_(0.1 * torch.randn(m.num_features, generator=g))
                m.running_var.copy_(0.5 + torch.rand(m.num_features, generator=g))


def _bn(x, bn):
    return nn.functional.batch_norm(
        x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps
    )


def _reference_block(x, block):
    """torchvision's BasicBlock / Bottleneck written out: convs, norms, ReLUs and the shortcut."""
    relu = nn.functional.relu
    if hasattr(block, "conv3"):
        out = relu(_bn(block.conv1(x), block.bn1))
        out = relu(_bn(block.conv2(out), block.bn2))
        out = _bn(block.conv3(out), block.bn3)
    else:
        out = relu(_bn(block.conv1(x), block.bn1))
        out = _bn(block.conv2(out), block.bn2)
    short = x if block.downsample is None else _bn(block.downsample[0](x), block.downsample[1])
    return relu(out + short)


@pytest.mark.parametrize("depth", [18, 50])
def test_resnet_forward_matches_the_torchvision_layout_written_out(depth):
    torch.manual_seed(depth)
    net = ResNet(depth=depth, num_classes=3).eval()
    _randomise_norms(net, depth)
    trunk = net.featurizer
    x = torch.randn(1, 3, 32, 32)
    # stem: 7x7/2 conv, norm, ReLU, 3x3/2 max pool; then four stages; then global average pooling
    h = nn.functional.max_pool2d(nn.functional.relu(_bn(trunk.conv1(x), trunk.bn1)), 3, 2, 1)
    assert trunk.conv1.stride == (2, 2) and trunk.conv1.kernel_size == (7, 7)
    widths = (64, 128, 256, 512)
    for i, stage in enumerate((trunk.layer1, trunk.layer2, trunk.layer3, trunk.layer4)):
        assert len(stage) == {18: (2, 2, 2, 2), 50: (3, 4, 6, 3)}[depth][i]
        for b, block in enumerate(stage):
            stride = 2 if (i > 0 and b == 0) else 1
            convs = [block.conv1, block.conv2] + ([block.conv3] if depth == 50 else [])
            assert all(c.bias is None for c in convs)  # the norms carry the shifts
            kernels = [(1, 1), (3, 3), (1, 1)] if depth == 50 else [(3, 3), (3, 3)]
            assert [c.kernel_size for c in convs] == kernels
            assert [c.padding for c in convs] == [(k[0] // 2, k[0] // 2) for k in kernels]
            # the strided 3x3 conv: the first of a basic block, the middle one of a bottleneck
            conv = block.conv2 if depth == 50 else block.conv1
            assert conv.stride == (stride, stride) and conv.kernel_size == (3, 3)
            h = _reference_block(h, block)
        assert h.shape[1] == widths[i] * (4 if depth == 50 else 1)
    z = h.mean(dim=(2, 3))
    with torch.no_grad():
        got = trunk(x)
        assert got.shape == z.shape and torch.allclose(got, z, atol=1e-5)
        assert torch.allclose(net(x), net.classifier(z), atol=1e-5)
    assert trunk.out_features == z.shape[1] == net.classifier.in_features


def test_stream_clock_is_cpu_time_on_the_cpu_and_wall_time_on_a_gpu():
    import time

    from paper_pipelines.pipelines.tca.baselines import _clock

    # process CPU time does not advance while the process sleeps; wall time does
    cpu0, wall0 = _clock("cpu"), _clock("cuda")
    time.sleep(0.05)
    assert _clock("cpu") - cpu0 < 0.04
    assert _clock("cuda") - wall0 >= 0.05
