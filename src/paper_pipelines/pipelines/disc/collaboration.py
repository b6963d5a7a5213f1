"""DISC's two collaboration modules (spec, Method: Modules 1 and 2), ported from the description of the
official test-time code (yxjdarren/SC: central_model.py, trans_block.py) and PDF's training rule.

Module 1, dynamic hierarchical collaboration: for each main stage l a transfer block T_l maps every
auxiliary stage l' <= l to the main stage's shape and sums them; h_l <- h_l + lambda * T_l(aux).
Module 2, dynamic selective collaboration: mono-confidences from two ConfidNets, holo-confidences,
co-beliefs, per-sample softmax weights, a fused pooled feature (classification only).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch
from torch import nn

LEVEL_ORDER = ("layer1", "layer2", "layer3")
EPS = 1e-8  # the released code's guard in the holo-confidence denominator


# ----------------------------------------------------------------------------- Module 1
def transfer_path(c_src: int, c_dst: int, ratio: int) -> nn.Sequential:
    """One source -> target path of T_l.

    ratio = source resolution / target resolution. ratio > 1: log2(ratio) 3x3 stride-2 convs without
    bias, the intermediate ones keep c_src and are followed by BN + ReLU, the last maps to c_dst and is
    followed by BN. ratio = 1: a 1x1 conv without bias + BN.
    """
    if ratio < 1 or ratio & (ratio - 1):
        raise ValueError(
            f"a transfer path needs a power-of-two downsampling ratio >= 1, got {ratio}"
        )
    if ratio == 1:
        return nn.Sequential(nn.Conv2d(c_src, c_dst, 1, bias=False), nn.BatchNorm2d(c_dst))
    layers: list[nn.Module] = []
    for _ in range(int(math.log2(ratio)) - 1):
        layers += [
            nn.Conv2d(c_src, c_src, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(c_src),
            nn.ReLU(inplace=False),
        ]
    layers += [nn.Conv2d(c_src, c_dst, 3, stride=2, padding=1, bias=False), nn.BatchNorm2d(c_dst)]
    return nn.Sequential(*layers)


def init_transfer_(module: nn.Module) -> nn.Module:
    """Conv weights ~ N(0, 1e-3), BN gamma = beta = 0: the transfer starts as an exact no-op."""
    for m in module.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.normal_(m.weight, mean=0.0, std=1e-3)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.zeros_(m.weight)
            nn.init.zeros_(m.bias)
    return module


def sources_of(level: str) -> tuple[str, ...]:
    """The hierarchy: main stage l reads every auxiliary stage l' <= l (layer3 <- layer1, 2, 3)."""
    return LEVEL_ORDER[: LEVEL_ORDER.index(level) + 1]


