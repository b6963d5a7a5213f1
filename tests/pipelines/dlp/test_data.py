"""Calibration windows: the released C4 sampling (one document per window) and the offline corpora."""

import random

import numpy as np
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


# ---------------------------------------------------------------- pinned by mutation testing (#29)
def test_pydoc_topics_split_by_topic_seeded_and_disjoint():
    from pydoc_data.topics import topics

    split = data.pydoc_topics_split(0.75, seed=1)
    keys = sorted(topics)
    random.Random(1).shuffle(keys)
    n_train = int(len(keys) * 0.75)
    assert split["train"] == "\n\n".join(topics[k] for k in keys[:n_train])
    assert split["test"] == "\n\n".join(topics[k] for k in keys[n_train:])
    assert data.load_text("pydoc_topics", 0.75, 1) == split
    assert data.pydoc_topics_split(0.75, seed=2)["train"] != split["train"]


def test_stdlib_docstrings_split_by_module(tmp_path, monkeypatch):
    (tmp_path / "a.py").write_text('"""Module a."""\n\n\nclass K:\n    """Class K."""\n')
    (tmp_path / "b.py").write_text(
        'def f():\n    """Function f."""\n\n\nasync def g():\n    """Async g."""\n'
    )
    (tmp_path / "c.py").write_text("def broken(:\n")  # not Python: skipped
    (tmp_path / "d.py").write_text("x = 1\n")  # no docstrings: an empty text
    (tmp_path / "notes.txt").write_text('"""Not a module."""')
    monkeypatch.setattr(data.sysconfig, "get_paths", lambda: {"stdlib": str(tmp_path)})
    texts = {"a": "Module a.\n\nClass K.", "b": "Function f.\n\nAsync g.", "d": ""}
    files = sorted(tmp_path.glob("*.py"))
    random.Random(0).shuffle(files)
    order = [p.stem for p in files if p.stem != "c"]
    split = data.stdlib_docstrings_split(0.5, seed=0)  # 3 modules parsed: int(1.5) = 1 for training
    assert split["train"] == texts[order[0]]
    assert split["test"] == "\n\n".join(texts[s] for s in order[1:])
    assert data.load_text("stdlib_docstrings", 0.5, 0) == split


def test_paper_corpus_names_every_missing_entry_and_caps_the_joined_text():
    import pandas as pd

    with pytest.raises(
        ValueError, match=r"needs the catalog entries dlp\.c4_train, dlp\.wikitext2_test"
    ):
        data.load_text("c4_wikitext2", 0.9, 0)
    with pytest.raises(
        ValueError,
        match=r"entries dlp\.wikitext2_test: run with --env paper and point them at your C4 shard and "
        r"WikiText-2 test file \(conf/paper/catalog/dlp\.yml\), or use dlp\.data\.source=pydoc_topics",
    ):
        data.paper_corpus(pd.DataFrame({"text": ["a"]}), None)
    docs = [f"d{i}" for i in range(data.C4_DOCUMENTS + 1)]
    corpus = data.load_text(
        "c4_wikitext2", 0.9, 0, pd.DataFrame({"text": docs}), pd.DataFrame({"text": ["t"]})
    )
    assert corpus["train"].split("\n\n") == docs[: data.C4_DOCUMENTS]  # the first 20000 documents
    assert len(corpus["train_documents"]) == data.C4_DOCUMENTS + 1  # sampling sees them all


def test_calibration_windows_need_more_than_one_window_of_tokens():
    with pytest.raises(ValueError, match=r"has 11 tokens, too few for 10-token windows"):
        data.calibration_windows(torch.arange(11), nsamples=1, seqlen=10, seed=0)
    # 12 tokens: starts drawn from [0, 12 - 10 - 1) = {0}
    assert (
        data.calibration_windows(torch.arange(12), 3, 10, seed=0).tolist() == [list(range(10))] * 3
    )
    windows = data.calibration_windows(torch.arange(100), 4, 10, seed=5)
    starts = np.random.default_rng(5).integers(0, 100 - 10 - 1, size=4)
    assert windows[:, 0].tolist() == starts.tolist()


def test_evaluation_windows_are_consecutive_and_checked():
    ids = torch.arange(10)
    assert data.evaluation_windows(ids, 3, None).tolist() == [[0, 1, 2], [3, 4, 5], [6, 7, 8]]
    assert data.evaluation_windows(ids, 3, 2).tolist() == [[0, 1, 2], [3, 4, 5]]
    assert data.evaluation_windows(ids, 10, 1).tolist() == [list(range(10))]
    with pytest.raises(ValueError, match=r"10 tokens: 3 windows of 3, but 4 were requested"):
        data.evaluation_windows(ids, 3, 4)
    with pytest.raises(ValueError, match=r"0 windows of 11, but 0 were requested"):
        data.evaluation_windows(ids, 11, None)


def test_window_errors_say_what_to_change():
    with pytest.raises(
        ValueError, match=r"lower dlp\.data\.seqlen or use a larger dlp\.data\.source$"
    ):
        data.calibration_windows(torch.arange(11), nsamples=1, seqlen=10, seed=0)
    with pytest.raises(
        ValueError,
        match=r"^no C4 document longer than 3 tokens in 50 draws: lower dlp\.data\.seqlen or point "
        r"dlp\.c4_train at a shard with longer documents$",
    ):
        data.document_windows(["1 2 3"], tokenize, nsamples=1, seqlen=3, seed=0, max_draws=50)
    with pytest.raises(
        ValueError,
        match=r"^dlp\.c4_train has no documents: point the catalog entry at a C4 shard$",
    ):
        data.document_windows([], tokenize, nsamples=1, seqlen=3, seed=0)


def test_the_offline_splits_default_to_seed_0(tmp_path, monkeypatch):
    assert data.pydoc_topics_split(0.5) == data.pydoc_topics_split(0.5, seed=0)
    assert data.pydoc_topics_split(0.5) != data.pydoc_topics_split(0.5, seed=1)
    for name in "abcdef":
        (tmp_path / f"{name}.py").write_text(f'"""Module {name}."""\n')
    monkeypatch.setattr(data.sysconfig, "get_paths", lambda: {"stdlib": str(tmp_path)})
    split = data.stdlib_docstrings_split(0.5)
    assert split == data.stdlib_docstrings_split(0.5, seed=0)
    assert split != data.stdlib_docstrings_split(0.5, seed=1)


def test_stdlib_docstrings_drop_undecodable_bytes(tmp_path, monkeypatch):
    # a module with a byte that is not UTF-8 is still read, without that byte
    (tmp_path / "a.py").write_bytes(b'"""Caf\xff\xc3\xa9 docstring."""\n')
    monkeypatch.setattr(data.sysconfig, "get_paths", lambda: {"stdlib": str(tmp_path)})
    assert data.stdlib_docstrings_split(1.0) == {"train": "Café docstring.", "test": ""}


def test_stdlib_training_modules_are_joined_by_a_blank_line(tmp_path, monkeypatch):
    for name in "abcd":
        (tmp_path / f"{name}.py").write_text(f'"""Module {name}."""\n')
    monkeypatch.setattr(data.sysconfig, "get_paths", lambda: {"stdlib": str(tmp_path)})
    files = sorted(tmp_path.glob("*.py"))
    random.Random(0).shuffle(files)
    texts = [f"Module {p.stem}." for p in files]
    split = data.stdlib_docstrings_split(0.5, seed=0)  # 4 modules: 2 for training, 2 for testing
    assert split == {"train": "\n\n".join(texts[:2]), "test": "\n\n".join(texts[2:])}
