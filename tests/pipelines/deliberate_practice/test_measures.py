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


def test_digits_images_upsampled_is_the_bilinear_resize_of_the_8px_digits():
    small, y, _ = data.digits_images(8)
    big, y_big, _ = data.digits_images(16)
    assert big.shape == (1797, 1, 16, 16) and big.dtype == np.float32
    assert np.array_equal(big, data.resize_images(small, 16)) and np.array_equal(y_big, y)


def test_resize_images_bilinear_by_hand_float32_and_clamped_to_the_image_range():
    # half-pixel centres (align_corners=False), 2 -> 4: weights 0, 1/4, 3/4, 1 along each axis
    x = np.array([[[[-1.0, 1.0], [-1.0, 1.0]]]], np.float32)
    out = data.resize_images(x, 4)
    assert out.dtype == np.float32 and out.shape == (1, 1, 4, 4)
    assert np.allclose(out[0, 0], [[-1.0, -0.5, 0.5, 1.0]] * 4)
    # out-of-range input: the result still lies in [-1, 1] ([-3, -1.5, 1.5, 3] clamped)
    out = data.resize_images(3 * x, 4)
    assert np.allclose(out[0, 0], [[-1.0, -1.0, 1.0, 1.0]] * 4)


def test_stratified_split_gives_a_zero_fraction_an_empty_part():
    x = np.arange(20, dtype=np.float32).reshape(20, 1)
    y = np.repeat(np.arange(2), 10)
    parts = data.stratified_split(
        x, y, {"generator": 0.5, "val": 0.0, "test": 0.5}, np.random.default_rng(0)
    )
    assert set(parts) == {"generator", "val", "test"}
    assert parts["val"]["x"].shape == (0, 1) and parts["val"]["y"].shape == (0,)
    assert parts["val"]["x"].dtype == x.dtype and parts["val"]["y"].dtype == y.dtype
    assert len(parts["generator"]["y"]) == len(parts["test"]["y"]) == 10


def test_stratified_split_differs_for_every_random_stream():
    """30 rng streams, 30 different splits: the split is not confined to a few dozen outcomes."""
    x = np.arange(40, dtype=np.float32).reshape(40, 1)
    y = np.repeat(np.arange(2), 20)
    splits = set()
    for seed in range(30):
        part = data.stratified_split(x, y, {"a": 0.5, "b": 0.5}, np.random.default_rng(seed))["a"]
        splits.add(tuple(sorted(part["x"][:, 0].tolist())))
    assert len(splits) == 30


def test_shift_images_rotation_fills_with_background_and_noise_is_clipped():
    # a blank (background -1) image stays blank under any rotation: uncovered corners are background
    blank = np.full((4, 1, 8, 8), -1.0, np.float32)
    rotated = data.shift_images(blank, np.random.default_rng(0), 90.0, 0.0, False)
    assert np.allclose(rotated, -1.0)
    # bright pixels plus noise: clipped to the image range [-1, 1]
    bright = np.ones((2, 1, 8, 8), np.float32)
    noisy = data.shift_images(bright, np.random.default_rng(0), 0.0, 0.5, False)
    assert noisy.dtype == np.float32 and noisy.max() == 1.0 and noisy.min() >= -1.0
    assert 0.3 < np.mean(noisy == 1.0) < 0.7  # about half the noise is positive


def test_top_entropy_breaks_ties_by_index_on_longer_arrays():
    entropy = np.array([0.5, 0.2] * 10)
    assert baselines.top_entropy(entropy, 10).tolist() == list(range(0, 20, 2))
    assert baselines.top_entropy(entropy, 12).tolist() == [*range(0, 20, 2), 1, 3]


class RecordingTrainer(CountingTrainer):
    def train_steps(self, x, y, steps):
        self.seen = (x, y)
        super().train_steps(x, y, steps)


def test_train_and_evaluate_trains_on_the_given_set():
    trainer = RecordingTrainer()
    x, y = np.arange(6, dtype=np.float32).reshape(3, 2), np.array([0, 1, 0])
    baselines.train_and_evaluate(trainer, x, y, 10, 10, lambda t: {})
    assert np.array_equal(trainer.seen[0].numpy(), x) and np.array_equal(trainer.seen[1].numpy(), y)


def test_class_mean_mse_skips_a_missing_class_in_the_middle():
    x_real = np.array([[0.0], [1.0], [2.0]])
    y_real = np.array([0, 1, 2])
    # class 0: (1 - 0)^2 = 1; class 1 has no generated sample; class 2: (5 - 2)^2 = 9
    x_gen, y_gen = np.array([[1.0], [5.0]]), np.array([0, 2])
    assert metrics.class_mean_mse(x_gen, y_gen, x_real, y_real) == pytest.approx(5.0)


def test_digits_labels_are_int64_class_indices():
    _, y, _ = data.digits_images(8)
    assert y.dtype == np.int64 and sorted(set(y.tolist())) == list(range(10))


def test_stratified_split_is_reproducible_from_the_rng():
    x = np.arange(40, dtype=np.float32).reshape(40, 1)
    y = np.repeat(np.arange(2), 20)
    fractions = {"a": 0.5, "b": 0.25, "c": 0.25}
    one = data.stratified_split(x, y, fractions, np.random.default_rng(7))
    two = data.stratified_split(x, y, fractions, np.random.default_rng(7))
    assert all(np.array_equal(one[k]["x"], two[k]["x"]) for k in fractions)


def test_shift_images_strokes_grow_and_shrink_by_a_2x2_element_by_parity():
    x = np.full((4, 1, 6, 6), -1.0, np.float32)
    x[0::2, 0, 2, 2] = 1.0  # even images: one bright pixel
    x[1::2, 0, 2:4, 2:4] = 1.0  # odd images: a bright 2x2 block
    out = data.shift_images(x, np.random.default_rng(0), 0.0, 0.0, True)
    bright = (out[:, 0] > 0).sum(axis=(1, 2)).tolist()
    # dilation turns the pixel into a 2x2 block (images 0 and 2), erosion the block into a pixel
    assert bright == [4, 1, 4, 1]


def test_shift_images_draws_a_rotation_per_image():
    x = np.full((6, 1, 9, 9), -1.0, np.float32)
    x[:, 0, 4, 1:8] = 1.0  # a horizontal bar through the centre
    out = data.shift_images(x, np.random.default_rng(0), 60.0, 0.0, False)
    # the images differ from each other: each got its own angle
    assert len({out[i].tobytes() for i in range(6)}) == 6


def test_shift_images_noise_is_clipped_below_too():
    blank = np.full((2, 1, 8, 8), -1.0, np.float32)
    noisy = data.shift_images(blank, np.random.default_rng(0), 0.0, 0.5, False)
    assert noisy.min() == -1.0 and noisy.max() <= 1.0 and (noisy > -1.0).any()


def test_class_mean_mse_compares_pixelwise_class_means():
    # class 0 real mean [1, 2, 3]; generated [2, 2, 2]: squared errors 1, 0, 1 -> 2 / 3
    x_real = np.array([[0.0, 0.0, 0.0], [2.0, 4.0, 6.0]])
    gen = np.array([[2.0, 2.0, 2.0]])
    assert metrics.class_mean_mse(gen, np.array([0]), x_real, np.array([0, 0])) == pytest.approx(
        2 / 3
    )
