"""Source training's bookkeeping and the input helpers on cases whose numbers are known beforehand: a
model that cannot learn (learning rate 0, no batch statistics) gives the same loss on every sample."""

from __future__ import annotations

import copy
import logging
import math

import numpy as np
import pytest
import torch
from torch import nn

from paper_pipelines.pipelines.tca.source_model import (
    FeaturizerClassifier,
    ResNet,
    SmallCNN,
    _Bottleneck,
    build_model,
    random_shift,
    to_float_images,
    train_digits_model,
    train_source,
)


def _fixed_model() -> FeaturizerClassifier:
    """Logits (log 3, 0) for every image (zero weights, fixed bias): softmax (3/4, 1/4), class 0."""
    model = FeaturizerClassifier()
    model.featurizer, model.classifier = nn.Flatten(), nn.Linear(4, 2)
    with torch.no_grad():
        model.classifier.weight.zero_()
        model.classifier.bias.copy_(torch.tensor([math.log(3.0), 0.0]))
    return model


def test_epoch_loss_and_accuracy_are_means_over_the_trained_samples(caplog):
    """16 images, batches of 5: three batches of 5 train, the last single image is skipped (BatchNorm
    needs two). Every sample has loss -log(3/4) and is classified correctly, whatever the order."""
    images = np.zeros((16, 1, 2, 2), dtype=np.float32)
    labels = np.zeros(16, dtype=np.int64)
    model = _fixed_model()
    with caplog.at_level(logging.INFO, logger="paper_pipelines.pipelines.tca.source_model"):
        log = train_source(
            model, images, labels, epochs=2, lr=0.0, weight_decay=0.0, batch_size=5, shift_px=1,
            seed=0,
        )  # fmt: skip
    assert [h["epoch"] for h in log["history"]] == [1, 2]
    for h in log["history"]:
        assert h["loss"] == pytest.approx(-math.log(0.75), rel=1e-6)
        assert h["train_acc"] == 1.0
    assert torch.equal(model.classifier.weight, torch.zeros(2, 4))  # lr 0: nothing moved
    expected = f"source training epoch 2/2: loss {-math.log(0.75):.4f}, train accuracy 1.000"
    assert [r.getMessage() for r in caplog.records][-1] == expected
    # half the labels wrong: accuracy is the share of trained samples with label 0
    flipped = labels.copy()
    flipped[1::2] = 1
    log = train_source(
        _fixed_model(), images, flipped, epochs=1, lr=0.0, weight_decay=0.0, batch_size=4,
        shift_px=0, seed=0,
    )  # fmt: skip
    assert log["history"][0]["train_acc"] == 0.5  # four full batches: all 16 samples
    assert log["history"][0]["loss"] == pytest.approx(
        (-math.log(0.75) - math.log(0.25)) / 2, rel=1e-6
    )


def test_training_updates_the_weights_with_adam():
    """One Adam step moves every weight that has a gradient by lr (Adam's first step is lr * sign)."""
    images = np.random.default_rng(0).uniform(0, 1, (4, 1, 2, 2)).astype(np.float32)
    labels = np.array([0, 1, 0, 1])
    model = _fixed_model()
    bias = model.classifier.bias.detach().clone()
    train_source(
        model, images, labels, epochs=1, lr=0.1, weight_decay=0.0, batch_size=4, shift_px=0,
        seed=0,
    )  # fmt: skip
    step = (model.classifier.bias.detach() - bias).abs()
    assert torch.allclose(step, torch.full((2,), 0.1), atol=1e-6)


def test_random_shift_moves_each_image_by_its_own_offset():
    """A 1 px image in a 3 x 3 frame with max_shift 1: offsets (oy, ox) in {0, 1, 2}^2, drawn from the
    given generator as randint(0, 3, (n, 2)), put the pixel at (2 - oy, 2 - ox) of the padded crop."""
    x = torch.zeros(6, 1, 3, 3)
    x[:, 0, 1, 1] = 1.0
    out = random_shift(x, 1, torch.Generator().manual_seed(4))
    offsets = torch.randint(0, 3, (6, 2), generator=torch.Generator().manual_seed(4))
    assert out.shape == (6, 1, 3, 3)
    for img, (oy, ox) in zip(out, offsets.tolist(), strict=True):
        expected = torch.zeros(1, 3, 3)
        expected[0, 2 - oy, 2 - ox] = 1.0
        assert torch.equal(img, expected)
    wide = torch.arange(8.0).view(1, 1, 2, 4)  # not square: rows and columns keep their sizes
    assert random_shift(wide, 1, torch.Generator().manual_seed(0)).shape == (1, 1, 2, 4)


