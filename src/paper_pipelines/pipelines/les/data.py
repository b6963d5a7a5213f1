"""Ingest and preprocess: the generated expressions (or a user's), their objective, tokens and split."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .grammar import MAX_LEN, is_valid, sample_expressions, tokenize
from .objective import objectives


def expressions_table(expressions: list[str]) -> pd.DataFrame:
    """One row per expression with its length and black-box objective; every one must parse."""
    tokenize(expressions)  # a character outside the vocabulary fails here, naming it
    bad = [e for e in expressions if not is_valid(e)]
    if bad:
        raise ValueError(
            f"{len(bad)} input expressions are not derived by the grammar, e.g. {bad[0]!r}; "
            "les.expressions_input must hold valid expressions"
        )
    return pd.DataFrame(
        {
            "expression": expressions,
            "length": [len(e) for e in expressions],
            "objective": objectives(expressions),
        }
    )


def generate(n: int, max_productions: int, max_len: int, rng: np.random.Generator) -> pd.DataFrame:
    """``n`` distinct expressions from the grammar sampler with their objective."""
    return expressions_table(sample_expressions(n, max_productions, max_len, rng))


def from_catalog(table: pd.DataFrame | None) -> pd.DataFrame:
    """A user's expressions (column ``expression``), de-duplicated, checked like generated ones."""
    if table is None or "expression" not in getattr(table, "columns", ()):
        raise ValueError(
            "les.data.source = catalog needs the catalog entry les.expressions_input: a table with "
            "an 'expression' column (see conf/paper/catalog/les.yml)"
        )
    expressions = list(dict.fromkeys(str(e).replace(" ", "") for e in table["expression"]))
    return expressions_table(expressions)


def split(table: pd.DataFrame, test_frac: float, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """Token ids and objectives of a random train / test split."""
    order = rng.permutation(len(table))
    n_test = max(1, int(round(test_frac * len(table))))
    test, train = order[:n_test], order[n_test:]
    tokens = tokenize(list(table["expression"]), MAX_LEN)
    y = table["objective"].to_numpy(dtype=np.float64)
    return {
        "train_index": train,
        "test_index": test,
        "train_tokens": tokens[train],
        "test_tokens": tokens[test],
        "train_objective": y[train],
        "test_objective": y[test],
    }
