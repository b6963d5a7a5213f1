"""Measures, probes and the no-interaction baselines on hand-checkable cases."""

import numpy as np
import pytest

from paper_pipelines.pipelines.disc import baselines, metrics, probes


def test_box_iou_by_hand():
    a = np.array(
        [[0.5, 0.5, 1.0, 1.0], [0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 1.0, 1.0], [0.5, 0.5, 0.0, 0.0]]
    )
    b = np.array(
        [[0.5, 0.5, 1.0, 1.0], [1.0, 0.5, 1.0, 1.0], [3.0, 3.0, 1.0, 1.0], [0.5, 0.5, 1.0, 1.0]]
    )
    assert np.allclose(metrics.box_iou(a, b), [1.0, 1 / 3, 0.0, 0.0])
    # a box inside another: intersection = the small one; vertical offset
    small = np.array([[0.5, 0.5, 0.5, 0.5]])
    assert metrics.box_iou(small, np.array([[0.5, 0.5, 1.0, 1.0]]))[0] == pytest.approx(0.25)
    shifted = np.array([[0.5, 0.75, 1.0, 1.0]])
    assert metrics.box_iou(shifted, np.array([[0.5, 0.5, 1.0, 1.0]]))[0] == pytest.approx(
        0.75 / 1.25
    )
    # a negative predicted size counts as an empty box
    assert metrics.box_iou(np.array([[0.5, 0.5, -1.0, 1.0]]), a[:1])[0] == 0.0
    assert metrics.box_iou(np.array([[0.5, 0.5, 1.0, -1.0]]), a[:1])[0] == 0.0
    assert metrics.box_iou(a[:1], np.array([[0.5, 0.5, -1.0, 1.0]]))[0] == 0.0
    assert metrics.box_iou(a[:1], np.array([[0.5, 0.5, 1.0, -1.0]]))[0] == 0.0


def test_box_accuracy_threshold_is_inclusive():
    true = np.array([[0.5, 0.5, 1.0, 1.0]] * 2)
    pred = np.array([[0.5, 0.5, 1.0, 1.0], [1.0, 0.5, 1.0, 1.0]])
    assert metrics.box_accuracy(true, pred, 0.5) == 0.5
    assert metrics.box_accuracy(true, pred, 1 / 3) == 1.0
    assert metrics.box_accuracy(true, pred, 1.0) == 0.5


def test_top1_accuracy():
    assert metrics.top1_accuracy([1, 2, 3, 4], [1, 0, 3, 0]) == 0.5


def test_classification_probe_fits_on_labelled_and_scores_the_rest():
    rng = np.random.default_rng(0)
    labels = np.repeat(np.arange(3), 20)
    feats = np.eye(3)[labels] * 5 + 0.1 * rng.standard_normal((60, 3))
    labelled = np.zeros(60, bool)
    labelled[[0, 1, 20, 21, 40, 41]] = True
    assert probes.probe_classification(feats, labels, labelled, 1.0, 200) == 1.0
    # labels of the unlabelled part never reach the probe: shuffled test labels drop the score
    wrong = labels.copy()
    wrong[~labelled] = (wrong[~labelled] + 1) % 3
    assert probes.probe_classification(feats, wrong, labelled, 1.0, 200) == 0.0


def test_box_probe_recovers_linear_boxes():
    rng = np.random.default_rng(0)
    feats = rng.standard_normal((50, 6))
    boxes = 0.5 + 0.05 * feats[:, :4]
    labelled = np.arange(50) < 20
    assert probes.probe_boxes(feats, boxes, labelled, 1e-6, 0.9) == 1.0
    assert probes.probe_boxes(feats, boxes, labelled, 1e6, 0.99) < 0.5


def test_baselines_are_the_expert_feature_and_the_concatenation():
    main, aux = np.ones((2, 3)), np.zeros((2, 2))
    assert baselines.upe_features(main) is main
    assert np.array_equal(baselines.concat_features(main, aux), [[1, 1, 1, 0, 0]] * 2)


def test_two_empty_boxes_have_no_overlap():
    # zero union (both boxes empty, or negative sizes clipped to empty): IoU 0, never a hit
    empty = np.array([[0.5, 0.5, 0.0, 0.0], [0.2, 0.3, -1.0, 0.5]])
    assert np.array_equal(metrics.box_iou(empty, empty), [0.0, 0.0])
    assert metrics.box_accuracy(empty, empty, 0.5) == 0.0