def test_to_float_images_adds_the_channel_axis_and_scales_uint8():
    grey = to_float_images(np.full((2, 3, 4), 51, dtype=np.uint8))  # (N, H, W)
    assert grey.shape == (2, 1, 3, 4) and torch.allclose(grey, torch.full_like(grey, 0.2))
    rgb = to_float_images(torch.full((2, 3, 4, 5), 255, dtype=torch.uint8))  # (N, C, H, W) as it is
    assert rgb.shape == (2, 3, 4, 5) and float(rgb.min()) == 1.0


def test_small_cnn_head_has_the_requested_classes_and_width_16_by_default():
    assert build_model("small_cnn", 5, width=2).classifier.out_features == 5
    assert build_model("small_cnn", 5, width=2).classifier.in_features == 4 * 2  # 4 w features
    assert build_model("small_cnn", 10).classifier.in_features == 4 * 16
    assert build_model("small_cnn", 10).featurizer[0].in_channels == 1  # grey by default
    default = SmallCNN()  # grey 16-wide CNN for the ten digits
    assert default.featurizer[0].in_channels == 1 and default.featurizer[0].out_channels == 16
    assert default.classifier.out_features == 10
    assert build_model("resnet50", 7).classifier.out_features == 7


@pytest.mark.parametrize("depth", [18, 50])
def test_resnet_stages_halve_the_resolution_like_torchvision(depth):
    """64 x 64 input: the stem (stride 2, then a 3 x 3 stride-2 pool) gives 16 x 16, stages 2-4 halve it
    to 8, 4 and 2; the widths are 64..512 (x 4 in a bottleneck), and every stride-2 or widening block
    has a 1 x 1 projection with its own norm."""
    net = ResNet(depth=depth, num_classes=3).eval()
    trunk = net.featurizer
    x = torch.randn(1, 3, 64, 64)
    with torch.no_grad():
        h = trunk.maxpool(torch.relu(trunk.bn1(trunk.conv1(x))))
        sizes = [h.shape[-1]]
        for stage in (trunk.layer1, trunk.layer2, trunk.layer3, trunk.layer4):
            h = stage(h)
            sizes.append(h.shape[-1])
    assert sizes == [16, 16, 8, 4, 2]
    expansion = 4 if depth == 50 else 1
    assert h.shape[1] == 512 * expansion == trunk.out_features
    assert trunk.maxpool.kernel_size == 3 and trunk.maxpool.stride == 2
    for i, stage in enumerate((trunk.layer2, trunk.layer3, trunk.layer4)):
        proj = stage[0].downsample
        width = (128, 256, 512)[i] * expansion
        assert isinstance(proj[1], nn.BatchNorm2d) and proj[1].num_features == width
        assert proj[0].kernel_size == (1, 1) and proj[0].stride == (2, 2)
        assert proj[0].out_channels == width and proj[0].bias is None
    if depth == 50:  # layer1 widens 64 -> 256 at stride 1
        assert trunk.layer1[0].downsample[0].stride == (1, 1)
        assert trunk.layer1[0].downsample[1].num_features == 256


def test_digits_model_has_ten_classes_by_default(caplog):
    rng = np.random.default_rng(2)
    splits = {
        "X_train": rng.integers(0, 256, (20, 1, 8, 8), dtype=np.uint8),
        "y_train": np.arange(20) % 10,
        "X_test": rng.integers(0, 256, (10, 8, 8), dtype=np.uint8),
        "y_test": np.arange(10),
    }
    with caplog.at_level(logging.INFO, logger="paper_pipelines.pipelines.tca.source_model"):
        record, log = train_digits_model(
            splits, arch="small_cnn", width=2, epochs=1, lr=1e-3, weight_decay=0.0, batch_size=10,
            shift_px=0, seed=0,
        )  # fmt: skip
    expected = f"source model: clean test accuracy {log['clean_test_accuracy']:.2f}%"
    assert [r.getMessage() for r in caplog.records][-1] == expected
    assert record["num_classes"] == 10
    assert record["state_dict"]["classifier.weight"].shape == (10, 8)  # 4 w = 8 features


