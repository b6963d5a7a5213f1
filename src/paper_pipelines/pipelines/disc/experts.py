"""The specialists ("individual learning", spec: Actors): small 3-stage CNNs whose stages carry ResNet's
names (pre_layer, layer1-layer3, pre_fc), trained alone on their own task before any interaction."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from paper_pipelines.common.progress import progress

STAGES = ("pre_layer", "layer1", "layer2", "layer3", "pre_fc")
LEVELS = ("layer1", "layer2", "layer3")
N_CLASSES = 10


def conv_bn_relu(c_in: int, c_out: int, stride: int) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
    )


class Specialist(nn.Module):
    """pre_layer (stem) -> layer1 (stride 1) -> layer2 (stride 2) -> layer3 (stride 4) -> pre_fc (GAP).

    ``task`` is ``cls`` (a 10-way head) or ``box`` (a detector: box head and a small class head).
    """

    def __init__(self, stem: int, channels: Sequence[int], task: str) -> None:
        super().__init__()
        c1, c2, c3 = channels
        self.task = task
        self.pre_layer = conv_bn_relu(1, stem, 1)
        self.layer1 = conv_bn_relu(stem, c1, 1)
        self.layer2 = conv_bn_relu(c1, c2, 2)
        self.layer3 = conv_bn_relu(c2, c3, 2)
        self.pre_fc = nn.Sequential(nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head_cls = nn.Linear(c3, N_CLASSES)
        self.head_box = nn.Linear(c3, 4) if task == "box" else None

    @property
    def layout(self) -> dict[str, tuple[int, int]]:
        """(channels, stride w.r.t. the input) of each transfer level."""
        return {
            "layer1": (self.layer1[0].out_channels, 1),
            "layer2": (self.layer2[0].out_channels, 2),
            "layer3": (self.layer3[0].out_channels, 4),
        }

    @property
    def feature_dim(self) -> int:
        return self.layer3[0].out_channels

    def stages(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Every stage's output, in order (the auxiliary features a transfer block reads)."""
        out = {}
        for name in STAGES:
            x = getattr(self, name)(x)
            out[name] = x
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.stages(x)["pre_fc"]


def box_loss(box_logits: torch.Tensor, boxes: torch.Tensor, beta: float) -> torch.Tensor:
    """Box regression: sigmoid(box logits) against (cx, cy, w, h) in [0, 1], smooth-L1 with `beta`."""
    return F.smooth_l1_loss(torch.sigmoid(box_logits), boxes, beta=beta)


def task_loss(
    model: Specialist,
    pooled: torch.Tensor,
    labels: torch.Tensor,
    boxes: torch.Tensor,
    cls_weight: float,
    beta: float,
) -> torch.Tensor:
    """The specialist's own objective: CE (classifier), or box loss + cls_weight * CE (detector)."""
    ce = F.cross_entropy(model.head_cls(pooled), labels)
    if model.task == "cls":
        return ce
    return box_loss(model.head_box(pooled), boxes, beta) + cls_weight * ce


def minibatches(n: int, batch: int, rng: np.random.Generator) -> list[np.ndarray]:
    """A fresh random partition of range(n) into batches of `batch` (the last one may be smaller)."""
    order = rng.permutation(n)
    return [order[i : i + batch] for i in range(0, n, batch)]


def train_specialist(
    pool: dict[str, np.ndarray],
    task: str,
    stem: int,
    channels: Sequence[int],
    epochs: int,
    lr: float,
    batch: int,
    cls_weight: float,
    beta: float,
    rng: np.random.Generator,
    device: str = "cpu",
) -> Specialist:
    """Adam on the specialist's own task and pool; returns the model in eval mode (then frozen)."""
    torch.manual_seed(int(rng.integers(2**31)))
    model = Specialist(stem, channels, task).to(device)
    x = torch.as_tensor(pool["images"], device=device)
    y = torch.as_tensor(pool["labels"], device=device)
    b = torch.as_tensor(pool["boxes"], device=device)
    # foreach=False: the default multi-tensor path imports torch._dynamo (seconds) for no gain here
    optimiser = torch.optim.Adam(model.parameters(), lr=lr, foreach=False)
    model.train()
    for _ in progress(range(epochs), f"expert {task}"):
        for idx in minibatches(len(y), batch, rng):
            ix = torch.as_tensor(idx, device=device)
            loss = task_loss(model, model(x[ix]), y[ix], b[ix], cls_weight, beta)
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
    return freeze(model.eval())


def freeze(model: nn.Module) -> nn.Module:
    """No parameter of a specialist is trained after individual learning."""
    for p in model.parameters():
        p.requires_grad_(False)
    return model


def load_specialist(state: dict[str, torch.Tensor], stem: int, channels: Sequence[int], task: str):
    """A frozen specialist in eval mode from its saved state dict."""
    model = Specialist(stem, channels, task)
    model.load_state_dict(state)
    return freeze(model.eval())


@torch.no_grad()
def pooled_features(model: nn.Module, images: np.ndarray, batch: int = 512) -> np.ndarray:
    """pre_fc features of a frozen model (a Specialist or a CentralModel), in eval mode."""
    model.eval()
    device = next(model.parameters()).device
    x = torch.as_tensor(images)
    outs = [model(x[i : i + batch].to(device)).cpu() for i in range(0, len(x), batch)]
    return torch.cat(outs).numpy()
