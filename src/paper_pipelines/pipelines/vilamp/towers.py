"""Pretrained towers (paper scale): CLIP or SigLIP from a local folder in place of the stand-ins.

The released ViLAMP selects frames with CLIP ViT-B/32 (frame and question embeddings) and reads patch
tokens from SigLIP's vision tower (hidden layer -2). ``PretrainedTowers`` gives the same interface as
the trained stand-in (:class:`~.models.Selector`): ``encode_video`` -> (patch tokens, frame embeddings),
``encode_query`` -> the question embedding, ``patches`` / ``vision_dim`` / ``query_dim``; DKS and DFM
run on its outputs unchanged. Weights are read with ``local_files_only=True``: nothing is downloaded.
Frames are resized and normalised here with torch (the processor's image half is not needed, so a
folder with the model and its tokenizer suffices).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

TowerKind = Literal["stand_in", "clip", "siglip"]
# the towers' published normalisation, used when the folder has no preprocessor_config.json
IMAGE_MEAN_STD = {
    "clip": ((0.48145466, 0.4578275, 0.40821073), (0.26862954, 0.26130258, 0.27577711)),
    "siglip": ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),
}
DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def folder_problem(path: str | None, kind: str) -> str | None:
    """Why ``path`` is not a local ``kind`` model folder (None when it is one)."""
    if not path:
        return "is not set"
    config = Path(path) / "config.json"
    if not config.is_file():
        return f"{path!r} has no config.json"
    model_type = json.loads(config.read_text()).get("model_type")
    if model_type != kind:
        return f"{path!r} holds a {model_type!r} model, not {kind!r}"
    return None


def image_mean_std(path: str, kind: str) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """(mean, std) per channel from the folder's preprocessor_config.json, else the tower's defaults."""
    config = Path(path) / "preprocessor_config.json"
    if config.is_file():
        cfg = json.loads(config.read_text())
        if "image_mean" in cfg and "image_std" in cfg:
            return tuple(cfg["image_mean"]), tuple(cfg["image_std"])
    return IMAGE_MEAN_STD[kind]


def _features(out) -> torch.Tensor:
    """get_*_features returns a tensor in transformers 4 and an output with pooler_output in 5."""
    return out if isinstance(out, torch.Tensor) else out.pooler_output


class PretrainedTowers(nn.Module):
    """Frozen dual encoder for DKS (frame / question embeddings) + a vision tower for the patch tokens.

    ``model`` is a CLIPModel or SiglipModel; ``vision`` (optional) a second one whose vision tower gives
    the patch tokens, as ViLAMP pairs a CLIP selector with a SigLIP vision tower.
    """

    def __init__(
        self,
        model: nn.Module,
        tokenizer,
        kind: str,
        mean_std: tuple[tuple[float, ...], tuple[float, ...]],
        vision: nn.Module | None = None,
        vision_layer: int = -2,
    ) -> None:
        super().__init__()
        self.model, self.vision = model, vision if vision is not None else model
        self.tokenizer, self.kind, self.vision_layer = tokenizer, kind, vision_layer
        self.register_buffer("mean", torch.tensor(mean_std[0]).reshape(1, 3, 1, 1))
        self.register_buffer("std", torch.tensor(mean_std[1]).reshape(1, 3, 1, 1))
        selector_cfg = model.config.vision_config
        vision_cfg = self.vision.config.vision_config
        self.selector_size = selector_cfg.image_size
        self.vision_size = vision_cfg.image_size
        self.patches = (vision_cfg.image_size // vision_cfg.patch_size) ** 2  # M
        self.vision_dim = vision_cfg.hidden_size
        self.query_dim = _projection_dim(model)
        self.max_length = model.config.text_config.max_position_embeddings

    def preprocess(self, frames: torch.Tensor, size: int) -> torch.Tensor:
        """(N, 3, F, F) frames in [0, 1] -> resized to the tower's input and normalised, its dtype."""
        weight = next(self.model.parameters())
        x = F.interpolate(
            frames.to(device=weight.device, dtype=torch.float32),
            size=(size, size),
            mode="bilinear",
            align_corners=False,
        )
        return ((x - self.mean) / self.std).to(weight.dtype)

    def patch_tokens(self, frames: torch.Tensor) -> torch.Tensor:
        """(N, M, Dv) vision-tower hidden states at ``vision_layer`` (CLIP's class token dropped)."""
        out = self.vision.vision_model(
            pixel_values=self.preprocess(frames, self.vision_size), output_hidden_states=True
        )
        hidden = out.hidden_states[self.vision_layer]
        return hidden[:, -self.patches :]  # CLIP prepends a class token, SigLIP has none

    def frame_embedding(self, frames: torch.Tensor) -> torch.Tensor:
        """(N, D) unit-norm image embeddings e_n = E_img(f_n)."""
        pixels = self.preprocess(frames, self.selector_size)
        return F.normalize(_features(self.model.get_image_features(pixel_values=pixels)), dim=-1)

    @torch.no_grad()
    def encode_video(
        self, frames: torch.Tensor, chunk: int = 256
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(patch tokens (N, M, Dv), frame embeddings (N, D)), ``chunk`` frames at a time."""
        tokens, embs = [], []
        for lo in range(0, frames.shape[0], chunk):
            part = frames[lo : lo + chunk]
            tokens.append(self.patch_tokens(part))
            embs.append(self.frame_embedding(part))
        return torch.cat(tokens), torch.cat(embs)

    @torch.no_grad()
    def encode_query(self, question: str, cache: dict | None = None) -> torch.Tensor:
        """(D,) unit-norm text embedding q = E_txt(Q) of the bare question (the cache is not used)."""
        if not question.strip():
            raise ValueError("an empty question has no text embedding; every question needs words")
        # SigLIP was trained on text padded to its full length; CLIP pools at the end token
        padding = "max_length" if self.kind == "siglip" else True
        enc = self.tokenizer(
            [question],
            padding=padding,
            truncation=True,
            max_length=self.max_length,
            return_tensors="pt",
        )
        device = next(self.model.parameters()).device
        enc = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        if self.kind == "siglip":
            enc.pop("attention_mask", None)  # SiglipModel attends to the padding as trained
        return F.normalize(_features(self.model.get_text_features(**enc)), dim=-1)[0]


def _projection_dim(model: nn.Module) -> int:
    """Width of the joint embedding: CLIP's projection_dim, SigLIP's text hidden size."""
    cfg = model.config
    if getattr(cfg, "model_type", "") == "clip":
        return cfg.projection_dim
    return getattr(cfg.text_config, "projection_size", None) or cfg.text_config.hidden_size


def load_towers(towers, device: str) -> PretrainedTowers:
    """The ``towers`` block's local CLIP / SigLIP folder(s), frozen, on ``device`` in its dtype."""
    from transformers import AutoModel, AutoTokenizer

    for key, path, kind in (
        ("path", towers.path, towers.kind),
        ("vision_path", towers.vision_path, towers.vision_kind),
    ):
        if key == "vision_path" and path is None:
            continue
        problem = folder_problem(path, kind)
        if problem:
            raise FileNotFoundError(f"vilamp.towers.{key} {problem}: {FIX_HINT}")
    dtype = DTYPES[towers.dtype]

    def load(path: str) -> nn.Module:
        model = AutoModel.from_pretrained(path, local_files_only=True, dtype=dtype)
        return model.to(device).eval().requires_grad_(False)

    vision = load(towers.vision_path) if towers.vision_path else None
    built = PretrainedTowers(
        load(towers.path),
        AutoTokenizer.from_pretrained(towers.path, local_files_only=True),
        towers.kind,
        image_mean_std(towers.vision_path or towers.path, towers.vision_kind or towers.kind),
        vision,
        towers.vision_layer,
    )
    return built.to(device)


FIX_HINT = (
    "point it at a local folder saved by CLIPModel / SiglipModel.save_pretrained with its tokenizer "
    "(config.json, weights, tokenizer files), e.g. a copy of openai/clip-vit-base-patch32; nothing is "
    "downloaded. Or set vilamp.towers.kind: stand_in to train the small towers in the pipeline"
)
