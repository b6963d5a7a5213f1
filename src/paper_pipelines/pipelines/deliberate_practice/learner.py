"""The learner: a classifier trained only on synthetic images (MLP, small CNN, or a ViT by parameters).

The paper trains a ViT-B from scratch; here the default is an MLP 64-128-10 on 8x8 digits, and
``arch: vit`` builds transformers' ViTForImageClassification from a config (no weights), so the same
code is a ViT-B/16 at paper scale (hidden 768, 12 layers, 12 heads, patch 16).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn


class MLPLearner(nn.Module):
    def __init__(self, shape: tuple[int, int, int], num_classes: int, hidden: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Flatten(),
            nn.Linear(int(np.prod(shape)), hidden),
            nn.ReLU(),
            nn.Linear(hidden, num_classes),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class SmallCNNLearner(nn.Module):
    """Two 3x3 conv layers (16, 32 channels, the second with stride 2), then two linear layers."""

    def __init__(self, shape: tuple[int, int, int], num_classes: int, hidden: int) -> None:
        super().__init__()
        c, h, w = shape
        self.features = nn.Sequential(
            nn.Conv2d(c, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, stride=2, padding=1),
            nn.ReLU(),
        )
        flat = 32 * ((h + 1) // 2) * ((w + 1) // 2)
        self.head = nn.Sequential(
            nn.Flatten(), nn.Linear(flat, hidden), nn.ReLU(), nn.Linear(hidden, num_classes)
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x))


class ViTLearner(nn.Module):
    """transformers' ViT for image classification, built from a config and trained from scratch."""

    def __init__(
        self,
        shape: tuple[int, int, int],
        num_classes: int,
        patch: int,
        hidden: int,
        layers: int,
        heads: int,
    ) -> None:
        super().__init__()
        from transformers import ViTConfig, ViTForImageClassification

        config = ViTConfig(
            image_size=shape[1],
            patch_size=patch,
            num_channels=shape[0],
            hidden_size=hidden,
            num_hidden_layers=layers,
            num_attention_heads=heads,
            intermediate_size=4 * hidden,
            num_labels=num_classes,
        )
        self.vit = ViTForImageClassification(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.vit(pixel_values=x).logits


def make_learner(
    arch: str, shape: tuple[int, int, int], num_classes: int, params, seed: int
) -> nn.Module:
    """A freshly initialised learner (weights drawn from ``seed``)."""
    torch.manual_seed(seed)
    if arch == "mlp":
        return MLPLearner(shape, num_classes, params.hidden)
    if arch == "small_cnn":
        return SmallCNNLearner(shape, num_classes, params.hidden)
    if arch == "vit":
        v = params.vit
        return ViTLearner(shape, num_classes, v.patch, v.hidden, v.layers, v.heads)
    raise ValueError(f"learner arch must be mlp, small_cnn or vit, got {arch!r}")


class LearnerTrainer:
    """A learner, its Adam state and its mini-batch stream: training resumes where it stopped."""

    def __init__(
        self, model: nn.Module, lr: float, batch: int, seed: int, device: str = "cpu"
    ) -> None:
        self.model = model.to(device)
        self.device = device
        self.opt = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.batch = batch
        self.g = torch.Generator().manual_seed(seed)
        self.iterations = 0

    def train_steps(self, x: torch.Tensor, y: torch.Tensor, steps: int) -> float:
        """``steps`` Adam steps on mini-batches drawn uniformly from the pool (x, y); last loss."""
        self.model.train()
        loss = torch.tensor(float("nan"))
        for _ in range(steps):
            idx = torch.randint(0, len(x), (min(self.batch, len(x)),), generator=self.g)
            logits = self.model(x[idx].to(self.device))
            loss = nn.functional.cross_entropy(logits, y[idx].to(self.device))
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            self.iterations += 1
        return float(loss)

    def logits(self, x: torch.Tensor, batch: int = 2048) -> torch.Tensor:
        self.model.eval()
        with torch.no_grad():
            return torch.cat(
                [
                    self.model(x[i : i + batch].to(self.device)).cpu()
                    for i in range(0, len(x), batch)
                ]
            )

    def __call__(self, images: torch.Tensor) -> torch.Tensor:
        """The learner as guidance sees it (gradients flow to the images)."""
        self.model.eval()
        return self.model(images)
