"""The paper's measures: perplexity, the sparsity actually reached, and the optional zero-shot accuracy."""

from __future__ import annotations

import logging
import math

import torch

from paper_pipelines.pipelines.dlp.calibration import decoder_blocks, find_linears

logger = logging.getLogger(__name__)


@torch.no_grad()
def perplexity(model: torch.nn.Module, windows: torch.Tensor, batch_size: int) -> float:
    """exp(mean next-token NLL) over non-overlapping windows, as the paper's WikiText-2 evaluation."""
    device = next(model.parameters()).device
    total_nll, total_tokens = 0.0, 0
    for chunk in windows.split(batch_size):
        chunk = chunk.to(device)
        logits = model(chunk, use_cache=False).logits[:, :-1].float()
        nll = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), chunk[:, 1:].reshape(-1), reduction="sum"
        )
        total_nll += float(nll)
        total_tokens += chunk[:, 1:].numel()
    return math.exp(total_nll / total_tokens)


def zero_shot_accuracy(model: torch.nn.Module, tokenizer, tasks: list[str]) -> dict:
    """Mean zero-shot accuracy on lm-evaluation-harness tasks, when the harness and its data are present.

    Offline (no harness or no cached task data) it returns why it was skipped, and logs it.
    """
    if not tasks:
        reason = "no zero-shot tasks requested (dlp.evaluation.zero_shot_tasks is empty)"
        logger.info("zero-shot evaluation skipped: %s", reason)
        return {"skipped": reason}
    try:
        from lm_eval import simple_evaluate
        from lm_eval.models.huggingface import HFLM
    except ImportError:
        reason = "lm-evaluation-harness is not installed (pip install lm-eval); zero-shot skipped"
        logger.warning(reason)
        return {"skipped": reason}
    try:
        out = simple_evaluate(model=HFLM(pretrained=model, tokenizer=tokenizer), tasks=tasks)
    except Exception as exc:  # task data missing offline is the common case
        reason = f"zero-shot evaluation failed ({exc.__class__.__name__}: {exc}); skipped"
        logger.warning(reason)
        return {"skipped": reason}
    accs = {t: float(r.get("acc,none", float("nan"))) for t, r in out["results"].items()}
    return {"accuracy": accs, "mean_accuracy": sum(accs.values()) / max(1, len(accs))}


def prunable_sparsity(model: torch.nn.Module) -> float:
    """Fraction of zero weights over the linears inside the blocks (embeddings, norms, lm_head excluded)."""
    zeros = total = 0
    for block in decoder_blocks(model):
        for lin in find_linears(block).values():
            zeros += int((lin.weight.data == 0).sum())
            total += lin.weight.numel()
    return zeros / total
