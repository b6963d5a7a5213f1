"""Recovery after pruning with PEFT: LoRA adapters trained on the training split; the sparse base
weights stay frozen, so every pruned weight stays exactly zero."""

from __future__ import annotations

import logging

import torch

logger = logging.getLogger(__name__)

LLAMA_LINEARS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]


def lora_finetune(
    model: torch.nn.Module,
    train_ids: torch.Tensor,
    steps: int,
    batch: int,
    seqlen: int,
    lr: float,
    rank: int,
    lora_alpha: int,
    dropout: float,
    seed: int,
) -> torch.nn.Module:
    """Wrap `model` with LoRA on every block linear and train the adapters for `steps` steps."""
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(
        r=rank,
        lora_alpha=lora_alpha,
        lora_dropout=dropout,
        target_modules=LLAMA_LINEARS,
        task_type="CAUSAL_LM",
        bias="none",
    )
    peft_model = get_peft_model(model, config)
    trainable = [p for p in peft_model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(trainable, lr=lr)
    generator = torch.Generator().manual_seed(seed)
    device = next(model.parameters()).device
    peft_model.train()
    for step in range(steps):
        starts = torch.randint(0, train_ids.numel() - seqlen - 1, (batch,), generator=generator)
        x = torch.stack([train_ids[s : s + seqlen] for s in starts]).to(device)
        loss = peft_model(input_ids=x, labels=x).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % max(1, steps // 5) == 0 or step == steps - 1:
            logger.info("LoRA step %d/%d: loss %.3f", step + 1, steps, loss.item())
    return peft_model.eval()
