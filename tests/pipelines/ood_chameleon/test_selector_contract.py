"""The selector's contract on small cases: integer multi-hot sets, the uniform draw on an empty set, the
regression learner's scaler and size, the tree's depth, seed and readable text, and its error."""

import numpy as np
import pandas as pd
import pytest
import torch

from paper_pipelines.pipelines.ood_chameleon import selector
from paper_pipelines.pipelines.ood_chameleon.selector import FittedSelector, SelectorSettings

ALGS = ["ERM", "GroupDRO", "oversample", "remax-margin", "undersample"]


class _Predict:
    """A stand-in model whose predict returns fixed rows (as float, the way some estimators do)."""

    def __init__(self, rows):
        self.rows = np.asarray(rows, dtype=float)

    def predict(self, x):
        return self.rows[: len(x)]


def _selector(learner, model, n_algorithms=3):
    return FittedSelector(learner, ["f"], np.zeros(1), np.ones(1), model, n_algorithms)


def test_multi_hot_winners_are_integers():
    out = selector.multi_hot_winners(np.array([[0.1, 0.12, 0.3]]), 0.05)
    assert out.dtype.kind == "i" and out.tolist() == [[1, 1, 0]]


def test_an_empty_predicted_set_draws_uniformly_and_a_set_draws_among_its_members():
    fitted = _selector("knn", _Predict([[0, 0, 0], [1, 1, 0], [0, 0, 1]]))
    probs, sets = fitted.choose(np.zeros((3, 1)))
    np.testing.assert_allclose(probs, [[1 / 3] * 3, [0.5, 0.5, 0], [0, 0, 1]])
    assert sets.dtype.kind == "i" and sets.tolist() == [[0, 0, 0], [1, 1, 0], [0, 0, 1]]


def test_tree_sets_are_integers():
    sets = _selector("tree", _Predict([[1, 0, 1]])).predicted_sets(np.zeros((1, 1)))
    assert sets.dtype.kind == "i" and sets.tolist() == [[1, 0, 1]]


def test_network_sets_are_one_hot_integers_at_the_highest_score():
    model = lambda t: torch.tensor([[0.1, 2.0, -1.0], [3.0, 0.0, 0.0]])  # noqa: E731
    sets = _selector("mlp", model).predicted_sets(np.zeros((2, 1)))
    assert sets.dtype.kind == "i" and sets.tolist() == [[0, 1, 0], [1, 0, 0]]


def _meta(n=40, seed=0):
    rng = np.random.default_rng(seed)
    meta = pd.DataFrame({"task_id": range(n), "small": 0.3 * rng.normal(size=n), "const": 2.0})
    for j, a in enumerate(ALGS):
        meta[f"err_{a}"] = 0.1 * j + 0.05 * (meta.small > 0)
        meta[f"win_{a}"] = int(j == 0)
    return meta


def test_the_regression_learner_standardises_its_rows_and_keeps_its_size():
    meta = _meta()
    settings = SelectorSettings(hidden=7, epochs=5)
    fitted = selector.fit_selector(meta, ["small", "const"], ALGS, "regression", settings, 0.05, 0)
    # rows are [descriptors, algorithm index 0..4]: the index's spread is sqrt((5^2 - 1) / 12)
    assert fitted.mean == pytest.approx([meta.small.mean(), 2.0, 2.0])
    assert fitted.scale == pytest.approx([meta.small.std(ddof=0), 1.0, np.sqrt(2.0)])
    assert [w.shape for w in fitted.model.coefs_] == [(3, 7), (7, 1)]
    assert fitted.model.n_iter_ <= 5
    assert fitted.extra == {}
    probs, sets = fitted.choose(meta[["small", "const"]].to_numpy())
    assert probs.shape == (40, 5) and np.allclose(probs.sum(1), 1)


def test_the_tree_keeps_its_depth_and_its_seed():
    rng = np.random.default_rng(0)
    meta = pd.DataFrame({"task_id": range(60), "u": rng.uniform(size=60)})
    meta["v"] = meta.u  # two equally good features: the seed picks one
    for a in ALGS:
        meta[f"err_{a}"], meta[f"win_{a}"] = 0.5, 0
    meta["win_ERM"] = ((meta.u * 8).astype(int) % 2).astype(int)  # needs many splits
    meta["win_undersample"] = 1 - meta.win_ERM
    shallow = selector.fit_selector(
        meta, ["u", "v"], ALGS, "tree", SelectorSettings(tree_depth=1), 0.05, 3
    )
    assert shallow.model.get_depth() == 1 and shallow.extra == {}
    picks = {
        tuple(
            selector.fit_selector(
                meta, ["u", "v"], ALGS, "tree", SelectorSettings(), 0.05, 7
            ).model.tree_.feature.tolist()
        )
        for _ in range(10)
    }
    assert len(picks) == 1  # the same seed grows the same tree


def _two_level_meta():
    rng = np.random.default_rng(0)
    meta = pd.DataFrame(
        {"task_id": range(200), "sc": rng.uniform(size=200), "n": rng.uniform(size=200),
         "m": rng.uniform(size=200)}
    )  # fmt: skip
    for a in ALGS:
        meta[f"err_{a}"], meta[f"win_{a}"] = 0.5, 0
    left = meta.sc <= 0.5
    first = np.where(left, meta.n <= 0.3, meta.m <= 0.9)
    meta["win_ERM"] = first.astype(int)
    meta["win_GroupDRO"] = first.astype(int)  # always tied with ERM: a two-winner leaf
    meta["win_undersample"] = (~first).astype(int)
    return meta


def test_top_features_are_the_root_and_its_two_children():
    fitted = selector.fit_selector(
        _two_level_meta(), ["sc", "n", "m"], ALGS, "tree", SelectorSettings(tree_depth=2), 0.05, 0
    )
    assert selector.tree_top_features(fitted) == ["sc", "n", "m"]


def test_tree_rules_text_by_hand():
    fitted = selector.fit_selector(
        _two_level_meta(), ["sc", "n", "m"], ALGS, "tree", SelectorSettings(tree_depth=2), 0.05, 0
    )
    lines = selector.tree_rules(fitted, ALGS).splitlines()
    assert lines[0] == (
        "predicted winners at each leaf (multi-hot over ERM, GroupDRO, oversample, remax-margin, "
        "undersample)"
    )
    assert len(lines) == 1 + 6 + 4  # six split lines and four leaves
    assert lines[1].startswith("|--- sc <= 0.5") and lines[2].startswith("|   |--- n <= 0.3")
    assert lines[3].startswith("|   |   |--- winners: ERM, GroupDRO  (")
    assert lines[4].startswith("|   |--- n >  0.3") and lines[5] == (
        f"|   |   |--- winners: undersample  ({int(fitted.model.tree_.n_node_samples[3])} tasks)"
    )


def test_an_unknown_learner_lists_the_known_ones():
    with pytest.raises(ValueError) as err:
        selector.fit_selector(_meta(), ["small"], ALGS, "svm", SelectorSettings(), 0.05, 0)
    assert str(err.value) == "unknown learner 'svm'; choose from mlp, linear, knn, tree, regression"
