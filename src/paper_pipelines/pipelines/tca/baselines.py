"""Test-time adaptation baselines that LinearTCA+ plugs into: Source, BN, Tent, T3A, and their stream.

Each method consumes a target domain as a stream of (shuffled) batches and returns, for every sample,
the embedding z and the logits *as the method produced them online* (for Tent: computed before that
batch's update), exactly the pair the official code stores before applying TCA once to the whole set.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from paper_pipelines.pipelines.tca.linear_tca import softmax_entropy
from paper_pipelines.pipelines.tca.source_model import FeaturizerClassifier

logger = logging.getLogger(__name__)

TTA_METHODS = ("source", "bn", "tent", "t3a")


@dataclass
class StreamOutput:
    """Per-sample outputs of one method on one domain, in the domain's original sample order."""

    z: torch.Tensor
    logits: torch.Tensor
    seconds: float


def batch_slices(n: int, batch_size: int, min_last: int) -> list[slice]:
    """Consecutive batches; a last batch smaller than ``min_last`` is merged into the one before it.

    BN statistics and T3A supports from fewer samples than classes are degenerate, so the tail of a
    stream is never left as a tiny batch.
    """
    starts = list(range(0, n, batch_size))
    slices = [slice(s, min(s + batch_size, n)) for s in starts]
    if len(slices) > 1 and (slices[-1].stop - slices[-1].start) < min_last:
        tail = slices.pop()
        slices[-1] = slice(slices[-1].start, tail.stop)
    return slices


def iterate_stream(
    images: torch.Tensor,
    order: np.ndarray,
    batch_size: int,
    min_last: int,
    prepare: Callable[[torch.Tensor], torch.Tensor],
    device: str,
) -> Iterator[tuple[np.ndarray, torch.Tensor]]:
    """Yield (sample indices, prepared batch on device) over the domain in the given order."""
    for sl in batch_slices(len(order), batch_size, min_last):
        idx = order[sl]
        yield idx, prepare(images[torch.as_tensor(idx)].to(device))


class SourceOnly:
    """No adaptation: the source model in eval mode (running BN statistics)."""

    def __init__(self, model: FeaturizerClassifier) -> None:
        self.model = model.eval()
        self.classifier = model.classifier

    @torch.no_grad()
    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.model.featurizer(x)
        return z, self.model.classifier(z)


class BNAdapt:
    """BN statistics adaptation (Schneider et al., 2020): normalise every test batch with its own statistics."""

    def __init__(self, model: FeaturizerClassifier) -> None:
        self.model = model.train()
        self.classifier = model.classifier

    @torch.no_grad()
    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.model.featurizer(x)
        return z, self.model.classifier(z)


def configure_tent(model: nn.Module) -> list[nn.Parameter]:
    """Tent's model setup: train mode, batch statistics only, gradients only for the norm layers' affine."""
    model.train()
    model.requires_grad_(False)
    params = []
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.requires_grad_(True)
            m.track_running_stats = False
            m.running_mean = None
            m.running_var = None
        if isinstance(m, nn.BatchNorm2d | nn.GroupNorm | nn.LayerNorm):
            params += [p for name, p in m.named_parameters() if name in ("weight", "bias")]
    if not params:
        raise ValueError(
            "Tent needs normalisation layers with affine parameters; the model has none"
        )
    return params


class Tent:
    """Tent (Wang et al., ICLR 2021): one Adam step per batch on the mean softmax entropy, norm affine only."""

    def __init__(self, model: FeaturizerClassifier, lr: float, steps: int = 1) -> None:
        self.model = model
        self.optimizer = torch.optim.Adam(configure_tent(model), lr=lr)
        self.classifier = model.classifier
        self.steps = steps

    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z_out = logits_out = None
        for _ in range(self.steps):
            with torch.enable_grad():
                z = self.model.featurizer(x)
                logits = self.model.classifier(z)
                loss = softmax_entropy(logits).mean()
                self.optimizer.zero_grad()
                loss.backward()
                self.optimizer.step()
            # Outputs computed before this step's update; with steps > 1 the last step's are
            # returned, as in the official code.
            z_out, logits_out = z.detach(), logits.detach()
        return z_out, logits_out


