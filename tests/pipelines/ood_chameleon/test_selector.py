"""The selector, its labels, its measures and the baselines on hand-checkable cases."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.ood_chameleon import baselines, descriptors, metrics, selector
from paper_pipelines.pipelines.ood_chameleon.selector import SelectorSettings

ALGS = ["ERM", "GroupDRO", "oversample", "remax-margin", "undersample"]


def test_multi_hot_winners_within_margin():
    errors = np.array([[0.30, 0.34, 0.36, 0.50, 0.35], [0.2, 0.1, 0.1, 0.1, 0.16]])
    assert selector.multi_hot_winners(errors, 0.05).tolist() == [[1, 1, 0, 0, 1], [0, 1, 1, 1, 0]]
    assert selector.multi_hot_winners(errors, 0.0).tolist() == [[1, 0, 0, 0, 0], [0, 1, 1, 1, 0]]


def test_meta_dataset_averages_repeats_and_marks_winners():
    results = pd.DataFrame(
        {"task_id": [0] * 4 + [1] * 4, "algorithm": ["ERM", "ERM", "undersample", "undersample"] * 2,
         "wga_te_err": [0.2, 0.4, 0.36, 0.36, 0.1, 0.1, 0.5, 0.3]}
    )  # fmt: skip
    desc = pd.DataFrame({"task_id": [0, 1], "source": ["a", "b"], "n": [10, 20]})
    meta = selector.build_meta_dataset(desc, results, ["ERM", "undersample"], "wga_te_err", 0.05)
    assert meta.err_ERM.tolist() == pytest.approx([0.3, 0.1])
    assert meta.err_undersample.tolist() == pytest.approx([0.36, 0.4])
    assert meta.win_ERM.tolist() == [1, 1] and meta.win_undersample.tolist() == [0, 0]


def test_measures_by_hand():
    winners = np.array([[1, 1, 0], [0, 0, 1], [1, 0, 0]])
    predicted = np.array([[0, 1, 0], [1, 0, 1], [1, 0, 0]])
    assert metrics.soft01_accuracy(winners, predicted) == pytest.approx(2 / 3)
    assert metrics.strict01_accuracy(winners, predicted) == pytest.approx(1 / 3)
    errors = np.array([[0.1, 0.3], [0.5, 0.2]])
    assert metrics.selected_error(np.array([[1, 0], [0.5, 0.5]]), errors) == pytest.approx(0.225)
    assert metrics.gap_closure(0.5, 0.4, 0.3) == pytest.approx(0.5)
    assert np.isnan(metrics.gap_closure(0.3, 0.3, 0.3))


def test_baselines_by_hand():
    rank = np.array([5, 1, 3])
    topk = baselines.global_best_topk(1, rank)[0]
    # k = 1: {0}; k = 2: {0, 2}; k = 3: all; each k with probability 1/3, a member at random
    assert topk == pytest.approx([1 / 3 + 1 / 6 + 1 / 9, 1 / 9, 1 / 6 + 1 / 9])
    probs, sets = baselines.global_best(2, rank)
    assert sets.tolist() == [[1, 0, 0], [1, 0, 0]]
    # two winners of three: a random subset of size 1, 2, 3 lies inside with prob 2/3, 1/3, 0
    assert baselines.random_soft01(np.array([[1, 0, 1]])) == pytest.approx([1 / 3])
    assert baselines.topk_soft01(np.array([[1, 0, 1], [0, 1, 0]]), rank).tolist() == [2 / 3, 0]
    probs, sets = baselines.oracle(np.array([[0.3, 0.1, 0.2]]))
    assert sets.tolist() == [[0, 1, 0]]
    assert baselines.random_selection(1, 4).tolist() == [[0.25] * 4]


def _rule_meta(n=80, seed=0):
    """Tasks whose winner is a readable function of sc: undersample for sc < 0.4, else ERM."""
    rng = np.random.default_rng(seed)
    sc = rng.uniform(0.05, 0.95, n)
    feats = pd.DataFrame({"task_id": range(n), "sc": sc, "n": rng.choice([200, 1000], n)})
    for a in ALGS:
        feats[f"err_{a}"] = 0.5
    feats["err_ERM"] = np.where(sc >= 0.4, 0.1, 0.5)
    feats["err_undersample"] = np.where(sc < 0.4, 0.1, 0.5)
    errs = feats[[f"err_{a}" for a in ALGS]].to_numpy()
    for j, a in enumerate(ALGS):
        feats[f"win_{a}"] = selector.multi_hot_winners(errs, 0.05)[:, j]
    return feats


@pytest.mark.parametrize("learner", ["mlp", "linear", "knn", "tree", "regression"])
def test_every_learner_recovers_a_simple_rule(learner):
    train, test = _rule_meta(seed=0), _rule_meta(40, seed=1)
    test = test[(test.sc - 0.4).abs() > 0.05]  # away from the boundary
    settings = SelectorSettings(epochs=300, lr=0.01)
    fitted = selector.fit_selector(train, ["sc", "n"], ALGS, learner, settings, 0.05, seed=0)
    probs, sets = fitted.choose(test[["sc", "n"]].to_numpy())
    assert np.allclose(probs.sum(1), 1)
    errors = test[[f"err_{a}" for a in ALGS]].to_numpy()
    assert metrics.selected_error(probs, errors) < 0.15  # random would give 0.42
    if learner in ("mlp", "linear"):
        assert (sets.sum(1) == 1).all()  # argmax: one algorithm per task


def test_tree_rules_are_text_in_raw_units():
    fitted = selector.fit_selector(
        _rule_meta(), ["sc", "n"], ALGS, "tree", SelectorSettings(), 0.05, 0
    )
    text = selector.tree_rules(fitted, ALGS)
    assert "sc <=" in text and text.startswith("predicted winners at each leaf")
    # the leaves name the rule's winners: undersample below the boundary, ERM above
    assert (
        "winners: undersample" in text.split("sc >")[0] and "winners: ERM" in text.split("sc >")[-1]
    )
    threshold = float(text.split("sc <=")[1].split()[0])
    assert 0.3 < threshold < 0.5  # the rule's own boundary (0.4), not a standardised value
    assert selector.tree_top_features(fitted)[0] == "sc"


def test_unknown_learner_is_an_error():
    with pytest.raises(ValueError, match="unknown learner 'svm'"):
        selector.fit_selector(_rule_meta(), ["sc"], ALGS, "svm", SelectorSettings(), 0.05, 0)


def test_spread_by_hand():
    z = np.array([[0.0, 0.0], [2.0, 0.0], [10.0, 0.0], [10.0, 4.0]])
    labels = np.array([0, 0, 1, 1])
    intra, inter = descriptors.spread(z, labels)
    assert intra == pytest.approx((1 + 2) / 2)  # class 0: distance 1 to centroid, class 1: 2
    assert inter == pytest.approx(np.hypot(9, 2))


def test_inferred_shift_recovers_clear_subgroups():
    rng = np.random.default_rng(0)
    counts = [40, 10, 10, 40]
    y = np.repeat([0, 0, 1, 1], counts)
    a = np.repeat([0, 1, 0, 1], counts)
    z = np.c_[4 * y, 4 * a] + 0.1 * rng.normal(size=(100, 2))
    out = descriptors.inferred_shift(z, y, a)
    assert out["sc_"] == pytest.approx(0.8) and out["ci_"] == pytest.approx(0.5)
    assert out["ai_"] == pytest.approx(0.5)


def test_describe_task_has_every_descriptor():
    rng = np.random.default_rng(0)
    y, a = rng.integers(0, 2, 60), rng.integers(0, 2, 60)
    x = rng.normal(size=(60, 5)) + y[:, None]
    out = descriptors.describe_task(x, y, a, {"sc": 0.5, "ci": 0.4, "ai": 0.6}, "pca", 0)
    assert set(out) == set(descriptors.DESCRIPTORS)
    assert out["n"] == 60 and out["ci"] == 0.4
