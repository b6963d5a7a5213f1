"""Digits-C: deterministic, monotone in severity, hand-checkable simple corruptions, clear errors."""

from __future__ import annotations

import numpy as np
import pytest

from paper_pipelines.pipelines.tca import data, digits_c


@pytest.fixture(scope="module")
def clean():
    images, labels = data.load_digits_images(16)
    return images[:60], labels[:60]


def test_digits_shapes_and_split():
    images, labels = data.load_digits_images(16)
    assert images.shape == (1797, 16, 16) and images.dtype == np.float32
    assert images.min() >= 0.0 and images.max() <= 1.0
    train, test = data.stratified_split(labels, 0.45, seed=0)
    assert len(set(train) & set(test)) == 0 and len(train) + len(test) == 1797
    frac = np.bincount(labels[test]) / np.bincount(labels)
    assert np.all(np.abs(frac - 0.45) < 0.01)  # stratified


def test_split_is_per_class_rounding_not_train_test_split():
    """Why data.stratified_split is kept: sklearn's stratified split is a different target set."""
    from sklearn.model_selection import train_test_split

    _, labels = data.load_digits_images(8)
    train, test = data.stratified_split(labels, 0.45, seed=0)
    expected = np.round(0.45 * np.bincount(labels)).astype(int)
    assert np.array_equal(np.bincount(labels[test]), expected) and len(test) == 808
    _, theirs = train_test_split(
        np.arange(len(labels)), test_size=0.45, stratify=labels, random_state=0
    )
    assert len(theirs) == 809  # ceil(0.45 * 1797), the extra image by largest remainder
    assert len(np.intersect1d(test, theirs)) < 0.5 * len(test)
    assert np.array_equal(data.stratified_split(labels, 0.45, seed=0)[1], test)  # seeded


def test_brightness_and_contrast_by_hand():
    x = np.full((1, 4, 4), 0.5)
    x[0, 0, 0] = 0.9
    rng = np.random.default_rng(0)
    assert np.allclose(digits_c.brightness(x, 1, rng), x + 0.1)
    mean = x.mean()
    assert np.allclose(digits_c.contrast(x, 5, rng), (x - mean) * 0.15 + mean)
    out = digits_c.corrupt(np.full((1, 4, 4), 0.5), "brightness", 1, seed=0)
    assert out.dtype == np.uint8 and np.all(out == 153)  # round(0.6 * 255)


@pytest.mark.parametrize("name", digits_c.CORRUPTIONS)
def test_deterministic_and_monotone_in_severity(clean, name):
    x, _ = clean
    a = digits_c.corrupt(x, name, 3, seed=0)
    b = digits_c.corrupt(x, name, 3, seed=0)
    assert np.array_equal(a, b)
    base = digits_c.to_uint8(x).astype(np.float64)
    dev = [np.abs(digits_c.corrupt(x, name, s, seed=0) - base).mean() for s in (1, 5)]
    assert 0 < dev[0] < dev[1], f"{name}: severity 5 should distort more than severity 1: {dev}"


def test_random_corruptions_depend_on_seed(clean):
    x, _ = clean
    assert not np.array_equal(
        digits_c.corrupt(x, "gaussian_noise", 3, seed=0),
        digits_c.corrupt(x, "gaussian_noise", 3, seed=1),
    )


def test_unknown_corruption_and_severity_fail_clearly(clean):
    x, _ = clean
    with pytest.raises(ValueError, match=r"unknown corruption 'snowstorm'.*gaussian_noise"):
        digits_c.corrupt(x, "snowstorm", 3, seed=0)
    with pytest.raises(ValueError, match="severity must be one of"):
        digits_c.corrupt(x, "fog", 6, seed=0)


def test_domain_keys_round_trip():
    assert digits_c.parse_domain_key(digits_c.domain_key("jpeg_compression", 5)) == (
        "jpeg_compression",
        5,
    )
