"""Ingest and preprocess: the expressions table, a user's table, the split."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.les import data


def test_generated_table_has_objectives_and_lengths():
    table = data.generate(30, 15, 19, np.random.default_rng(0))
    assert list(table.columns) == ["expression", "length", "objective"]
    assert len(table) == 30 and table["expression"].is_unique
    assert (table["length"] == table["expression"].str.len()).all()
    assert table["objective"].between(-np.log(1001) - 1e-12, 0).all()


def test_a_users_table_is_checked_and_deduplicated():
    table = data.from_catalog(pd.DataFrame({"expression": ["x + 1", "x+1", "sin(x)"]}))
    assert list(table["expression"]) == ["x+1", "sin(x)"]
    with pytest.raises(ValueError, match="needs the catalog entry les.expressions_input"):
        data.from_catalog(None)
    with pytest.raises(ValueError, match="an 'expression' column"):
        data.from_catalog(pd.DataFrame({"smiles": ["C"]}))
    with pytest.raises(ValueError, match="character 'q'"):
        data.from_catalog(pd.DataFrame({"expression": ["x+q"]}))
    with pytest.raises(ValueError, match="an 'expression' column"):
        data.from_catalog([1, 2])
    with pytest.raises(
        ValueError,
        match=r"1 input expressions are not derived.*'x\+'; les\.expressions_input must hold valid expressions",
    ):
        data.expressions_table(["x", "x+"])


def test_split_partitions_rows_and_keeps_objectives_aligned():
    table = data.expressions_table(
        ["x", "1", "2", "3", "x+1", "x*2", "sin(x)", "exp(1)", "3/x", "(x)"]
    )
    splits = data.split(table, 0.2, np.random.default_rng(0))
    assert len(splits["test_index"]) == 2 and len(splits["train_index"]) == 8
    assert sorted([*splits["train_index"], *splits["test_index"]]) == list(range(10))
    assert splits["train_tokens"].shape == (8, 19)
    tokens = data.tokenize(list(table["expression"]))
    assert np.array_equal(splits["test_tokens"], tokens[splits["test_index"]])
    assert np.array_equal(splits["train_tokens"], tokens[splits["train_index"]])
    expected = table["objective"].to_numpy()[splits["train_index"]]
    assert np.array_equal(splits["train_objective"], expected)
    assert np.array_equal(
        splits["test_objective"], table["objective"].to_numpy()[splits["test_index"]]
    )
    tiny = data.split(table.iloc[:3], 0.01, np.random.default_rng(0))
    assert len(tiny["test_index"]) == 1
