"""Our multi-label measures equal scikit-learn's on random inputs and on a hand-checkable case."""

import numpy as np
import pytest
from sklearn.metrics import hamming_loss, label_ranking_loss, roc_auc_score

from paper_pipelines.pipelines.multilabel_bounds import metrics


def _random(seed, n=60, c=6, rounding=None):
    rng = np.random.default_rng(seed)
    scores = rng.standard_normal((n, c))
    if rounding is not None:
        scores = np.round(scores, rounding)  # many ties
    labels = np.where(rng.random((n, c)) < 0.35, 1.0, -1.0)
    labels[0] = 1.0  # a row with no irrelevant label (scikit-learn scores it 0)
    labels[1] = -1.0  # and one with no relevant label
    return scores, labels


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("rounding", [None, 0])
def test_equal_to_sklearn(seed, rounding):
    s, y = _random(seed, rounding=rounding)
    y01 = (y > 0).astype(int)
    assert metrics.hamming_loss(s, y) == pytest.approx(hamming_loss(y01, (s > 0).astype(int)))
    assert metrics.ranking_loss(s, y) == pytest.approx(label_ranking_loss(y01, s), abs=1e-12)
    assert metrics.macro_auc(s, y) == pytest.approx(roc_auc_score(y01, s, average="macro"))


def test_hand_case():
    # two examples, three labels; row 0: relevant {0}, scores 3 > 1 > 2? -> label 0 above both: 0 errors
    # row 1: relevant {1, 2}, irrelevant {0}; label 2 ties label 0 -> 1 error of 2 pairs
    s = np.array([[3.0, 1.0, 2.0], [0.5, 1.0, 0.5]])
    y = np.array([[1.0, -1.0, -1.0], [-1.0, 1.0, 1.0]])
    assert metrics.ranking_loss(s, y) == pytest.approx((0 + 1 / 2) / 2)
    # every prediction positive: row 0 wrong on labels 1, 2; row 1 wrong on label 0 -> 3 / 6
    assert metrics.hamming_loss(s, y) == pytest.approx(0.5)
    assert list(metrics.hamming_per_label(s, y)) == [0.5, 0.5, 0.5]
    auc = metrics.auc_per_label(s, y)
    # label 0: positive 3.0 vs negative 0.5 -> 1; label 1: positive 1.0 vs negative 1.0 -> tie 1/2
    assert auc[0] == 1.0 and auc[1] == 0.5 and auc[2] == 0.0


def test_auc_of_a_one_class_label_is_nan_and_skipped():
    s = np.array([[1.0, 0.2], [2.0, 0.1], [3.0, 0.3]])
    y = np.array([[1.0, 1.0], [1.0, -1.0], [1.0, 1.0]])
    auc = metrics.auc_per_label(s, y)
    assert np.isnan(auc[0]) and auc[1] == 1.0
    assert metrics.macro_auc(s, y) == 1.0
