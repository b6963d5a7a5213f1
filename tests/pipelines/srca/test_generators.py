"""Data generators and ingest pinned on their definitions (noise-free cases checked by formula)."""

import numpy as np
import pytest

from paper_pipelines.common.runtime import substream, substream_seed
from paper_pipelines.pipelines.srca.data import (
    co2_delay_embedding,
    coranking_points,
    coranking_subset,
    load_co2,
    make_dataset,
    noisy_circle,
    noisy_sphere,
    prepare_datasets,
    random_split,
    sklearn_table,
    synthetic_cell_cycle,
)
from paper_pipelines.pipelines.srca.parameters import DataParams, PreprocessParams


def test_circle_phase_radius_and_per_axis_noise():
    d = noisy_circle(200, 6, 2.5, 0.0, 0.5, seed=4)
    assert np.all((d["phase"] >= 0) & (d["phase"] < 2 * np.pi))
    assert d["phase"].max() > 1.9 * np.pi  # the whole circle, not a part of it
    assert float(d["radius"]) == 2.5
    # A tiny radius leaves offset + noise: axis j has standard deviation noise * a_j with
    # a_j ~ U(1 - anisotropy, 1 + anisotropy) = U(0.5, 1.5) here.
    n = noisy_circle(4000, 20, 1e-9, 0.2, 0.5, seed=5)
    sd = (n["X"] - n["center"]).std(axis=0) / 0.2
    assert sd.min() > 0.45 and sd.max() < 1.55
    assert sd.min() < 0.8 and sd.max() > 1.2  # spread over the interval, not one value
    np.testing.assert_allclose(n["X"].mean(axis=0), n["center"], atol=0.02)


def test_sphere_noise_is_gaussian_with_the_given_scale():
    d = noisy_sphere(4000, 2.0, 1.0, 0.01, 3, seed=0)
    resid = np.linalg.norm(d["X"] - 1.0, axis=1) - 2.0  # radial part of N(0, 0.01^2 I)
    assert resid.std() == pytest.approx(0.01, rel=0.1)
    assert np.abs(resid).max() < 0.06  # Gaussian tails (6 sigma), no division blow-ups
    np.testing.assert_array_equal(d["center"], [1.0, 1.0, 1.0])


def test_cell_cycle_noise_free_features_follow_the_phase():
    nm = 6
    d = synthetic_cell_cycle(600, 10, nm, 0.0, 0.0, seed=1)
    X, theta = d["X"], d["phase"]
    frac = theta / (2 * np.pi)
    s = np.clip((frac - 0.35) / 0.30, 0.0, 1.0)
    # DNA content: 2N before S phase, a smoothstep to 4N across it; size grows linearly 1 -> 2
    np.testing.assert_allclose(X[:, nm], 2.0 + 2.0 * (3 * s**2 - 2 * s**3))
    np.testing.assert_allclose(X[:, nm + 1], 1.0 + frac)
    assert np.all(X[:, nm + 2 :] == 0.0)  # irrelevant features carry no signal without noise
    markers = X[:, :nm]
    # von Mises bumps a exp(k (cos(theta - peak) - 1)): maximum ~ a in [1, 3] at the peak and
    # min / max ~ exp(-2 k) opposite it, with a and k drawn per marker
    assert np.all(markers > 0) and np.all(markers.max(axis=0) <= 3.0)
    assert np.all(markers.max(axis=0) >= 0.9)
    assert np.ptp(markers.max(axis=0)) > 0.3
    kappa = -np.log(markers.min(axis=0) / markers.max(axis=0)) / 2
    assert np.all((kappa > 0.5) & (kappa < 4.1)) and np.ptp(kappa) > 0.5
    assert d["labels"].dtype.kind == "i" and not d["labels"].any()


def test_cell_cycle_quiescent_cells_get_their_marker():
    nm = 4
    d = synthetic_cell_cycle(400, 9, nm, 0.0, 0.25, seed=2)
    X, g0 = d["X"], d["labels"] == 1
    assert g0.sum() == 100 and d["labels"].dtype.kind == "i"
    depth = X[g0, nm + 2] / 3.0  # the quiescence marker is 3 x depth, depth ~ U(0, 1)
    assert np.all((depth >= 0) & (depth <= 1)) and depth.max() > 0.9
    assert np.all(X[~g0, nm + 2] == 0.0) and np.all(X[:, nm + 3 :] == 0.0)
    # G0 cells keep DNA and size; only the markers fade
    frac = d["phase"] / (2 * np.pi)
    np.testing.assert_allclose(X[:, nm + 1], 1.0 + frac)


