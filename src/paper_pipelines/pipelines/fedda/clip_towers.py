"""The paper-scale towers: a pretrained CLIP (ViT-B/16 in the paper) from a local Hugging Face folder.

``HFClipText`` is the released ``TextEncoder`` for transformers' ``CLIPModel``: soft-token embeddings plus
positions, CLIP's causal transformer, the final layer norm, the EOT token's state times
``text_projection``; it has the interface of :mod:`.towers`' text towers, so prompts, adapters and the
federated loop run on it unchanged. ``HFClipImage`` maps stored images in [0, 1] to CLIP's input
(resize to the vision tower's size, CLIP's mean and std) and returns the projected image feature.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

# OpenAI CLIP's pixel statistics (the image processor of every released CLIP checkpoint)
CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)


def causal_mask(length: int, dtype: torch.dtype, device: torch.device) -> torch.Tensor:
    """Additive (1, 1, T, T) mask: position i attends to positions <= i (CLIP's text attention)."""
    blocked = torch.ones(length, length, dtype=torch.bool, device=device).triu(1)
    mask = torch.zeros(length, length, dtype=dtype, device=device)
    return mask.masked_fill(blocked, torch.finfo(dtype).min)[None, None]


class HFClipText(nn.Module):
    """CLIP's text tower on token embeddings; the model and its tokenizer stay frozen."""

    def __init__(self, clip_model: nn.Module, tokenizer: Any) -> None:
        super().__init__()
        self.text = clip_model.text_model.eval().requires_grad_(False)
        self.projection = clip_model.text_projection.requires_grad_(False)
        self.tokenizer = tokenizer
        self.bos_id, self.eos_id = tokenizer.bos_token_id, tokenizer.eos_token_id
        self.pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else self.eos_id
        self.width = self.text.config.hidden_size
        self.dim = self.projection.out_features
        self.context_length = self.text.config.max_position_embeddings
        # CLIP's learned temperature, used as is by the released code (exp(4.6052) = 100 for ViT-B/16)
        self.logit_scale = float(clip_model.logit_scale.detach().float().exp())

    def tokens(self, text: str) -> list[int]:
        """BPE ids of ``text`` without the start and end tokens."""
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.text.embeddings.token_embedding(ids)

    def forward(
        self, embeds: torch.Tensor, attention_mask: torch.Tensor, eot_index: torch.Tensor
    ) -> torch.Tensor:
        """Projected EOT features (B, dim); causal attention, so right padding is never seen."""
        dtype = self.text.final_layer_norm.weight.dtype
        hidden = self.text.embeddings(inputs_embeds=embeds.to(dtype))
        mask = causal_mask(hidden.shape[1], dtype, hidden.device)
        hidden = self.text.encoder(inputs_embeds=hidden, attention_mask=mask).last_hidden_state
        hidden = self.text.final_layer_norm(hidden)
        return self.projection(hidden[torch.arange(hidden.shape[0]), eot_index])


class HFClipImage(nn.Module):
    """CLIP's vision tower and projection on (N, 3, S, S) images in [0, 1]."""

    def __init__(self, clip_model: nn.Module) -> None:
        super().__init__()
        self.vision = clip_model.vision_model.eval().requires_grad_(False)
        self.projection = clip_model.visual_projection.requires_grad_(False)
        self.size = self.vision.config.image_size
        self.register_buffer("mean", torch.tensor(CLIP_MEAN).view(1, 3, 1, 1), persistent=False)
        self.register_buffer("std", torch.tensor(CLIP_STD).view(1, 3, 1, 1), persistent=False)

    def pixel_values(self, images: torch.Tensor) -> torch.Tensor:
        """Bicubic resize to the tower's input size (square images: the processor's resize and centre
        crop coincide), then CLIP's normalisation."""
        x = images.to(self.mean.device, torch.float32)
        if x.shape[-1] != self.size or x.shape[-2] != self.size:
            x = F.interpolate(x, size=(self.size, self.size), mode="bicubic", align_corners=False)
        return (x.clamp(0, 1) - self.mean) / self.std

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        dtype = self.projection.weight.dtype
        pooled = self.vision(pixel_values=self.pixel_values(images).to(dtype)).pooler_output
        return self.projection(pooled).float()


def clip_towers(bundle: dict[str, Any]) -> tuple[HFClipText, HFClipImage]:
    """Both towers of a loaded ``ClipFolderDataset`` bundle ({"model", "tokenizer"})."""
    if not bundle or "model" not in bundle:
        raise ValueError(
            "fedda.backbone.type is clip_folder but the catalog entry fedda.clip_model is empty: "
            "point it at a local CLIP folder (type paper_pipelines.datasets.ClipFolderDataset, "
            "see conf/paper/catalog/fedda.yml)"
        )
    return HFClipText(bundle["model"], bundle["tokenizer"]), HFClipImage(bundle["model"])
