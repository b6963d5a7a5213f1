"""Offline data: generators' ground truth and the CO2 delay embedding."""

import numpy as np
import pytest

from paper_pipelines.pipelines.srca.data import (
    co2_delay_embedding,
    load_co2,
    noisy_circle,
    noisy_sphere,
    synthetic_cell_cycle,
)


def test_noiseless_sphere_points_lie_on_the_sphere():
    d = noisy_sphere(100, 2.0, 1.0, 0.0, 3, seed=0)
    np.testing.assert_allclose(np.linalg.norm(d["X"] - 1.0, axis=1), 2.0)


def test_circle_in_high_dimension_has_its_phase():
    d = noisy_circle(50, 30, 3.0, 0.0, 0.5, seed=0)
    assert d["X"].shape == (50, 30)
    np.testing.assert_allclose(np.linalg.norm(d["X"] - d["center"], axis=1), 3.0)
    assert d["phase"].shape == (50,)


def test_cell_cycle_shapes_and_labels():
    d = synthetic_cell_cycle(300, 12, 6, 0.2, 0.1, seed=0)
    assert d["X"].shape == (300, 12)
    assert d["labels"].sum() == 30
    assert np.all((d["phase"] >= 0) & (d["phase"] < 2 * np.pi))
    with pytest.raises(ValueError, match="n_features"):
        synthetic_cell_cycle(10, 5, 6, 0.2, 0.0, seed=0)


def test_co2_delay_embedding_shape_and_loop():
    series, weeks = load_co2()
    d = co2_delay_embedding(series, weeks, window=26, trend=53)
    assert d["X"].shape == (len(series) - 52 - 25, 26)
    assert np.all(np.isfinite(d["X"]))
    # detrended: each column has mean near 0 relative to the seasonal amplitude
    assert np.abs(d["X"].mean(axis=0)).max() < 0.2 * d["X"].std()


def test_co2_bad_trend_window():
    with pytest.raises(ValueError, match="odd integer"):
        co2_delay_embedding(np.arange(100.0), np.arange(100.0), 10, 52)
