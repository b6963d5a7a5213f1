"""Text for calibration and evaluation, offline: Python's own documentation, split by topic."""

from __future__ import annotations

import ast
import random
import sysconfig
from pathlib import Path

import numpy as np
import torch


def pydoc_topics_split(train_frac: float, seed: int = 0) -> dict[str, str]:
    """Python's pydoc help topics (465k characters of technical English), split by topic, disjoint."""
    from pydoc_data.topics import topics

    keys = sorted(topics)
    random.Random(seed).shuffle(keys)
    n_train = int(len(keys) * train_frac)
    return {
        "train": "\n\n".join(topics[k] for k in keys[:n_train]),
        "test": "\n\n".join(topics[k] for k in keys[n_train:]),
    }


def stdlib_docstrings_split(train_frac: float, seed: int = 0) -> dict[str, str]:
    """Docstrings of the standard library's modules (several MB), split by module, disjoint."""
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = sorted(p for p in stdlib.glob("*.py"))
    random.Random(seed).shuffle(files)
    texts = []
    for path in files:
        try:
            tree = ast.parse(path.read_text(encoding="utf-8", errors="ignore"))
        except SyntaxError:
            continue
        docs = [
            ast.get_docstring(node)
            for node in ast.walk(tree)
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        texts.append("\n\n".join(d for d in docs if d))
    n_train = int(len(texts) * train_frac)
    return {"train": "\n\n".join(texts[:n_train]), "test": "\n\n".join(texts[n_train:])}


def hf_datasets_split(calibration: str, evaluation: str) -> dict[str, str]:
    """The paper's data for GPU users with the `datasets` library and a warm cache: C4 train for
    calibration, WikiText-2 test for perplexity (test documents joined by blank lines, as the paper)."""
    try:
        from datasets import load_dataset
    except ImportError:
        raise ImportError(
            "data.source=hf_datasets needs the `datasets` package and the corpora in its local cache; "
            "pip install datasets, or use data.source=pydoc_topics (offline)."
        ) from None
    if calibration != "c4" or evaluation != "wikitext2":
        raise ValueError("data.source=hf_datasets supports calibration=c4 and evaluation=wikitext2")
    c4 = load_dataset(
        "allenai/c4", data_files={"train": "en/c4-train.00000-of-01024.json.gz"}, split="train"
    )
    wiki = load_dataset("wikitext", "wikitext-2-raw-v1", split="test")
    return {"train": "\n\n".join(c4["text"][:20000]), "test": "\n\n".join(wiki["text"])}


def calibration_windows(
    train_ids: torch.Tensor, nsamples: int, seqlen: int, seed: int
) -> torch.Tensor:
    """N random T-token windows of the training split (the paper draws 128 x 2048 from C4)."""
    if train_ids.numel() <= seqlen + 1:
        raise ValueError(
            f"the training text has {train_ids.numel()} tokens, too few for {seqlen}-token windows; "
            "lower dlp.data.seqlen or use a larger data.source"
        )
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, train_ids.numel() - seqlen - 1, size=nsamples)
    return torch.stack([train_ids[s : s + seqlen] for s in starts])


def evaluation_windows(test_ids: torch.Tensor, seqlen: int, n_windows: int | None) -> torch.Tensor:
    """Consecutive non-overlapping T-token windows of the test split (first `n_windows`, or all)."""
    available = test_ids.numel() // seqlen
    wanted = available if n_windows is None else n_windows
    if available < 1 or wanted > available:
        raise ValueError(
            f"the test text has {test_ids.numel()} tokens: {available} windows of {seqlen}, "
            f"but {wanted} were requested; lower dlp.data.eval_windows or dlp.data.seqlen"
        )
    return test_ids[: wanted * seqlen].reshape(wanted, seqlen)
