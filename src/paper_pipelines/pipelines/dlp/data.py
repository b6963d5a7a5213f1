"""Ingest and windows: the text for calibration and evaluation (offline, Python's own documentation split
by topic; or the paper's C4 + WikiText-2 from catalog inputs), tokenised into seeded windows."""

from __future__ import annotations

import ast
import random
import sysconfig
from collections.abc import Callable, Sequence
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
    documents = list(c4_train["text"])
    return {
        # the joined text feeds LoRA recovery only; calibration draws from whole documents
        "train": "\n\n".join(documents[:C4_DOCUMENTS]),
        "test": "\n\n".join(list(wikitext2_test["text"])),
        "train_documents": documents,
    }


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
    """N random T-token windows of the whole training split (the offline corpora; windows may span two
    topics or docstrings, as the released WikiText-2 / PTB loaders sample the joined text; C4 windows
    come from :func:`document_windows`)."""
    if train_ids.numel() <= seqlen + 1:
        raise ValueError(
            f"the training text has {train_ids.numel()} tokens, too few for {seqlen}-token windows; "
            "lower dlp.data.seqlen or use a larger dlp.data.source"
        )
    rng = np.random.default_rng(seed)
    starts = rng.integers(0, train_ids.numel() - seqlen - 1, size=nsamples)
    return torch.stack([train_ids[s : s + seqlen] for s in starts])


def document_windows(
    documents: Sequence[str],
    tokenize: Callable[[str], torch.Tensor],
    nsamples: int,
    seqlen: int,
    seed: int,
    max_draws: int = 10_000,
) -> torch.Tensor:
    """The released C4 sampling (``lib/data.py: get_c4``): per window, draw a document uniformly at
    random until one has MORE than `seqlen` tokens, then a start uniformly in [0, len - seqlen - 1];
    both draws from Python's ``random`` seeded with `seed`, in that order, so the same shard, order
    and tokenizer give the released windows. A window never crosses a document boundary.

    `tokenize` is the tokenizer's default call (the released code keeps the special tokens, e.g.
    LLaMA's BOS). The released loop redraws forever when no document is long enough; here
    `max_draws` draws for one window without success is an error naming the fix.
    """
    if not documents:
        raise ValueError("dlp.c4_train has no documents: point the catalog entry at a C4 shard")
    rng = random.Random(seed)
    windows = []
    for _ in range(nsamples):
        for _draw in range(max_draws):
            ids = tokenize(documents[rng.randint(0, len(documents) - 1)])
            if ids.numel() > seqlen:
                break
        else:
            raise ValueError(
                f"no C4 document longer than {seqlen} tokens in {max_draws} draws: lower "
                "dlp.data.seqlen or point dlp.c4_train at a shard with longer documents"
            )
        start = rng.randint(0, ids.numel() - seqlen - 1)
        windows.append(ids[start : start + seqlen])
    return torch.stack(windows)


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
