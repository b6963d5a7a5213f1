"""Paper-scale specialists: a ResNet (transformers' ``ResNetModel``) behind the ``Specialist`` interface,
and the key map that loads torchvision / mmcls / mmdet ResNet checkpoints onto it.

Stages as the official Central_Model splits a ResNet-50: pre_layer = stem + max-pool, layer1..layer3 = the
first three stages (256/512/1024 channels at strides 4/8/16), pre_fc = the fourth stage and the global
average pool (2048). The frozen backbone may hold bfloat16 / float16 weights: every stage casts its input
to the weights' dtype and returns float32, so the collaboration modules and heads stay float32.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from .experts import Specialist, freeze

logger = logging.getLogger(__name__)

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}
# torchvision names a BN "bn<k>" beside "conv<k>"; transformers numbers the conv layers of a block from 0
_BLOCK = re.compile(r"^layer(\d+)\.(\d+)\.(conv|bn)(\d+)\.(.+)$")
_DOWN = re.compile(r"^layer(\d+)\.(\d+)\.downsample\.([01])\.(.+)$")
_STEM = re.compile(r"^(conv1|bn1)\.(.+)$")
# prefixes under which checkpoints keep the backbone (mmcls / INTERN and mmdet: backbone.; DataParallel)
BACKBONE_PREFIXES = ("backbone.", "module.backbone.", "module.")


def resnet_config(values: Mapping[str, Any]):
    """A ``transformers.ResNetConfig`` (bottleneck blocks, stride on the 3x3 conv as torchvision)."""
    from transformers import ResNetConfig

    return ResNetConfig(**dict(values))


class InputAdapter(nn.Module):
    """uint8 or [0, 255] RGB images -> resized to size x size (bilinear) and normalised (mean/std in 0-255)."""

    def __init__(self, size: int, mean: Sequence[float], std: Sequence[float], dtype: torch.dtype):
        super().__init__()
        self.size, self.dtype = int(size), dtype
        self.register_buffer("mean", torch.tensor(mean, dtype=torch.float32).view(1, -1, 1, 1))
        self.register_buffer("std", torch.tensor(std, dtype=torch.float32).view(1, -1, 1, 1))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.to(self.mean.device, torch.float32)
        if x.shape[-2:] != (self.size, self.size):
            x = F.interpolate(x, size=(self.size, self.size), mode="bilinear", align_corners=False)
        return ((x - self.mean) / self.std).to(self.dtype)


class Cast(nn.Module):
    """A frozen backbone piece run in its own dtype, handing float32 on (the collaboration's dtype)."""

    def __init__(self, module: nn.Module, dtype: torch.dtype) -> None:
        super().__init__()
        self.module, self.dtype = module, dtype

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.module(x.to(self.dtype)).float()


def stage_strides(config) -> list[int]:
    """Stride of each stage's output w.r.t. the (resized) input: the embedder halves twice (conv, pool)."""
    strides, s = [], 4
    for i in range(len(config.hidden_sizes)):
        if i > 0 or config.downsample_in_first_stage:
            s *= 2
        strides.append(s)
    return strides


class ResNetSpecialist(nn.Module):
    """The ``Specialist`` interface on a transformers ResNet; ``head_cls`` sized to the task's classes."""

    def __init__(
        self,
        config,
        task: str,
        n_classes: int,
        input_size: int,
        mean: Sequence[float],
        std: Sequence[float],
        dtype: str = "float32",
    ) -> None:
        super().__init__()
        from transformers import ResNetModel

        if len(config.hidden_sizes) != 4:
            raise ValueError(
                f"disc.expert.resnet.hidden_sizes needs 4 stages (layer1-layer3 and the pooled stage), "
                f"got {list(config.hidden_sizes)}"
            )
        self.task, self.config = task, config
        torch_dtype = DTYPES[dtype]
        self.backbone = ResNetModel(config).to(torch_dtype)
        stages = self.backbone.encoder.stages
        self.pre_layer = nn.Sequential(
            InputAdapter(input_size, mean, std, torch_dtype),
            Cast(self.backbone.embedder, torch_dtype),
        )
        self.layer1 = Cast(stages[0], torch_dtype)
        self.layer2 = Cast(stages[1], torch_dtype)
        self.layer3 = Cast(stages[2], torch_dtype)
        self.pre_fc = nn.Sequential(
            Cast(nn.Sequential(stages[3], self.backbone.pooler), torch_dtype), nn.Flatten()
        )
        self.head_cls = nn.Linear(self.feature_dim, n_classes)
        self.head_box = nn.Linear(self.feature_dim, 4) if task == "box" else None

    @property
    def layout(self) -> dict[str, tuple[int, int]]:
        strides = stage_strides(self.config)
        return {
            lv: (int(self.config.hidden_sizes[i]), strides[i])
            for i, lv in enumerate(("layer1", "layer2", "layer3"))
        }

    @property
    def feature_dim(self) -> int:
        return int(self.config.hidden_sizes[3])

    # the stage walk and the pooled output are the small specialists' own
    stages = Specialist.stages
    forward = Specialist.forward


# ----------------------------------------------------------------------------- key map
def torchvision_to_hf(key: str) -> str | None:
    """A torchvision ResNet backbone key -> the ResNetModel key; None when it is not a backbone key."""
    if m := _STEM.match(key):
        part = "convolution" if m[1] == "conv1" else "normalization"
        return f"embedder.embedder.{part}.{m[2]}"
    if m := _BLOCK.match(key):
        stage, block, kind, k, rest = int(m[1]) - 1, m[2], m[3], int(m[4]) - 1, m[5]
        part = "convolution" if kind == "conv" else "normalization"
        return f"encoder.stages.{stage}.layers.{block}.layer.{k}.{part}.{rest}"
    if m := _DOWN.match(key):
        part = "convolution" if m[3] == "0" else "normalization"
        return f"encoder.stages.{int(m[1]) - 1}.layers.{m[2]}.shortcut.{part}.{m[4]}"
    return None


def hf_to_torchvision(key: str) -> str:
    """The inverse map (the tests build torchvision-layout state dicts from a ResNetModel with it)."""
    if key.startswith("embedder.embedder."):
        part, rest = key.removeprefix("embedder.embedder.").split(".", 1)
        return f"{'conv1' if part == 'convolution' else 'bn1'}.{rest}"
    m = re.match(r"^encoder\.stages\.(\d+)\.layers\.(\d+)\.(.+)$", key)
    if m is None:
        raise KeyError(f"not a ResNetModel backbone key: {key}")
    layer, block, rest = int(m[1]) + 1, m[2], m[3]
    if rest.startswith("shortcut."):
        part, tail = rest.removeprefix("shortcut.").split(".", 1)
        return f"layer{layer}.{block}.downsample.{0 if part == 'convolution' else 1}.{tail}"
    k, part, tail = re.match(r"^layer\.(\d+)\.(convolution|normalization)\.(.+)$", rest).groups()
    kind = "conv" if part == "convolution" else "bn"
    return f"layer{layer}.{block}.{kind}{int(k) + 1}.{tail}"


def unwrap_checkpoint(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    """mmcv / mmdet save {"meta": ..., "state_dict": {...}}; some trainers use "model"."""
    for key in ("state_dict", "model"):
        if key in obj and isinstance(obj[key], Mapping):
            return obj[key]
    return obj


def backbone_state(obj: Mapping[str, Any], target_keys: Sequence[str]) -> dict[str, torch.Tensor]:
    """Every backbone key of a torchvision-layout checkpoint mapped onto ``target_keys`` (strict).

    With a ``backbone.`` prefix (mmcls / INTERN, mmdet) keys outside it (heads, necks, RPN / ROI heads)
    are ignored, and torchvision's ``fc.*`` always is. Those are counted in a log line. A backbone key
    that maps nowhere, or a target key the checkpoint lacks, is an error naming it; BN's
    ``num_batches_tracked`` may be absent (older torchvision files), it never enters a forward pass.
    """
    state = unwrap_checkpoint(obj)
    prefix = next((p for p in BACKBONE_PREFIXES if any(k.startswith(p) for k in state)), "")
    mapped, ignored = {}, 0
    for key, value in state.items():
        if prefix and not key.startswith(prefix):
            ignored += 1
            continue
        bare = key.removeprefix(prefix)
        if bare.startswith("fc."):  # torchvision's classifier head
            ignored += 1
            continue
        target = torchvision_to_hf(bare)
        if target is None or target not in target_keys:
            raise KeyError(
                f"checkpoint key {key!r} is not a key of the configured ResNet backbone "
                "(disc.expert.resnet): wrong depth or widths, or not a torchvision-layout ResNet"
            )
        mapped[target] = value
    missing = [k for k in target_keys if k not in mapped and not k.endswith("num_batches_tracked")]
    if missing:
        raise KeyError(
            f"checkpoint lacks backbone key(s) {missing[:5]}{' ...' if len(missing) > 5 else ''} "
            f"({len(missing)} in all) of the configured ResNet (disc.expert.resnet)"
        )
    logger.info(
        "ResNet checkpoint: %d backbone keys mapped%s, %d non-backbone keys ignored",
        len(mapped),
        f" from under {prefix!r}" if prefix else "",
        ignored,
    )
    return mapped


def load_backbone_(model: ResNetSpecialist, checkpoint: Mapping[str, Any]) -> ResNetSpecialist:
    """Checkpoint weights into the specialist's backbone: a ResNetModel (transformers folder) or a state
    dict in torchvision layout (optionally under backbone.)."""
    target = model.backbone.state_dict()
    if "model" in checkpoint and isinstance(checkpoint["model"], nn.Module):
        state = checkpoint["model"].state_dict()
        unknown = sorted(set(state) - set(target))
        if unknown:
            raise KeyError(f"transformers ResNet folder has key(s) {unknown[:5]} unknown here")
    else:
        state = backbone_state(checkpoint.get("state_dict", checkpoint), list(target))
    for key, value in state.items():
        if tuple(value.shape) != tuple(target[key].shape):
            raise ValueError(
                f"checkpoint tensor for {key} has shape {tuple(value.shape)}, the configured ResNet "
                f"(disc.expert.resnet) expects {tuple(target[key].shape)}"
            )
    model.backbone.load_state_dict(state, strict=False)  # strictness checked above, key by key
    return model


def config_values(checkpoint: Mapping[str, Any] | None, resnet: Mapping[str, Any]) -> dict:
    """The ResNetConfig values: a transformers folder's own config, else the parameters'."""
    if checkpoint is not None and isinstance(checkpoint.get("model"), nn.Module):
        cfg = checkpoint["model"].config
        keys = (
            "embedding_size",
            "hidden_sizes",
            "depths",
            "layer_type",
            "downsample_in_first_stage",
        )
        return {k: getattr(cfg, k) for k in keys} | {"num_channels": cfg.num_channels}
    return dict(resnet)


def build_resnet_specialist(
    spec: Mapping[str, Any], state: Mapping[str, torch.Tensor] | None = None
):
    """A ResNetSpecialist from a record's description (and its saved state), frozen in eval mode."""
    model = ResNetSpecialist(
        resnet_config(spec["config"]),
        spec["task"],
        int(spec["n_classes"]),
        int(spec["input_size"]),
        spec["mean"],
        spec["std"],
        spec["dtype"],
    )
    if state is not None:
        model.load_state_dict(state)
    return freeze(model.eval())
