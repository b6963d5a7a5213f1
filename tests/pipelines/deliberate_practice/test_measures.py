"""Metrics, baselines and data on hand-checkable cases."""

import math

import numpy as np
import pytest

from paper_pipelines.pipelines.deliberate_practice import baselines, data, metrics


def test_accuracy_and_label_agreement():
    assert metrics.accuracy(np.array([1, 2, 3, 3]), np.array([1, 2, 0, 3])) == 0.75
    assert metrics.label_agreement(np.array([0, 0]), np.array([0, 1])) == 0.5


def test_softmax_entropy_uniform_one_hot_and_shift_invariant():
    logits = np.array([[0.0, 0.0, 0.0], [1000.0, 0.0, 0.0], [1.0, 2.0, 3.0]])
    h = metrics.softmax_entropy(logits)
    assert h[0] == pytest.approx(math.log(3))
    assert h[1] == pytest.approx(0.0, abs=1e-12)
    p = np.exp([1.0, 2.0, 3.0]) / np.exp([1.0, 2.0, 3.0]).sum()
    assert h[2] == pytest.approx(-(p * np.log(p)).sum())
    assert metrics.softmax_entropy(logits[2:] + 50)[0] == pytest.approx(h[2])


def test_first_iteration_reaching_a_target():
    its, acc = np.array([150, 50, 100]), np.array([0.6, 0.1, 0.5])
    assert metrics.first_iteration_reaching(its, acc, 0.5, 150) == 100
    assert metrics.first_iteration_reaching(its, acc, 0.6, 150) == 150
    assert metrics.first_iteration_reaching(its, acc, 0.05, 150) == 50
    assert metrics.first_iteration_reaching(its, acc, 0.7, 150) == 151


def test_class_mean_mse_by_hand():
    x_real = np.array([[0.0, 0.0], [2.0, 2.0], [4.0, 0.0]])
    y_real = np.array([0, 0, 1])
    # generated class-0 mean [1, 2] vs real [1, 1]: mse 0.5; class 1 mean [4, 2] vs [4, 0]: mse 2
    x_gen = np.array([[1.0, 2.0], [4.0, 2.0]])
    assert metrics.class_mean_mse(x_gen, np.array([0, 1]), x_real, y_real) == pytest.approx(1.25)
    # a class with no generated sample is left out
    assert metrics.class_mean_mse(x_gen[:1], np.array([0]), x_real, y_real) == pytest.approx(0.5)


def test_top_entropy_keeps_the_most_uncertain_stably():
    assert baselines.top_entropy(np.array([0.1, 0.9, 0.5, 0.9]), 2).tolist() == [1, 3]
    assert baselines.top_entropy(np.array([0.1, 0.9, 0.5, 0.9]), 3).tolist() == [1, 3, 2]


def test_static_subset_is_the_pool_prefix():
    x, y = np.arange(10).reshape(5, 2), np.array([0, 1, 0, 1, 0])
    sx, sy = baselines.static_subset(x, y, 3)
    assert sx.tolist() == [[0, 1], [2, 3], [4, 5]] and sy.tolist() == [0, 1, 0]
    assert len(baselines.static_subset(x, y, 5)[1]) == 5
    with pytest.raises(ValueError, match="pool of 5"):
        baselines.static_subset(x, y, 6)


class CountingTrainer:
    def __init__(self):
        self.iterations, self.sizes = 0, []

    def train_steps(self, x, y, steps):
        self.iterations += steps
        self.sizes.append(len(y))


def test_train_and_evaluate_covers_the_budget_at_the_evaluation_cadence():
    trainer = CountingTrainer()
    records = baselines.train_and_evaluate(
        trainer, np.zeros((4, 1), np.float32), np.zeros(4, np.int64), 120, 50,
        lambda t: {"test_acc": t.iterations / 1000},
    )  # fmt: skip
    assert [r["iteration"] for r in records] == [50, 100, 120]
    assert [r["test_acc"] for r in records] == [0.05, 0.1, 0.12]
    assert all(r["pool_size"] == 4 for r in records) and trainer.iterations == 120


def test_digits_images_in_unit_range_and_upsampled():
    x, y, names = data.digits_images(8)
    assert x.shape == (1797, 1, 8, 8) and x.dtype == np.float32
    assert x.min() == -1.0 and x.max() == 1.0
    assert names == [str(c) for c in range(10)] and y.max() == 9
    big = data.resize_images(x[:3], 16)
    assert big.shape == (3, 1, 16, 16) and big.min() >= -1 and big.max() <= 1


def test_stratified_split_sizes_and_class_balance():
    x = np.arange(200, dtype=np.float32).reshape(200, 1)
    y = np.repeat(np.arange(4), 50)
    parts = data.stratified_split(
        x, y, {"generator": 0.6, "val": 0.1, "test": 0.3}, np.random.default_rng(0)
    )
    assert [len(parts[k]["y"]) for k in ("generator", "val", "test")] == [120, 20, 60]
    assert np.bincount(parts["val"]["y"]).tolist() == [5, 5, 5, 5]
    assert np.bincount(parts["test"]["y"]).tolist() == [15] * 4
    together = np.concatenate([parts[k]["x"][:, 0] for k in parts])
    assert sorted(together.tolist()) == list(range(200))
    # labels travel with their images
    for part in parts.values():
        assert (part["y"] == part["x"][:, 0] // 50).all()


def test_shift_images_identity_rotation_and_stroke_changes():
    x = np.full((2, 1, 8, 8), -1.0, np.float32)
    x[:, 0, 3:5, 2:6] = 1.0
    rng = np.random.default_rng(0)
    same = data.shift_images(x, rng, 0.0, 0.0, False)
    assert np.allclose(same, x)
    stroked = data.shift_images(x, rng, 0.0, 0.0, True)
    assert stroked[0].mean() > x[0].mean()  # even index: thickened
    assert stroked[1].mean() < x[1].mean()  # odd index: eroded
    rotated = data.shift_images(x, np.random.default_rng(1), 90.0, 0.0, False)
    assert not np.allclose(rotated, x) and rotated.min() >= -1 and rotated.max() <= 1
    noisy = data.shift_images(x, rng, 0.0, 0.5, False)
    assert 0.1 < np.std(noisy - x) < 0.5
