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


def test_standardisation_uses_the_training_half_only():
    """The held-out points must not move the scaling: the training half ends with mean 0 and std 1,
    and changing a test point changes only that point."""
    from paper_pipelines.pipelines.srca.data import prepare_datasets
    from paper_pipelines.pipelines.srca.parameters import PreprocessParams

    rng = np.random.default_rng(3)
    X = rng.normal(5.0, 2.0, size=(40, 3))
    params = PreprocessParams(standardise=["wine"], test_fraction=0.5)
    out = prepare_datasets({"wine": {"X": X}}, params, seed=1)["wine"]
    train, test = out["train"], out["test"]
    assert len(train) == len(test) == 20
    np.testing.assert_allclose(out["X"][train].mean(0), 0.0, atol=1e-12)
    np.testing.assert_allclose(out["X"][train].std(0), 1.0, atol=1e-12)
    assert abs(out["X"][test].mean(0)).max() > 1e-3  # the test half is not re-centred on itself
    moved = X.copy()
    moved[test[0]] += 100.0
    again = prepare_datasets({"wine": {"X": moved}}, params, seed=1)["wine"]
    np.testing.assert_allclose(again["X"][train], out["X"][train])
    unscaled = out["X"][test[0]] * X[train].std(0) + X[train].mean(0)
    np.testing.assert_allclose(unscaled, X[test[0]])


def test_a_user_table_becomes_a_data_set_by_its_numeric_columns():
    import pandas as pd

    from paper_pipelines.pipelines.srca.data import make_datasets
    from paper_pipelines.pipelines.srca.parameters import DataParams

    t = np.linspace(0, 2 * np.pi, 30, endpoint=False)
    table = pd.DataFrame({"x": np.cos(t), "y": np.sin(t), "z": 0.5 * t, "phase": ["a", "b"] * 15})
    out = make_datasets(DataParams(datasets=["user", "iris"]), 0, table)
    assert set(out) == {"user", "iris"}
    np.testing.assert_array_equal(out["user"]["X"], table[["x", "y", "z"]].to_numpy())
    picked = DataParams(datasets=["user"], user={"columns": ["y", "x"], "label_column": "phase"})
    chosen = make_datasets(picked, 0, table)["user"]
    np.testing.assert_array_equal(chosen["X"], table[["y", "x"]].to_numpy())
    assert list(chosen["labels"][:2]) == ["a", "b"]


@pytest.mark.parametrize(
    ("table", "user", "message"),
    [
        (None, {}, "srca.user_table holds no table"),
        ([[1.0, 2.0]], {}, "loads a list, not a table"),
        ("frame", {"columns": ["x", "nope"]}, r"columns names \['nope'\]"),
        ("frame", {"label_column": "nope"}, "label_column 'nope'"),
        ("frame", {"columns": ["x"]}, "at least 2 numeric columns"),
    ],
)
def test_a_missing_or_malformed_user_table_names_the_entry_and_the_fix(table, user, message):
    import pandas as pd

    from paper_pipelines.pipelines.srca.data import make_datasets
    from paper_pipelines.pipelines.srca.parameters import DataParams

    if table == "frame":
        table = pd.DataFrame({"x": [1.0, 2.0, 3.0], "y": [0.0, 1.0, 0.0]})
    with pytest.raises(ValueError, match=message):
        make_datasets(DataParams(datasets=["user"], user=user), 0, table)


def test_iris_needs_no_user_table():
    from paper_pipelines.pipelines.srca.data import make_datasets
    from paper_pipelines.pipelines.srca.parameters import DataParams

    assert make_datasets(DataParams(datasets=["iris"]), 0, None)["iris"]["X"].shape == (150, 4)
