"""Recovery after pruning with PEFT: LoRA adapters trained on the training split; the sparse base
weights stay frozen, so every pruned weight stays exactly zero."""

from __future__ import annotations

import logging
import time
from typing import Any

import torch

from paper_pipelines.common.progress import progress
from paper_pipelines.pipelines.dlp.metrics import perplexity
from paper_pipelines.pipelines.dlp.sequential import pack_mask, unpack_mask

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


def pruned_weights_still_zero(model: torch.nn.Module, zero_before: dict[str, dict]) -> bool:
    """Whether every weight that was zero before LoRA is zero now, for EVERY 2-D parameter named in
    `zero_before`. peft renames a wrapped linear's weight ``<name>.base_layer.weight``; the adapters
    (``lora_``) are not part of the pruned model. A parameter that cannot be found is an error."""
    current = {
        n.replace(".base_layer.", "."): p for n, p in model.named_parameters() if "lora_" not in n
    }
    missing = sorted(set(zero_before) - set(current))
    if missing:
        raise ValueError(f"parameters missing after LoRA: {missing[:3]}")
    return all(
        bool((current[n].detach()[unpack_mask(bits).to(current[n].device)] == 0).all())
        for n, bits in zero_before.items()
    )


def lora_recovery(
    pruned: torch.nn.Module,
    train_ids: torch.Tensor,
    evaluation_ids: torch.Tensor,
    eval_batch_size: int,
    seed: int,
    **lora: Any,
) -> dict[str, Any]:
    """LoRA-fine-tune the pruned model IN PLACE (adapters only, no copy of the model), measure
    perplexity before and after and whether every pruned weight is still exactly zero, then remove
    the adapters (``unload``, no merge): `pruned` is left as it came. ``lora``: the keyword
    arguments of :func:`lora_finetune`."""
    # zero patterns as bits on the CPU (an 8th of a byte per weight), not a copy of the weights
    trainable = [p.requires_grad for p in pruned.parameters()]
    zero_before = {
        n: pack_mask(p.detach() == 0) for n, p in pruned.named_parameters() if p.dim() == 2
    }
    ppl_before = perplexity(pruned, evaluation_ids, eval_batch_size)
    started = time.perf_counter()
    tuned = lora_finetune(pruned, train_ids, seed=seed, **lora)
    seconds = time.perf_counter() - started
    ppl_after = perplexity(tuned, evaluation_ids, eval_batch_size)
    masks_intact = pruned_weights_still_zero(tuned.get_base_model(), zero_before)
    tuned.unload()
    for p, flag in zip(pruned.parameters(), trainable, strict=True):  # peft froze them
        p.requires_grad_(flag)
    logger.info("LoRA recovery: perplexity %.2f -> %.2f in %.0f s", ppl_before, ppl_after, seconds)
    return {
        "enabled": True,
        "ppl_before": ppl_before,
        "ppl_after": ppl_after,
        "steps": lora["steps"],
        "seconds": seconds,
        "masks_intact": masks_intact,
    }
