"""Recovery after pruning with PEFT: LoRA adapters trained on the training split; the sparse base
weights stay frozen, so every pruned weight stays exactly zero."""

from __future__ import annotations

import copy
import logging
import time
from typing import Any

import torch

from paper_pipelines.common.progress import progress
from paper_pipelines.pipelines.dlp.metrics import perplexity

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
    for step in progress(range(steps), desc="LoRA recovery"):
        starts = torch.randint(0, train_ids.numel() - seqlen - 1, (batch,), generator=generator)
        x = torch.stack([train_ids[s : s + seqlen] for s in starts]).to(device)
        loss = peft_model(input_ids=x, labels=x).loss
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        if step % max(1, steps // 5) == 0 or step == steps - 1:
            logger.info("LoRA step %d/%d: loss %.3f", step + 1, steps, loss.item())
    return peft_model.eval()


def lora_recovery(
    pruned: torch.nn.Module,
    train_ids: torch.Tensor,
    evaluation_ids: torch.Tensor,
    eval_batch_size: int,
    seed: int,
    **lora: Any,
) -> dict[str, Any]:
    """LoRA-fine-tune a copy of the pruned model; perplexity before and after, and whether every pruned
    weight is still exactly zero. ``lora``: the keyword arguments of :func:`lora_finetune`."""
    model = copy.deepcopy(pruned)
    zero_before = {n: (p == 0) for n, p in model.named_parameters() if p.dim() == 2}
    ppl_before = perplexity(model, evaluation_ids, eval_batch_size)
    started = time.perf_counter()
    tuned = lora_finetune(model, train_ids, seed=seed, **lora)
    seconds = time.perf_counter() - started
    ppl_after = perplexity(tuned, evaluation_ids, eval_batch_size)
    base = tuned.get_base_model()
    masks_intact = all(
        bool((p[zero_before[n]] == 0).all())
        for n, p in base.named_parameters()
        if n in zero_before and "lora_" not in n
    )
    logger.info("LoRA recovery: perplexity %.2f -> %.2f in %.0f s", ppl_before, ppl_after, seconds)
    return {
        "enabled": True,
        "ppl_before": ppl_before,
        "ppl_after": ppl_after,
        "steps": lora["steps"],
        "seconds": seconds,
        "masks_intact": masks_intact,
    }