@pytest.mark.parametrize(("n", "batches"), [(12, 3), (11, 2)])
def test_a_tail_batch_of_two_trains_and_a_single_image_does_not(n, batches):
    """Zero images and all labels 0: the gradients keep their sign, so each Adam step moves the bias
    of class 0 up by lr (Adam's step is lr * m / sqrt(v) = lr for a gradient of constant size, and
    nearly so for a slowly changing one). Batches of 5: 12 images train 5 + 5 + 2 (three steps), 11
    images 5 + 5 and skip the last one (two steps)."""
    model = _fixed_model()
    bias = float(model.classifier.bias[0].detach())
    log = train_source(
        model, np.zeros((n, 1, 2, 2), dtype=np.float32), np.zeros(n, dtype=np.int64), epochs=1,
        lr=1e-3, weight_decay=0.0, batch_size=5, shift_px=0, seed=0,
    )  # fmt: skip
    assert float(model.classifier.bias[0].detach()) - bias == pytest.approx(
        batches * 1e-3, rel=1e-2
    )
    assert log["history"][0]["train_acc"] == 1.0


def test_training_order_and_shifts_come_from_the_seed_alone():
    """The global torch RNG is not used: the same seed gives the same run after other draws."""
    rng = np.random.default_rng(0)
    images = rng.uniform(0, 1, (24, 1, 6, 6)).astype(np.float32)
    labels = np.arange(24) % 3
    torch.manual_seed(0)
    template = SmallCNN(width=2, num_classes=3)
    runs = []
    for global_seed in (1, 2):
        model = copy.deepcopy(template)
        torch.manual_seed(global_seed)
        log = train_source(
            model, images, labels, epochs=2, lr=1e-2, weight_decay=0.0, batch_size=5, shift_px=1,
            seed=7,
        )  # fmt: skip
        runs.append(([h["loss"] for h in log["history"]], model.classifier.weight.detach()))
    assert runs[0][0] == runs[1][0] and torch.equal(runs[0][1], runs[1][1])
    other = copy.deepcopy(template)
    log = train_source(
        other, images, labels, epochs=2, lr=1e-2, weight_decay=0.0, batch_size=5, shift_px=1,
        seed=8,
    )  # fmt: skip
    assert [h["loss"] for h in log["history"]] != runs[0][0]  # another seed, another run


def test_resnet_defaults_to_depth_50_and_the_stem_is_torchvisions():
    net = ResNet(num_classes=2)
    assert isinstance(net.featurizer.layer1[0], _Bottleneck) and net.classifier.in_features == 2048
    assert ResNet(depth=18).classifier.out_features == 10  # CIFAR-10 by default
    conv1 = ResNet(depth=18).featurizer.conv1
    assert (conv1.kernel_size, conv1.stride, conv1.padding) == ((7, 7), (2, 2), (3, 3))
    assert conv1.bias is None and conv1.in_channels == 3 and conv1.out_channels == 64


def test_small_cnn_halves_the_resolution_twice_with_bias_free_convolutions():
    """16 x 16 input: 3 x 3 convolutions with padding 1 keep 16, then stride 2 gives 8 and 4."""
    net = SmallCNN(in_channels=1, width=2, num_classes=3).eval()
    x = torch.zeros(1, 1, 16, 16)
    with torch.no_grad():
        sizes = [net.featurizer[:k](x).shape[1:] for k in (3, 6, 9)]
    assert sizes == [(2, 16, 16), (4, 8, 8), (8, 4, 4)]
    convs = [m for m in net.featurizer if isinstance(m, nn.Conv2d)]
    assert len(convs) == 3 and all(c.bias is None for c in convs)  # the norms carry the shifts
    assert [c.kernel_size for c in convs] == [(3, 3)] * 3


def test_labels_of_any_integer_dtype_are_accepted():
    images = np.zeros((4, 1, 2, 2), dtype=np.float32)
    log = train_source(
        _fixed_model(), images, np.zeros(4, dtype=np.int32), epochs=1, lr=0.0, weight_decay=0.0,
        batch_size=4, shift_px=0, seed=0,
    )  # fmt: skip
    assert log["history"][0]["train_acc"] == 1.0


def test_weight_decay_reaches_the_optimiser():
    """Images of 0.5 normalise to 0, so the head's weights get no gradient from the loss; only weight
    decay (gradient wd * w) moves them, by lr on Adam's first step, towards 0."""
    images = np.full((4, 1, 2, 2), 0.5, dtype=np.float32)
    moved = {}
    for wd in (0.0, 0.1):
        model = _fixed_model()
        with torch.no_grad():
            model.classifier.weight.fill_(0.5)
        train_source(
            model, images, np.zeros(4, dtype=np.int64), epochs=1, lr=0.01, weight_decay=wd,
            batch_size=4, shift_px=0, seed=0,
        )  # fmt: skip
        moved[wd] = model.classifier.weight.detach() - 0.5
    assert torch.equal(moved[0.0], torch.zeros(2, 4))
    assert torch.allclose(moved[0.1], torch.full((2, 4), -0.01), atol=1e-6)