class TransferBlock(nn.Module):
    """T_l: one path per auxiliary source stage, outputs summed (official: Cross_Conv_HRNet_Layer)."""

    def __init__(self, level: str, layout: Mapping[str, tuple[int, int]]) -> None:
        super().__init__()
        c_dst, s_dst = layout[level]
        self.paths = nn.ModuleDict(
            {
                src: transfer_path(layout[src][0], c_dst, s_dst // layout[src][1])
                for src in sources_of(level)
            }
        )
        init_transfer_(self)

    def forward(self, aux: Mapping[str, torch.Tensor]) -> torch.Tensor:
        return sum(path(aux[src].detach()) for src, path in self.paths.items())


def inject(h: torch.Tensor, transferred: torch.Tensor, lam: float) -> torch.Tensor:
    """h_main^l <- h_main^l + lambda_aux * T_l(aux)."""
    return h + lam * transferred


def sin_schedule(i: float, period: int, hi: float = 1.0, lo: float = 0.0) -> float:
    """lambda(i) = |sin(pi i / T)| (hi - lo) + lo; i < 0 -> 0 and i >= T -> 100 as the released code."""
    i = max(i, 0)
    if i >= period:
        i = 100
    return abs(math.sin(i * math.pi / period)) * (hi - lo) + lo


def lambda_at(step: int, lam: float, schedule: str, period: int, hi: float, lo: float) -> float:
    """lambda_aux at training iteration `step`: the constant, or the |sin| schedule."""
    if schedule == "constant":
        return lam
    return sin_schedule(step, period, hi, lo)


# ----------------------------------------------------------------------------- Module 2
class ConfidNet(nn.Module):
    """Mono-confidence: Linear(d, 2d) -> Linear(2d, d) -> Linear(d, 1) -> sigmoid, no non-linearity between."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(d, 2 * d), nn.Linear(2 * d, d), nn.Linear(d, 1), nn.Sigmoid()
        )

    def forward(self, p: torch.Tensor) -> torch.Tensor:
        return self.net(p)[:, 0]


def holo_confidence(c_self: torch.Tensor, c_other: torch.Tensor) -> torch.Tensor:
    """Holo-confidence of a branch: ln c_other / (ln(c_self * c_other) + 1e-8)."""
    return torch.log(c_other) / (torch.log(c_self * c_other) + EPS)


def co_belief(c_main: torch.Tensor, c_aux: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Co-belief = mono + holo confidence, detached: (b_main, b_aux)."""
    b_main = c_main.detach() + holo_confidence(c_main, c_aux).detach()
    b_aux = c_aux.detach() + holo_confidence(c_aux, c_main).detach()
    return b_main, b_aux


def selective_weights(
    c_main: torch.Tensor, c_aux: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-sample softmax over the two co-beliefs: (w_main, w_aux), summing to 1."""
    b_main, b_aux = co_belief(c_main, c_aux)
    w = torch.softmax(torch.stack((b_main, b_aux), dim=1), dim=1)
    return w[:, 0], w[:, 1]


def fuse(p_main: torch.Tensor, p_aux: torch.Tensor, w_main: torch.Tensor, w_aux: torch.Tensor):
    """Fused pooled feature p = w_main p_main + w_aux p_aux (weights and features detached)."""
    return w_main.detach()[:, None] * p_main.detach() + w_aux.detach()[:, None] * p_aux.detach()


def true_class_probability(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """TCP target of a ConfidNet (PDF): the softmax probability of the labelled class, detached."""
    return torch.softmax(logits, dim=1).gather(1, labels[:, None])[:, 0].detach()


def tcp_loss(confidence: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """L1 between a ConfidNet's output and its branch's TCP (PDF's confidence loss)."""
    return torch.mean(torch.abs(confidence - target))


# ----------------------------------------------------------------------------- the central model
class CentralModel(nn.Module):
    """Two frozen specialists in one wrapper; the auxiliary runs first, under stop-gradient.

    ``selective``: ``none`` (DISC-H / Up-G / SELF), ``feature`` (DISC: fused pooled feature) or
    ``late`` (PDF's late fusion: co-belief weights on the two branches' logits).
    """

    def __init__(
        self,
        main: nn.Module,
        aux: nn.Module,
        levels: Sequence[str],
        selective: str = "none",
    ) -> None:
        super().__init__()
        if selective not in ("none", "feature", "late"):
            raise ValueError(f"selective must be none, feature or late, got {selective!r}")
        self.main, self.aux = main.eval(), aux.eval()
        self.levels = tuple(levels)
        self.selective = selective
        self.lam = 0.59
        layout = main.layout
        self.transfer = nn.ModuleDict({lv: TransferBlock(lv, layout) for lv in self.levels})
        d_main, d_aux = main.feature_dim, aux.feature_dim
        if selective != "none":
            self.confid_main, self.confid_aux = ConfidNet(d_main), ConfidNet(d_aux)

    def train(self, mode: bool = True) -> CentralModel:
        """Only the collaboration modules switch to training mode; the specialists stay frozen."""
        super().train(mode)
        self.main.eval()
        self.aux.eval()
        return self

    def branches(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """Pooled main (after hierarchical collaboration) and auxiliary features, and the weights."""
        with torch.no_grad():
            aux = self.aux.stages(x)
        h = self.main.pre_layer(x)
        for level in LEVEL_ORDER:
            h = getattr(self.main, level)(h)
            if level in self.transfer:
                h = inject(h, self.transfer[level](aux), self.lam)
        out = {"p_main": self.main.pre_fc(h), "p_aux": aux["pre_fc"]}
        if self.selective != "none":
            out["c_main"] = self.confid_main(out["p_main"].detach())
            out["c_aux"] = self.confid_aux(out["p_aux"].detach())
            out["w_main"], out["w_aux"] = selective_weights(out["c_main"], out["c_aux"])
        return out

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """The frozen feature the downstream probe reads."""
        out = self.branches(x)
        if self.selective == "feature":
            return fuse(out["p_main"], out["p_aux"], out["w_main"], out["w_aux"])
        if self.selective == "late":
            # a linear head on [w_main p_main, w_aux p_aux] = w_main W_m p_main + w_aux W_a p_aux
            return torch.cat(
                (out["w_main"][:, None] * out["p_main"], out["w_aux"][:, None] * out["p_aux"]), 1
            )
        return out["p_main"]
