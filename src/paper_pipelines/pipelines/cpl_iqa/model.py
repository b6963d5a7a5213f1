"""The single-branch CPL-IQA network: backbone -> 256-d embedding e(x) -> K-way softmax p(x) over bins.

The predicted score is the expectation over the bin centres (labels.expected_score). Three backbones:
``small_cnn`` (stride-2 conv blocks with batch norm on 64x64 crops, the CPU default), ``feature_mlp``
(an MLP on NSS features, the fast/test variant) and ``resnet101`` (the paper's backbone, transformers'
ResNet-101 whose weights a user supplies as a catalog entry; inputs 256x256, ImageNet normalisation).
"""

from __future__ import annotations

import torch
from torch import nn

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)
RESNET101_DEPTHS = (3, 4, 23, 3)  # bottleneck blocks per stage (He et al. 2016, Table 1)


class IQANet(nn.Module):
    """backbone -> Linear -> ReLU = embedding; Linear -> logits over the K quality bins."""

    def __init__(self, backbone: nn.Module, width: int, embed_dim: int, bins: int) -> None:
        super().__init__()
        self.backbone = backbone
        self.embedding = nn.Sequential(nn.Linear(width, embed_dim), nn.ReLU())
        self.head = nn.Linear(embed_dim, bins)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        return self.embedding(self.backbone(x))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.embed(x))


class SmallCNN(nn.Module):
    """uint8 images (n, 3, H, W) -> stride-2 conv/BN/ReLU blocks -> global average pool."""

    def __init__(self, channels: list[int]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        previous = 3
        for width in channels:
            layers += [
                nn.Conv2d(previous, width, 3, stride=2, padding=1, bias=False),
                nn.BatchNorm2d(width),
                nn.ReLU(),
            ]
            previous = width
        self.features = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.features(x.float() / 255.0 - 0.5)


class FeatureMLP(nn.Module):
    """Standardised NSS features (n, d) -> hidden Linear/ReLU layers (identity when there are none)."""

    def __init__(self, in_dim: int, hidden: list[int]) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        previous = in_dim
        for width in hidden:
            layers += [nn.Linear(previous, width), nn.ReLU()]
            previous = width
        self.layers = nn.Sequential(*layers)
        self.width = previous

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x.float())


class ResNet101(nn.Module):
    """transformers' ResNet-101 (torchvision layout of stages [3, 4, 23, 3]) -> 2048-d pooled features."""

    def __init__(self, depths: tuple[int, ...] = RESNET101_DEPTHS) -> None:
        super().__init__()
        from transformers import ResNetConfig, ResNetModel

        config = ResNetConfig(
            depths=list(depths),
            hidden_sizes=[256, 512, 1024, 2048],
            layer_type="bottleneck",
            embedding_size=64,
        )
        self.net = ResNetModel(config)
        self.register_buffer("mean", torch.tensor(IMAGENET_MEAN).view(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(IMAGENET_STD).view(1, 3, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = (x.float() / 255.0 - self.mean) / self.std
        return self.net(pixel_values=x).pooler_output.flatten(1)


def build_network(
    backbone: str,
    embed_dim: int,
    bins: int,
    channels: list[int],
    hidden: list[int],
    in_dim: int,
    backbone_state: dict | None = None,
) -> IQANet:
    """The network for ``backbone``; ``backbone_state`` (ResNet-101 weights) loads into the backbone."""
    if backbone == "small_cnn":
        body: nn.Module = SmallCNN(channels)
        width = channels[-1]
    elif backbone == "feature_mlp":
        body = FeatureMLP(in_dim, hidden)
        width = body.width
    elif backbone == "resnet101":
        body = ResNet101(RESNET101_DEPTHS)
        width = 2048
        if backbone_state is not None:
            body.net.load_state_dict(backbone_state, strict=False)
    else:
        raise ValueError(
            f"unknown backbone {backbone!r}: use small_cnn, feature_mlp or resnet101 (cpl_iqa.model)"
        )
    return IQANet(body, width, embed_dim, bins)
