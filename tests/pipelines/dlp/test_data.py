"""Calibration windows: the released C4 sampling (one document per window) and the offline corpora."""

import random

import pytest
import torch

from paper_pipelines.pipelines.dlp import data


def tokenize(doc: str) -> torch.Tensor:
    """Whitespace 'tokenizer': each document's words are its tokens (ints), hand-checkable."""
    return torch.tensor([int(w) for w in doc.split()], dtype=torch.long)


# document d holds tokens 100*d + 0, 1, 2, ...: a window's tokens name the document it came from
DOCS = [" ".join(str(100 * d + i) for i in range(n)) for d, n in enumerate([3, 12, 5, 20, 8])]


def test_c4_windows_stay_inside_one_document_longer_than_the_window():
    windows = data.document_windows(DOCS, tokenize, nsamples=50, seqlen=6, seed=0)
    assert windows.shape == (50, 6)
    for window in windows.tolist():
        doc = window[0] // 100
        assert all(t // 100 == doc for t in window), window  # never across a boundary
        assert window == list(range(window[0], window[0] + 6))  # contiguous
        assert doc in (1, 3, 4)  # the 3- and 5-token documents are never drawn (need > 6 tokens)


def test_c4_windows_follow_the_released_draws():
    """lib/data.py get_c4: random.seed(seed); per window, randint(0, n_docs - 1) until the document
    has more than seqlen tokens, then randint(0, len - seqlen - 1) for the start."""
    rng = random.Random(3)
    expected = []
    for _ in range(4):
        while True:
            ids = tokenize(DOCS[rng.randint(0, len(DOCS) - 1)])
            if ids.numel() > 6:
                break
        start = rng.randint(0, ids.numel() - 6 - 1)
        expected.append(ids[start : start + 6].tolist())
    assert data.document_windows(DOCS, tokenize, 4, 6, seed=3).tolist() == expected


def test_c4_window_of_a_document_one_token_longer_than_seqlen():
    # a document of seqlen + 1 tokens: the start is 0 (randint(0, 0)), the last token never used
    windows = data.document_windows(["1 2 3 4"], tokenize, nsamples=3, seqlen=3, seed=0)
    assert windows.tolist() == [[1, 2, 3]] * 3


def test_c4_without_a_long_enough_document_fails_naming_the_parameter():
    with pytest.raises(ValueError, match=r"dlp\.data\.seqlen"):
        data.document_windows(["1 2 3"], tokenize, nsamples=1, seqlen=3, seed=0, max_draws=50)
    with pytest.raises(ValueError, match=r"dlp\.c4_train"):
        data.document_windows([], tokenize, nsamples=1, seqlen=3, seed=0)


def test_paper_corpus_keeps_every_document_for_sampling():
    import pandas as pd

    c4 = pd.DataFrame({"text": ["a b", "c d e"]})
    wiki = pd.DataFrame({"text": ["x", "y"]})
    corpus = data.paper_corpus(c4, wiki)
    assert corpus["train_documents"] == ["a b", "c d e"]
    assert corpus["train"] == "a b\n\nc d e" and corpus["test"] == "x\n\ny"


def test_offline_windows_are_slices_of_the_joined_split():
    ids = torch.arange(100)
    windows = data.calibration_windows(ids, nsamples=5, seqlen=10, seed=0)
    for window in windows.tolist():
        assert window == list(range(window[0], window[0] + 10))


def test_make_windows_draws_c4_calibration_from_single_documents():
    from paper_pipelines.common.lm import CausalLM
    from paper_pipelines.pipelines.dlp.lm import ByteTokenizer
    from paper_pipelines.pipelines.dlp.nodes import make_windows
    from paper_pipelines.pipelines.dlp.parameters import DataParams

    docs = ["a" * 30, "b" * 5, "c" * 40]
    text = {"train": "\n\n".join(docs), "test": "x" * 64, "train_documents": docs}
    params = DataParams(source="c4_wikitext2", nsamples=20, seqlen=8, eval_windows=2)
    calibration, _ = make_windows(text, CausalLM(None, ByteTokenizer(), "bytes"), params, 0)
    for window in calibration["input_ids"].tolist():
        assert len(set(window)) == 1 and chr(window[0]) in "ac", bytes(window)
