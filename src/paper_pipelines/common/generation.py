"""Text generation with any causal LM of ``common.lm``: chat template, batched greedy decoding.

Shared by the papers that put a real LM in the loop (neutrality's generator and judge, omnibench's LM
agent). Batches are left-padded and sent to the device of the model's first parameters, so a model
spread over devices by a ``device_map`` is used where accelerate put it.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from paper_pipelines.common.progress import progress

if TYPE_CHECKING:
    from paper_pipelines.common.lm import CausalLM

logger = logging.getLogger(__name__)


def prepare_for_generation(tok: Any) -> Any:
    """Left padding and a pad token: decoder-only batches must end where generation continues."""
    tok.padding_side = "left"
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return tok


_THINK = re.compile(r"<think>.*?</think>", flags=re.DOTALL)


def strip_think(text: str) -> str:
    """Drop a reasoning model's <think>...</think> block (the paper does this for R1 before annotation)."""
    if "</think>" in text:
        return _THINK.sub("", text).split("</think>")[-1].strip()
    return text


def chat_inputs(
    prompts: Sequence[str], tok: Any, use_chat_template: bool, system: str | None
) -> list[str]:
    """Prompt strings as the model sees them (chat template with the generation prompt, or raw)."""
    if not use_chat_template or getattr(tok, "chat_template", None) is None:
        return list(prompts)
    texts = []
    for p in prompts:
        messages = ([{"role": "system", "content": system}] if system else []) + [
            {"role": "user", "content": p}
        ]
        texts.append(tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True))
    return texts


def generate_batched(
    model: Any,
    tok: Any,
    prompts: Sequence[str],
    max_new_tokens: int,
    batch_size: int,
    use_chat_template: bool = True,
    system: str | None = None,
    remove_think: bool = True,
) -> list[dict[str, Any]]:
    """Greedy decoding in left-padded batches; returns response, new-token count and seconds per prompt.

    Prompts are batched in order of length (less padding) and returned in the input order.
    """
    import torch

    texts = chat_inputs(prompts, tok, use_chat_template, system)
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    results: list[dict[str, Any] | None] = [None] * len(texts)
    device = next(model.parameters()).device
    n_batches = (len(order) + batch_size - 1) // batch_size
    batches: Any = range(n_batches)
    if n_batches > 1:  # an agent's one-prompt calls would log a line per step
        batches = progress(batches, desc=f"generating {len(texts)} responses", logger=logger)
    for b in batches:
        idx = order[b * batch_size : (b + 1) * batch_size]
        enc = tok(
            [texts[i] for i in idx], return_tensors="pt", padding=True, add_special_tokens=False
        )
        enc = {k: v.to(device) for k, v in enc.items() if k in ("input_ids", "attention_mask")}
        start = time.perf_counter()
        with torch.no_grad():
            out = model.generate(
                **enc, max_new_tokens=max_new_tokens, do_sample=False, pad_token_id=tok.pad_token_id
            )
        seconds = (time.perf_counter() - start) / len(idx)
        new = out[:, enc["input_ids"].shape[1] :]
        for j, i in enumerate(idx):
            ids = new[j].tolist()
            n_tokens = next(
                (k for k, t in enumerate(ids) if t in (tok.eos_token_id, tok.pad_token_id)),
                len(ids),
            )
            text = tok.decode(ids, skip_special_tokens=True).strip()
            if remove_think:
                text = strip_think(text)
            # The paper stores a blocked/empty answer as "No Response" before annotation.
            results[i] = dict(response=text or "No Response", n_tokens=n_tokens, seconds=seconds)
        logger.debug("generated batch %d/%d (%.2f s per prompt)", b + 1, n_batches, seconds)
    return [r for r in results if r is not None]


def place_model(model: Any, device: str) -> Any:
    """Move the model to the run's device, unless it is already spread over devices.

    A model loaded with a ``device_map`` (a 70B judge or generator sharded over GPUs, or offloaded to the
    CPU) carries ``hf_device_map``; moving it would undo the placement or fail, so it is used as loaded
    and every batch goes to the device of its first parameters (``generate_batched``).
    """
    placement = getattr(model, "hf_device_map", None)
    if placement:
        logger.info(
            "model already placed by its device_map over %s; runtime.device=%s not applied",
            sorted({str(d) for d in placement.values()}),
            device,
        )
        return model
    return model.to(device)


def completer(
    lm: CausalLM, max_new_tokens: int, batch_size: int, device: str
) -> Callable[[list[str]], list[str]]:
    """Prompts -> replies of an instruct model (the LLM judge's ``complete``), chat template, greedy."""
    model = place_model(lm.model, device)
    tok = prepare_for_generation(lm.tokenizer)

    def complete(texts: list[str]) -> list[str]:
        outs = generate_batched(model, tok, texts, max_new_tokens, batch_size, True, None, True)
        return [o["response"] for o in outs]

    return complete
