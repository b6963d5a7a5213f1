"""Ingest and preprocess: the digits table, the standardised split and the worker instance."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.ata.cost_model import psi1_norm_centred_exponential
from paper_pipelines.pipelines.ata.data import load_digits_frame, split_and_scale, worker_profiles


def test_digits_frame_has_64_pixels_and_a_label():
    frame = load_digits_frame()
    assert frame.shape == (1797, 65)
    assert frame["label"].dtype == np.int64 and set(frame["label"]) == set(range(10))


def test_split_uses_training_statistics_and_guards_constant_columns():
    # 10 rows, 2 classes; column 1 is constant (std 0) and must stay finite
    frame = pd.DataFrame({"a": np.arange(10.0), "b": np.full(10, 3.0), "label": [0, 1] * 5})
    out = split_and_scale(frame, 0.2, seed=0)
    X_tr, X_ho = out["X_train"], out["X_holdout"]
    assert X_tr.shape == (8, 2) and X_ho.shape == (2, 2)
    assert np.allclose(X_tr.mean(axis=0), 0.0, atol=1e-6)
    assert np.allclose(X_tr[:, 0].std(), 1.0) and np.all(X_tr[:, 1] == 0.0)
    assert np.all(np.isfinite(X_ho)) and np.all(X_ho[:, 1] == 0.0)
    assert sorted(np.bincount(out["y_holdout"])) == [1, 1]  # stratified


def test_holdout_reuses_the_training_mean_and_scale():
    from sklearn.model_selection import train_test_split

    x = np.arange(20.0)
    frame = pd.DataFrame({"a": x, "label": [0, 1] * 10})
    out = split_and_scale(frame, 0.25, seed=3)
    x_tr, x_ho = train_test_split(
        x.astype(np.float32), test_size=0.25, random_state=3, stratify=frame["label"]
    )
    expected = (x_ho - x_tr.mean()) / x_tr.std()
    assert out["X_holdout"][:, 0] == pytest.approx(expected, rel=1e-5)


def test_split_rejects_a_table_without_label():
    with pytest.raises(ValueError, match="'label' column"):
        split_and_scale(pd.DataFrame({"a": [1.0, 2.0]}), 0.5, seed=0)


def test_worker_profiles_by_hand():
    profiles, meta = worker_profiles(
        3, 3, "shifted_exponential", 1.0, 1.0, None, 1.0, 3.0, rng=None
    )
    assert profiles["mu"].tolist() == [2.0, 4.0, 6.0]
    assert profiles["shift"].tolist() == [1.0, 2.0, 3.0]
    assert meta["a_star"] == [2, 1, 0] and meta["proxy_star"] == 4.0
    assert meta["eta"] == pytest.approx(1.531 / 2, abs=1e-3)


def test_shuffle_keeps_the_means_and_records_the_speed_rank():
    profiles, meta = worker_profiles(
        7, 4, "shifted_exponential", 1.0, 1.0, None, 1.0, 3.0, rng=np.random.default_rng(5)
    )
    assert sorted(profiles["mu"]) == [2.0 * i for i in range(1, 8)]
    assert (profiles["mu"] == 2.0 * profiles["input_order"]).all()
    assert profiles["input_order"].tolist() != list(range(1, 8))
    assert sum(meta["a_star"]) == 4


def test_worker_profiles_with_given_means_by_hand():
    # means 2, 4 with f = 1: spread 1, 2; alpha_i = 1.531 * spread; B = 3 gives a* = (2, 1), proxy 4.
    profiles, meta = worker_profiles(
        2, 3, "shifted_exponential", 99.0, 1.0, [2.0, 4.0], 1.0, 3.0, rng=None
    )
    c = psi1_norm_centred_exponential()
    assert profiles["spread"].tolist() == [1.0, 2.0]
    assert profiles["alpha"].to_numpy() == pytest.approx([c, 2 * c])
    assert profiles["worker"].tolist() == [0, 1] and profiles["input_order"].tolist() == [1, 2]
    assert meta["alpha"] == pytest.approx(2 * c)
    assert meta["eta"] == pytest.approx(c / 2)
    assert meta["a_star"] == [2, 1] and meta["proxy_star"] == 4.0
    # Sec. 3: E[C(a)] <= (1 + 4 eta ln B) l(a, mu)
    assert meta["sandwich_upper"] == pytest.approx(1 + 4 * (c / 2) * np.log(3))
    assert (meta["n"], meta["B"], meta["family"]) == (2, 3, "shifted_exponential")


def test_worker_profiles_pass_the_family_parameters():
    _, lognormal = worker_profiles(2, 2, "lognormal", 1.0, 1.0, None, 0.5, 3.0, rng=None)
    # alpha / mu = 1.531 * sd / (1 + f) for every worker
    c = psi1_norm_centred_exponential()
    assert lognormal["eta"] == pytest.approx(c * np.sqrt(np.e**0.25 - 1) / 2)
    _, pareto = worker_profiles(2, 2, "pareto", 1.0, 1.0, None, 1.0, 4.0, rng=None)
    assert pareto["eta"] == pytest.approx(c * np.sqrt(2.0) / 2)


def test_digits_columns_are_named_pixels():
    frame = load_digits_frame()
    assert list(frame.columns[:2]) == ["pixel_0", "pixel_1"] and frame.columns[63] == "pixel_63"


def test_split_needs_features_beside_the_label_and_returns_int64_labels():
    with pytest.raises(ValueError, match="must have a 'label' column and features"):
        split_and_scale(pd.DataFrame({"label": [0, 1, 0, 1]}), 0.5, seed=0)
    frame = pd.DataFrame({"a": np.arange(8.0), "label": np.array([0, 1] * 4, dtype=np.int32)})
    out = split_and_scale(frame, 0.25, seed=0)
    assert out["y_train"].dtype == np.int64 and out["y_holdout"].dtype == np.int64
    assert sorted(out["y_train"].tolist()) == [0, 0, 0, 1, 1, 1]


def test_given_integer_means_become_float_times():
    profiles, _ = worker_profiles(2, 2, "shifted_exponential", 1.0, 1.0, [2, 4], 1.0, 3.0, None)
    assert profiles["mu"].dtype == np.float64
