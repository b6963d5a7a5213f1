"""The source model f = featurizer (up to global pooling, embedding z) + linear head h, as TCA assumes.

`SmallCNN` is the Digits-C backbone; `ResNet` (torchvision-compatible parameter names, so a torchvision
or official-TCA checkpoint loads without torchvision installed) is the paper-scale one.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from paper_pipelines.pipelines.tca.metrics import accuracy_of_logits

logger = logging.getLogger(__name__)


class FeaturizerClassifier(nn.Module):
    """Any model that exposes ``featurizer`` (x -> z) and ``classifier`` (z -> logits), like the official code."""

    featurizer: nn.Module
    classifier: nn.Linear

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.featurizer(x))


class SmallCNN(FeaturizerClassifier):
    """conv3x3(1->w)+BN+ReLU, conv3x3/2(w->2w)+BN+ReLU, conv3x3/2(2w->4w)+BN+ReLU, GAP -> 4w-d z, linear head."""

    def __init__(self, in_channels: int = 1, width: int = 16, num_classes: int = 10) -> None:
        super().__init__()
        w = width
        self.featurizer = nn.Sequential(
            nn.Conv2d(in_channels, w, 3, padding=1, bias=False),
            nn.BatchNorm2d(w),
            nn.ReLU(inplace=True),
            nn.Conv2d(w, 2 * w, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(2 * w),
            nn.ReLU(inplace=True),
            nn.Conv2d(2 * w, 4 * w, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(4 * w),
            nn.ReLU(inplace=True),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.classifier = nn.Linear(4 * w, num_classes)


class _BasicBlock(nn.Module):
    expansion = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.downsample = _downsample(inplanes, planes * self.expansion, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return F.relu(out + (x if self.downsample is None else self.downsample(x)))


class _Bottleneck(nn.Module):
    expansion = 4

    def __init__(self, inplanes: int, planes: int, stride: int = 1) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(inplanes, planes, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(planes)
        self.conv2 = nn.Conv2d(planes, planes, 3, stride, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(planes)
        self.conv3 = nn.Conv2d(planes, planes * 4, 1, bias=False)
        self.bn3 = nn.BatchNorm2d(planes * 4)
        self.downsample = _downsample(inplanes, planes * self.expansion, stride)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = F.relu(self.bn1(self.conv1(x)))
        out = F.relu(self.bn2(self.conv2(out)))
        out = self.bn3(self.conv3(out))
        return F.relu(out + (x if self.downsample is None else self.downsample(x)))


def _downsample(inplanes: int, outplanes: int, stride: int) -> nn.Module | None:
    if stride == 1 and inplanes == outplanes:
        return None
    return nn.Sequential(
        nn.Conv2d(inplanes, outplanes, 1, stride, bias=False), nn.BatchNorm2d(outplanes)
    )


class _ResNetTrunk(nn.Module):
    """torchvision's ResNet layout and parameter names (conv1, bn1, layer1..4), without the fc layer."""

    def __init__(self, block: type[nn.Module], layers: list[int]) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
        self.bn1 = nn.BatchNorm2d(64)
        self.maxpool = nn.MaxPool2d(3, 2, 1)
        inplanes, stages = 64, []
        for i, (planes, blocks) in enumerate(zip((64, 128, 256, 512), layers, strict=True)):
            stride = 1 if i == 0 else 2
            mods = [block(inplanes, planes, stride)]
            inplanes = planes * block.expansion
            mods += [block(inplanes, planes) for _ in range(blocks - 1)]
            stages.append(nn.Sequential(*mods))
        self.layer1, self.layer2, self.layer3, self.layer4 = stages
        self.out_features = inplanes

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
        x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
        return torch.flatten(F.adaptive_avg_pool2d(x, 1), 1)


class ResNet(FeaturizerClassifier):
    """ResNet-18/50 split as featurizer (trunk + pooling) and linear classifier."""

    def __init__(self, depth: int = 50, num_classes: int = 10) -> None:
        super().__init__()
        spec = {18: (_BasicBlock, [2, 2, 2, 2]), 50: (_Bottleneck, [3, 4, 6, 3])}
        if depth not in spec:
            raise ValueError(f"ResNet depth must be 18 or 50, got {depth}")
        self.featurizer = _ResNetTrunk(*spec[depth])
        self.classifier = nn.Linear(self.featurizer.out_features, num_classes)


