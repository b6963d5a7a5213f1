"""Building the mini-CLIP: the image tower learns to meet the frozen MiniLM caption embeddings.

CLIP's towers are trained by a symmetric contrastive loss over image-caption pairs; here the text side
is frozen ("locked-image tuning" turned round: locked text), the image tower is trained on the neutral
source domain only, so the clients' domains are unseen, the regime FedDDA adapts to.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import torch
import torch.nn.functional as F

from paper_pipelines.common.progress import progress

from .towers import ImageTower, TextTower, encode_sentences

logger = logging.getLogger(__name__)


def caption_embeddings(
    tower: TextTower, class_names: Sequence[str], templates: Sequence[str]
) -> torch.Tensor:
    """Unit-norm caption features (n_templates, n_classes, dim) from the frozen text tower."""
    feats = [encode_sentences(tower, [t.format(c) for c in class_names]) for t in templates]
    return torch.stack(feats)


def clip_logits(image_features: torch.Tensor, text_features: torch.Tensor, scale: float):
    """CLIP's logits: scale * cos(image, text), (N, C)."""
    return scale * F.normalize(image_features, dim=-1) @ F.normalize(text_features, dim=-1).T


def symmetric_infonce(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """CLIP's symmetric InfoNCE over a batch of (image i, caption j) logits (B, B); captions of the
    same class are all positives (soft targets spread evenly over them)."""
    positives = (labels[:, None] == labels[None, :]).to(logits.dtype)
    targets = positives / positives.sum(1, keepdim=True)
    return 0.5 * (F.cross_entropy(logits, targets) + F.cross_entropy(logits.T, targets.T))


def pretrain_image_tower(
    images: torch.Tensor,
    labels: torch.Tensor,
    captions: torch.Tensor,
    channels: Sequence[int],
    steps: int,
    batch: int,
    lr: float,
    scale: float,
    seed: int,
) -> ImageTower:
    """Train the CNN so that its features of source images match a random caption of their class."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    tower = ImageTower(channels, captions.shape[-1])
    opt = torch.optim.Adam(tower.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    n_templates = captions.shape[0]
    tower.train()
    for _ in progress(range(steps), "fedda: pretraining the mini-CLIP image tower", logger=logger):
        idx = torch.randint(len(images), (min(batch, len(images)),), generator=gen)
        which = torch.randint(n_templates, (len(idx),), generator=gen)
        y = labels[idx]
        logits = clip_logits(tower(images[idx]), captions[which, y], scale)
        loss = symmetric_infonce(logits, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return tower.eval().requires_grad_(False)


def zero_shot_accuracy(
    image_features: torch.Tensor, labels: torch.Tensor, class_features: torch.Tensor
) -> float:
    """Share of images whose most similar class prompt is their class."""
    if len(labels) == 0:
        return float("nan")
    pred = clip_logits(image_features, class_features, 1.0).argmax(1)
    return float((pred == labels).float().mean())


def as_tensor(images: np.ndarray) -> torch.Tensor:
    """Stored uint8 (N, 3, S, S) images -> float tensor in [0, 1]."""
    return torch.from_numpy(images.astype(np.float32) / 255.0)
