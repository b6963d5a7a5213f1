"""The width families the paper sweeps: an MLP in NTK parameterisation (the theory's network), and the
LeNet-5 and ResNet families of its accuracy figures, each indexed by one width number.

NTK parameterisation (Jacot et al. 2018; the paper's Sec. 3): every weight and bias is drawn N(0, 1) and
the layer computes z^{l+1} = sigma_W / sqrt(n_l) * W^{l+1} x^l + sigma_b * b^{l+1}, so the kernel has a
finite limit as the width n grows. The standard parameterisation draws W ~ N(0, sigma_W^2 / n_l),
b ~ N(0, sigma_b^2) and computes W x + b: the same function at initialisation, different dynamics.
"""

from __future__ import annotations

import math

import torch
from torch import nn

FAMILIES = ("mlp", "lenet", "resnet")


class NTKLinear(nn.Module):
    """One fully connected layer, z = sigma_W / sqrt(fan_in) * W x + sigma_b * b (NTK) or W x + b."""

    def __init__(
        self,
        fan_in: int,
        fan_out: int,
        sigma_w2: float,
        sigma_b: float,
        parameterisation: str,
        generator: torch.Generator,
    ) -> None:
        super().__init__()
        self.fan_in, self.sigma_w2, self.sigma_b = fan_in, sigma_w2, sigma_b
        self.ntk = parameterisation == "ntk"
        weight = torch.randn(fan_out, fan_in, generator=generator)
        bias = torch.randn(fan_out, generator=generator)
        if not self.ntk:  # the same distribution of functions, carried by the weights themselves
            weight = weight * math.sqrt(sigma_w2 / fan_in)
            bias = bias * sigma_b
        self.weight = nn.Parameter(weight)
        self.bias = nn.Parameter(bias)

    @property
    def weight_scale(self) -> float:
        """sigma_W / sqrt(n_l) under NTK parameterisation, 1 under the standard one."""
        return math.sqrt(self.sigma_w2 / self.fan_in) if self.ntk else 1.0

    @property
    def bias_scale(self) -> float:
        return self.sigma_b if self.ntk else 1.0

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight_scale * (x @ self.weight.T) + self.bias_scale * self.bias


class NTKMLP(nn.Module):
    """L hidden ReLU layers of width n and a linear read-out (the theory's network; the code's "fc-k")."""

    def __init__(
        self,
        in_dim: int,
        width: int,
        out_dim: int,
        depth: int = 2,
        sigma_w2: float = 1.5,
        sigma_b: float = 0.1,
        parameterisation: str = "ntk",
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__()
        generator = generator or torch.Generator().manual_seed(0)
        dims = [in_dim, *([width] * depth), out_dim]
        self.layers = nn.ModuleList(
            NTKLinear(a, b, sigma_w2, sigma_b, parameterisation, generator)
            for a, b in zip(dims[:-1], dims[1:], strict=True)
        )

    def forward_layers(self, x: torch.Tensor) -> tuple[torch.Tensor, list, list]:
        """Output plus, per layer l, its input a_{l-1} and its pre-activation z_l (for the layerwise NTK)."""
        a = x.flatten(1)
        inputs, pre = [], []
        for i, layer in enumerate(self.layers):
            inputs.append(a)
            z = layer(a)
            pre.append(z)
            a = torch.relu(z) if i < len(self.layers) - 1 else z
        return a, inputs, pre

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        a = x.flatten(1)
        for layer in self.layers[:-1]:
            a = torch.relu(layer(a))
        return self.layers[-1](a)


class LeNet(nn.Module):
    """LeNet-5 with channels (6k, 16k) and fully connected widths (120k, 84k) (the code's "CNN-k")."""

    def __init__(self, in_shape: tuple[int, int, int], k: int, out_dim: int) -> None:
        super().__init__()
        channels, height, width = in_shape
        # padding 2 keeps the 5x5 convolutions valid on 8x8 digits as on 28x28 MNIST and 32x32 CIFAR
        self.features = nn.Sequential(
            nn.Conv2d(channels, 6 * k, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(6 * k, 16 * k, 5, padding=2),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
        )
        flat = 16 * k * (height // 4) * (width // 4)
        self.classifier = nn.Sequential(
            nn.Linear(flat, 120 * k),
            nn.ReLU(),
            nn.Linear(120 * k, 84 * k),
            nn.ReLU(),
            nn.Linear(84 * k, out_dim),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(self.features(x))


class BasicBlock(nn.Module):
    """Two 3x3 convolutions with a skip connection; no normalisation, so FedAvg averages parameters only."""

    def __init__(self, c_in: int, c_out: int, stride: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(c_in, c_out, 3, stride=stride, padding=1)
        self.conv2 = nn.Conv2d(c_out, c_out, 3, padding=1)
        # the residual branch starts at zero (Fixup-style), which keeps a norm-free ResNet trainable
        nn.init.zeros_(self.conv2.weight)
        nn.init.zeros_(self.conv2.bias)
        self.skip = (
            nn.Conv2d(c_in, c_out, 1, stride=stride) if stride != 1 or c_in != c_out else None
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.conv2(torch.relu(self.conv1(x)))
        return torch.relu(out + (x if self.skip is None else self.skip(x)))


class ResNet(nn.Module):
    """A CIFAR-style ResNet with stages of 16k, 32k, 64k channels (width multiplier k)."""

    def __init__(
        self, in_shape: tuple[int, int, int], k: int, out_dim: int, blocks: int = 1
    ) -> None:
        super().__init__()
        widths = [16 * k, 32 * k, 64 * k]
        layers: list[nn.Module] = [nn.Conv2d(in_shape[0], widths[0], 3, padding=1), nn.ReLU()]
        c_in = widths[0]
        for stage, c_out in enumerate(widths):
            for b in range(blocks):
                layers.append(BasicBlock(c_in, c_out, 2 if (stage > 0 and b == 0) else 1))
                c_in = c_out
        self.body = nn.Sequential(*layers, nn.AdaptiveAvgPool2d(1), nn.Flatten())
        self.head = nn.Linear(c_in, out_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.body(x))


def build_network(
    family: str,
    in_shape: tuple[int, int, int],
    width: int,
    out_dim: int,
    depth: int,
    sigma_w2: float,
    sigma_b: float,
    parameterisation: str,
    seed: int,
) -> nn.Module:
    """One member of a width family; the same ``seed`` gives the same initial weights (FedAvg and its
    centralised twin start from one initialisation, as the official code's shared seed does)."""
    generator = torch.Generator().manual_seed(seed)
    if family == "mlp":
        in_dim = int(math.prod(in_shape))
        return NTKMLP(in_dim, width, out_dim, depth, sigma_w2, sigma_b, parameterisation, generator)
    torch.manual_seed(seed)  # torch.nn's default initialisation draws from the global generator
    if family == "lenet":
        return LeNet(in_shape, width, out_dim)
    if family == "resnet":
        return ResNet(in_shape, width, out_dim, blocks=max(1, depth // 2))
    raise ValueError(f"unknown model family {family!r}; choose one of {', '.join(FAMILIES)}")