# Children of torchvision's ResNet in order, i.e. the indices of the official code's
# `nn.Sequential(*list(resnet.children())[:-1], nn.Flatten())` featurizer.
_OFFICIAL_FEATURIZER_CHILDREN = (
    "conv1",
    "bn1",
    "relu",
    "maxpool",
    "layer1",
    "layer2",
    "layer3",
    "layer4",
)


def map_checkpoint_keys(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Accept torchvision ResNet state dicts (``fc.*``) and official-TCA ones (``featurizer.N.*``, ``classifier.*``)."""
    for wrapper in ("state_dict", "model", "model_dict"):
        if wrapper in state and isinstance(state[wrapper], dict):
            state = state[wrapper]
    mapped: dict[str, torch.Tensor] = {}
    for key, value in state.items():
        for prefix in ("module.", "model."):
            key = key.removeprefix(prefix)
        if key.startswith(("algorithm_res.", "network.")):
            # The official wrapper keeps an unused torchvision copy and a Sequential alias
            # (network = featurizer + classifier) whose tensors duplicate the ones mapped here.
            continue
        if key.startswith("fc."):
            key = "classifier." + key.removeprefix("fc.")
        elif key.startswith("featurizer."):
            head, _, rest = key.removeprefix("featurizer.").partition(".")
            if head.isdigit() and int(head) < len(_OFFICIAL_FEATURIZER_CHILDREN):
                key = f"featurizer.{_OFFICIAL_FEATURIZER_CHILDREN[int(head)]}.{rest}"
        elif not key.startswith("classifier."):
            key = "featurizer." + key
        mapped[key] = value
    return mapped


def build_model(
    arch: str, num_classes: int, width: int = 16, in_channels: int = 1
) -> FeaturizerClassifier:
    """Model by name: ``small_cnn`` (Digits-C), ``resnet18`` or ``resnet50`` (paper scale)."""
    if arch == "small_cnn":
        return SmallCNN(in_channels=in_channels, width=width, num_classes=num_classes)
    if arch in ("resnet18", "resnet50"):
        return ResNet(depth=int(arch.removeprefix("resnet")), num_classes=num_classes)
    raise ValueError(f"unknown arch {arch!r}; use small_cnn, resnet18 or resnet50")


def normalise(x: torch.Tensor) -> torch.Tensor:
    """Official preprocessing: mean = std = 0.5 per channel, i.e. [0, 1] -> [-1, 1]."""
    return (x - 0.5) / 0.5


def random_shift(x: torch.Tensor, max_shift: int, generator: torch.Generator) -> torch.Tensor:
    """Augmentation: translate each image by up to +-max_shift pixels (zero padding)."""
    if max_shift <= 0:
        return x
    n, _, h, w = x.shape
    padded = F.pad(x, (max_shift,) * 4)
    offsets = torch.randint(0, 2 * max_shift + 1, (n, 2), generator=generator)
    return torch.stack(
        [padded[i, :, oy : oy + h, ox : ox + w] for i, (oy, ox) in enumerate(offsets.tolist())]
    )


def train_source(
    model: nn.Module,
    images: np.ndarray,
    labels: np.ndarray,
    *,
    epochs: int,
    lr: float,
    weight_decay: float,
    batch_size: int,
    shift_px: int,
    seed: int,
) -> dict[str, Any]:
    """Supervised training on the source split with Adam (images uint8/float in [0,1], (N, C, H, W))."""
    generator = torch.Generator().manual_seed(seed)
    x_all = to_float_images(images)
    y_all = torch.as_tensor(labels, dtype=torch.long)
    optimiser = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    model.train()
    history = []
    start = time.perf_counter()
    for epoch in range(epochs):
        order = torch.randperm(len(x_all), generator=generator)
        total, correct, loss_sum = 0, 0, 0.0
        for i in range(0, len(order), batch_size):
            idx = order[i : i + batch_size]
            if len(idx) < 2:  # BatchNorm needs two samples in train mode
                continue
            x = normalise(random_shift(x_all[idx], shift_px, generator))
            logits = model(x)
            loss = F.cross_entropy(logits, y_all[idx])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            loss_sum += loss.item() * len(idx)
            correct += int((logits.argmax(1) == y_all[idx]).sum())
            total += len(idx)
        history.append({"epoch": epoch + 1, "loss": loss_sum / total, "train_acc": correct / total})
        logger.info(
            "source training epoch %d/%d: loss %.4f, train accuracy %.3f",
            epoch + 1,
            epochs,
            loss_sum / total,
            correct / total,
        )
    model.eval()
    return {"history": history, "seconds": time.perf_counter() - start}


def to_float_images(images: np.ndarray | torch.Tensor) -> torch.Tensor:
    """uint8 (or float) (N, C, H, W) or (N, H, W) images -> float32 tensor (N, C, H, W) in [0, 1]."""
    x = torch.as_tensor(images)
    if x.ndim == 3:
        x = x.unsqueeze(1)
    if x.dtype == torch.uint8:
        return x.float() / 255.0
    return x.float()


@torch.no_grad()
def accuracy(
    model: nn.Module, images: np.ndarray, labels: np.ndarray, batch_size: int = 256
) -> float:
    """Top-1 accuracy of the model in eval mode (running BN statistics)."""
    model.eval()
    x_all = to_float_images(images)
    correct = 0
    for i in range(0, len(x_all), batch_size):
        pred = model(normalise(x_all[i : i + batch_size])).argmax(1)
        correct += int((pred == torch.as_tensor(labels[i : i + batch_size])).sum())
    return correct / len(x_all)


@torch.no_grad()
def clean_accuracy(model: nn.Module, images: np.ndarray, labels: np.ndarray) -> float:
    """Top-1 accuracy (%) on clean images in one batch, eval mode (the source model's test accuracy)."""
    model.eval()
    logits = model(normalise(to_float_images(images)))
    return accuracy_of_logits(logits, labels)


def train_digits_model(
    splits: dict[str, Any],
    *,
    arch: str,
    width: int,
    epochs: int,
    lr: float,
    weight_decay: float,
    batch_size: int,
    shift_px: int,
    seed: int,
    num_classes: int = 10,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The Digits-C source CNN trained on the source split: (model record, training log)."""
    model = SmallCNN(in_channels=1, width=width, num_classes=num_classes)
    log = train_source(
        model,
        splits["X_train"],
        splits["y_train"],
        epochs=epochs,
        lr=lr,
        weight_decay=weight_decay,
        batch_size=batch_size,
        shift_px=shift_px,
        seed=seed,
    )
    log["clean_test_accuracy"] = clean_accuracy(model, splits["X_test"], splits["y_test"])
    logger.info("source model: clean test accuracy %.2f%%", log["clean_test_accuracy"])
    record = {
        "arch": arch,
        "num_classes": num_classes,
        "width": width,
        "in_channels": 1,
        "input_size": None,
        "mean": [0.5],
        "std": [0.5],
        "state_dict": model.state_dict(),
    }
    return record, log


def record_from_checkpoint(
    state: dict[str, Any],
    *,
    arch: str,
    num_classes: int,
    input_size: int,
    mean: list[float],
    std: list[float],
) -> tuple[dict[str, Any], dict[str, Any]]:
    """A user's ResNet state dict (torchvision or official-TCA names) as a model record, and a log."""
    model = build_model(arch, num_classes)
    missing, unexpected = model.load_state_dict(map_checkpoint_keys(state), strict=False)
    if missing:
        raise ValueError(
            f"the checkpoint in tca.source_checkpoint does not fit tca.real_data.arch = {arch!r}: "
            f"missing keys {missing[:5]}...; set arch to the checkpoint's network"
        )
    record = {
        "arch": arch,
        "num_classes": num_classes,
        "in_channels": 3,
        "input_size": input_size,
        "mean": list(mean),
        "std": list(std),
        "state_dict": model.state_dict(),
    }
    return record, {"checkpoint": "tca.source_checkpoint", "unexpected_keys": list(unexpected)}