def two_class_features(seed=0):
    rng = np.random.default_rng(seed)
    labels = np.repeat(np.arange(2), 30)
    feats = np.c_[labels + 0.3 * rng.standard_normal(60), rng.standard_normal(60)]
    return feats, labels


def test_classification_probe_standardises_so_feature_units_do_not_matter():
    feats, labels = two_class_features()
    labelled = np.zeros(60, bool)
    labelled[[0, 1, 2, 30, 31, 32]] = True
    base = probes.probe_classification(feats, labels, labelled, 1.0, 200)
    assert base == 1.0
    # the class signal in units 1e4 times smaller: a standardised probe scores the same
    tiny = feats * np.array([1e-4, 1.0])
    assert probes.probe_classification(tiny, labels, labelled, 1.0, 200) == base


def test_classification_probe_uses_the_given_regularisation_strength():
    feats, labels = two_class_features()
    labelled = np.zeros(60, bool)
    labelled[[0, 1, 2, 3, 30]] = True  # 4 of class 0, 1 of class 1
    assert probes.probe_classification(feats, labels, labelled, 1.0, 200) > 0.9
    # C -> 0 shrinks every weight to 0: only the intercept is left, which picks the labelled majority
    # class 0 for every canvas; the unlabelled part has 26 of class 0 among 55
    got = probes.probe_classification(feats, labels, labelled, 1e-6, 200)
    assert got == pytest.approx(26 / 55)


def test_box_iou_is_symmetric():
    # cases where only a's or only b's edge is the binding one, on each axis
    a = np.array(
        [[0.5, 0.5, 1.0, 1.0], [0.5, 0.5, 1.0, 1.0], [0.5, 0.5, 1.0, 2.0], [0.3, 0.6, 0.4, 0.8]]
    )
    b = np.array(
        [[0.5, 0.75, 1.0, 1.0], [0.75, 0.5, 1.0, 1.0], [0.6, 0.4, 0.5, 0.5], [0.5, 0.5, 0.6, 0.2]]
    )
    assert metrics.box_iou(a, b)[:2] == pytest.approx([0.6, 0.6])
    assert metrics.box_iou(b, a) == pytest.approx(metrics.box_iou(a, b))
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.2, 0.8, (50, 4)), rng.uniform(0.2, 0.8, (50, 4))
    assert metrics.box_iou(b, a) == pytest.approx(metrics.box_iou(a, b))


def test_boxes_apart_on_one_axis_do_not_overlap():
    # overlapping columns but separate rows (and the reverse): no intersection, IoU 0
    a = np.array([[0.5, 0.5, 1.0, 1.0], [0.5, 0.5, 1.0, 1.0]])
    b = np.array([[0.5, 3.0, 1.0, 1.0], [3.0, 0.5, 1.0, 1.0]])
    assert np.array_equal(metrics.box_iou(a, b), [0.0, 0.0])
    assert np.array_equal(metrics.box_iou(b, a), [0.0, 0.0])


def test_box_iou_of_integer_pixel_boxes_is_the_float_iou():
    # uint8 pixel boxes (a 24-px canvas fits): areas must not wrap around in the integer type
    pixels = np.array([[12, 12, 20, 20], [10, 12, 16, 8]], dtype=np.uint8)
    as_float = pixels.astype(float)
    expected = metrics.box_iou(as_float, as_float[::-1])
    assert metrics.box_iou(pixels, pixels[::-1]) == pytest.approx(expected)
    assert metrics.box_iou(as_float, pixels) == pytest.approx([1.0, 1.0])
    assert metrics.box_iou(pixels, as_float) == pytest.approx([1.0, 1.0])


def test_empty_boxes_give_iou_0_without_a_floating_point_warning():
    import warnings

    empty = np.array([[0.5, 0.5, 0.0, 0.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0 / 0 is evaluated, even in the branch np.where drops
        assert metrics.box_iou(empty, empty)[0] == 0.0


def test_box_probe_standardises_so_feature_units_do_not_matter():
    rng = np.random.default_rng(0)
    feats = rng.standard_normal((60, 2))
    boxes = 0.5 + 0.05 * np.c_[feats[:, :1], feats[:, :1], -feats[:, :1], feats[:, :1]]
    labelled = np.arange(60) < 20
    base = probes.probe_boxes(feats, boxes, labelled, 1.0, 0.9)
    assert base == 1.0
    tiny = feats * np.array([1e-4, 1.0])  # the box signal in units 1e4 times smaller
    assert probes.probe_boxes(tiny, boxes, labelled, 1.0, 0.9) == base
