"""Ingest and windows: the text for calibration and evaluation (offline, Python's own documentation split
by topic; or the paper's C4 + WikiText-2 from catalog inputs), tokenised into seeded windows."""

from __future__ import annotations

import ast
import random
import sysconfig
from pathlib import Path
from typing import Any

import numpy as np
import torch

# C4 documents joined into the calibration text (the first ones of the shard the paper samples from).
C4_DOCUMENTS = 20000


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


def paper_corpus(c4_train: Any, wikitext2_test: Any) -> dict[str, str]:
    """The paper's data, from two catalog inputs a user supplies (conf/paper/catalog/dlp.yml): C4 train
    documents for calibration, WikiText-2 test for perplexity (test documents joined by blank lines, as
    the paper). Each input is anything with a ``text`` column: a pandas frame or a ``datasets.Dataset``."""
    missing = [
        name
        for name, value in (("dlp.c4_train", c4_train), ("dlp.wikitext2_test", wikitext2_test))
        if value is None
    ]
    if missing:
        raise ValueError(
            f"dlp.data.source=c4_wikitext2 needs the catalog entries {', '.join(missing)}: run with "
            "--env paper and point them at your C4 shard and WikiText-2 test file "
            "(conf/paper/catalog/dlp.yml), or use dlp.data.source=pydoc_topics (offline)"
        )
    c4_texts = list(c4_train["text"])[:C4_DOCUMENTS]
    return {"train": "\n\n".join(c4_texts), "test": "\n\n".join(list(wikitext2_test["text"]))}


def load_text(
    source: str, train_frac: float, seed: int, c4_train: Any = None, wikitext2_test: Any = None
) -> dict[str, str]:
    """Training and test text of ``dlp.data.source``, split by document (no test text in calibration)."""
    if source == "pydoc_topics":
        return pydoc_topics_split(train_frac, seed)
    if source == "stdlib_docstrings":
        return stdlib_docstrings_split(train_frac, seed)
    return paper_corpus(c4_train, wikitext2_test)


def calibration_windows(
    train_ids: torch.Tensor, nsamples: int, seqlen: int, seed: int
) -> torch.Tensor:
    """N random T-token windows of the training split (the paper draws 128 x 2048 from C4)."""
    if train_ids.numel() <= seqlen + 1:
        raise ValueError(
            f"the training text has {train_ids.numel()} tokens, too few for {seqlen}-token windows; "
            "lower dlp.data.seqlen or use a larger dlp.data.source"
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