def test_co2_delay_embedding_by_hand():
    """A ramp plus a period-3 pattern: a 3-week centred mean removes the ramp and the pattern's mean."""
    t = np.arange(12, dtype=float)
    pattern = np.tile([1.0, -2.0, 1.0], 4)
    weeks = t + 1.0
    d = co2_delay_embedding(2.0 * t + pattern, weeks, window=4, trend=3)
    resid = pattern[1:-1]  # the residual at the centre weeks 1..10 is the pattern itself
    assert d["X"].shape == (10 - 4 + 1, 4)
    for i, row in enumerate(d["X"]):
        np.testing.assert_allclose(row, resid[i : i + 4], atol=1e-12)
    # phase of each window = its first week (weeks 2..8 here) on a 52.18-week year
    np.testing.assert_allclose(d["phase"], 2 * np.pi * (np.arange(2, 9) - 1) / 52.18)
    # a gap is filled by linear interpolation between its neighbours
    gap = 2.0 * t + pattern
    filled = gap.copy()
    gap[5] = np.nan
    filled[5] = (filled[4] + filled[6]) / 2
    np.testing.assert_allclose(
        co2_delay_embedding(gap, weeks, 4, 3)["X"], co2_delay_embedding(filled, weeks, 4, 3)["X"]
    )
    with pytest.raises(ValueError, match="too short"):
        co2_delay_embedding(gap, weeks, window=10, trend=3)


def test_co2_from_statsmodels_is_a_float_series_with_iso_weeks():
    series, weeks = load_co2()
    assert series.dtype == np.float64 and len(series) == len(weeks)
    assert weeks.min() == 1 and weeks.max() in (52, 53)


def test_make_dataset_uses_the_named_substream():
    data = DataParams(
        datasets=["sphere", "circle", "cellcycle", "co2"],
        sphere={"n": 20, "radius": 2.0, "center": 0.5, "noise": 0.1, "dim": 4},
        circle={"n": 15, "D": 5, "radius": 1.5, "noise": 0.2, "anisotropy": 0.3},
        cellcycle={"n": 30, "n_features": 8, "n_markers": 3, "noise": 0.1, "g0_fraction": 0.2},
        co2={"window": 10, "trend": 5, "max_n": 50},
    )
    seed = 11

    def stream(name):
        return substream_seed(seed, "data", name)

    sphere = make_dataset("sphere", data, seed)
    np.testing.assert_array_equal(
        sphere["X"], noisy_sphere(20, 2.0, 0.5, 0.1, 4, stream("sphere"))["X"]
    )
    exact = make_dataset("sphere_exact", data, seed)
    assert exact["X"].shape == (1000, 3)  # the default SphereSpec
    circle = make_dataset("circle", data, seed)
    np.testing.assert_array_equal(
        circle["X"], noisy_circle(15, 5, 1.5, 0.2, 0.3, stream("circle"))["X"]
    )
    assert make_dataset("circle_hd", data, seed)["X"].shape == (60, 500)
    cells = make_dataset("cellcycle", data, seed)
    np.testing.assert_array_equal(
        cells["X"], synthetic_cell_cycle(30, 8, 3, 0.1, 0.2, stream("cellcycle"))["X"]
    )
    co2 = make_dataset("co2", data, seed)
    series, weeks = load_co2()
    full = co2_delay_embedding(series, weeks, 10, 5)
    keep = np.sort(
        np.random.default_rng(stream("co2")).choice(full["X"].shape[0], 50, replace=False)
    )
    np.testing.assert_array_equal(co2["X"], full["X"][keep])
    np.testing.assert_array_equal(co2["phase"], full["phase"][keep])
    assert make_dataset("iris", data, seed)["X"].shape == (150, 4)


def test_sklearn_table_has_labels():
    d = sklearn_table("wine")
    assert d["X"].shape == (178, 13) and d["labels"].shape == (178,)
    assert set(d["labels"].tolist()) == {0, 1, 2}


def test_prepare_datasets_split_stream_and_checks():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((11, 2))  # D = 2 is enough for a circle (k = 1)
    out = prepare_datasets({"circle": {"X": X}}, PreprocessParams(test_fraction=0.5), 7)["circle"]
    split = random_split(11, 0.5, substream(7, "split", "circle"))
    np.testing.assert_array_equal(out["train"], split["train"])
    np.testing.assert_array_equal(out["test"], split["test"])
    assert len(out["test"]) == 5  # floor(11 * 0.5)
    np.testing.assert_array_equal(out["X"], X)  # not in `standardise`: unchanged
    bad = np.column_stack([X[:, 0], np.ones(11)])
    with pytest.raises(ValueError, match="^data set 'circle' has constant columns"):
        prepare_datasets({"circle": {"X": bad}}, PreprocessParams(), 7)


def test_coranking_subset_is_a_seeded_sample_without_replacement():
    np.testing.assert_array_equal(coranking_subset(5, 10, seed=0), np.arange(5))
    idx = coranking_subset(100, 30, seed=4)
    assert idx.shape == (30,) and len(set(idx.tolist())) == 30
    np.testing.assert_array_equal(
        idx, np.sort(np.random.default_rng(4).choice(100, 30, replace=False))
    )
    X = np.arange(200.0).reshape(100, 2)
    pts = coranking_points({"X": X}, 30, 9, "sphere")
    np.testing.assert_array_equal(
        pts, X[coranking_subset(100, 30, substream_seed(9, "coranking", "sphere"))]
    )


def test_a_missing_user_table_says_which_catalog_entry_to_declare():
    from paper_pipelines.pipelines.srca.data import user_table
    from paper_pipelines.pipelines.srca.parameters import UserTableSpec

    with pytest.raises(
        ValueError, match="holds no table: declare the srca.user_table catalog entry"
    ):
        user_table(None, UserTableSpec())