class T3A:
    """T3A (Iwasawa & Matsuo, NeurIPS 2021): classify by prototypes of the lowest-entropy stored embeddings."""

    def __init__(self, model: FeaturizerClassifier, filter_k: int = 100) -> None:
        self.model = model.eval()
        self.classifier = model.classifier
        self.filter_k = filter_k
        with torch.no_grad():
            warm = model.classifier.weight.detach().clone()
            warm_logits = model.classifier(warm)
        self.num_classes = warm.shape[0]
        self.supports = warm
        self.labels = F.one_hot(warm_logits.argmax(1), self.num_classes).float()
        self.ent = softmax_entropy(warm_logits)

    def _select_supports(self) -> None:
        if self.filter_k == -1:
            return
        y_hat = self.labels.argmax(1)
        index = torch.arange(len(self.ent), device=self.ent.device)
        keep = []
        for c in range(self.num_classes):
            members = y_hat == c
            keep.append(index[members][torch.sort(self.ent[members]).indices][: self.filter_k])
        keep = torch.cat(keep)
        self.supports, self.labels, self.ent = (
            self.supports[keep],
            self.labels[keep],
            self.ent[keep],
        )

    @torch.no_grad()
    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.model.featurizer(x)
        p = self.model.classifier(z)
        self.supports = torch.cat([self.supports.to(z.device), z])
        self.labels = torch.cat(
            [self.labels.to(z.device), F.one_hot(p.argmax(1), self.num_classes).float()]
        )
        self.ent = torch.cat([self.ent.to(z.device), softmax_entropy(p)])
        self._select_supports()
        weights = F.normalize(self.supports, dim=1).T @ self.labels
        return z, z @ F.normalize(weights, dim=0)


class FrozenTent:
    """Forward of a Tent-adapted model without further updates (the forgetting check's probe)."""

    def __init__(self, model: FeaturizerClassifier) -> None:
        self.model = model

    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.model.featurizer(x)
        return z, self.model.classifier(z)


def make_method(
    name: str, source: FeaturizerClassifier, *, tent_lr: float, steps: int, t3a_filter_k: int
) -> SourceOnly | BNAdapt | Tent | T3A:
    """A fresh adapter around a deep copy of the source model (the source itself is never modified)."""
    model = copy.deepcopy(source)
    if name == "source":
        return SourceOnly(model)
    if name == "bn":
        return BNAdapt(model)
    if name == "tent":
        return Tent(model, lr=tent_lr, steps=steps)
    if name == "t3a":
        return T3A(model, filter_k=t3a_filter_k)
    raise ValueError(f"unknown TTA method {name!r}; use one of {', '.join(TTA_METHODS)}")


def run_stream(
    adapter: Callable[[torch.Tensor], tuple[torch.Tensor, torch.Tensor]],
    images: torch.Tensor,
    order: np.ndarray,
    *,
    batch_size: int,
    min_last: int,
    prepare: Callable[[torch.Tensor], torch.Tensor],
    device: str,
) -> StreamOutput:
    """Feed one domain through an adapter in ``order``; return z and logits in the original order."""
    n = len(order)
    z_parts, logit_parts, index_parts = [], [], []
    synchronise = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    synchronise()
    start = _clock(device)
    for idx, x in iterate_stream(images, order, batch_size, min_last, prepare, device):
        z, logits = adapter(x)
        z_parts.append(z)
        logit_parts.append(logits)
        index_parts.append(torch.as_tensor(idx))
    synchronise()
    seconds = _clock(device) - start
    inverse = torch.empty(n, dtype=torch.long)
    inverse[torch.cat(index_parts)] = torch.arange(n)
    inverse = inverse.to(z_parts[0].device)
    return StreamOutput(torch.cat(z_parts)[inverse], torch.cat(logit_parts)[inverse], seconds)


def _clock(device: str) -> float:
    # On a shared CPU, process CPU time is robust to other jobs' load; on a GPU, wall time is the cost.
    return time.perf_counter() if device.startswith("cuda") else time.process_time()
