"""The evaluation measures, the error tables and the time extrapolation, on hand-made inputs."""

import numpy as np
import pandas as pd
import pytest
from sklearn.cluster import KMeans
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score

from paper_pipelines.pipelines.core_kernel.metrics import (
    CLUSTERING_SCORES,
    clustering_scores,
    error_at,
    evaluate_embedding,
    extrapolate_full_seconds,
    loglog_slope,
    mean_errors,
    row_normalize,
)


def test_clustering_scores_by_hand():
    truth = np.array([0, 0, 1, 1, 2, 2])
    pred = np.array([0, 0, 0, 1, 1, 1])
    scores = clustering_scores(truth, pred)
    assert list(scores) == list(CLUSTERING_SCORES)
    assert scores["acc"] == pytest.approx(4 / 6) and scores["purity"] == pytest.approx(4 / 6)
    assert scores["nmi"] == pytest.approx(normalized_mutual_info_score(truth, pred))
    assert scores["ari"] == pytest.approx(adjusted_rand_score(truth, pred))
    # purity counts each predicted cluster's majority: one cluster holding everything -> 1/3
    assert clustering_scores(truth, np.zeros(6, dtype=int))["purity"] == pytest.approx(1 / 3)


def test_row_normalize_by_hand():
    out = row_normalize(np.array([[3.0, 4.0], [0.0, 0.0], [0.0, -2.0]]))
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0], [0.0, -1.0]])


def _hard_embedding():
    """Three overlapping blobs in 2-D (k-means restarts disagree), labels known."""
    rng = np.random.default_rng(0)
    labels = np.repeat([0, 1, 2], 30)
    angles = np.array([0.0, 2.0, 4.0])[labels] + rng.normal(0, 0.9, 90)
    return np.c_[np.cos(angles), np.sin(angles)] * rng.uniform(0.5, 2, (90, 1)), labels


def test_evaluate_embedding_is_the_mean_over_seeded_kmeans_repeats():
    # Reference: k-means on the row-normalised H with seeds seed, seed + 1, ... (myNMIACCV2.m's loop).
    emb, labels = _hard_embedding()
    x = row_normalize(emb)
    runs = [
        clustering_scores(
            labels, KMeans(3, n_init=1, max_iter=100, random_state=5 + r).fit_predict(x)
        )
        for r in range(6)
    ]
    scores, first = evaluate_embedding(emb, labels, 3, repeats=6, n_init=1, seed=5)
    for name in CLUSTERING_SCORES:
        assert scores[name] == pytest.approx(np.mean([run[name] for run in runs]))
        assert scores[f"{name}_std"] == pytest.approx(np.std([run[name] for run in runs]))
    ref_first = KMeans(3, n_init=1, max_iter=100, random_state=5).fit_predict(x)
    assert first.tolist() == ref_first.tolist()


def test_evaluate_embedding_on_separated_clusters_scores_one():
    emb = (
        np.repeat(np.eye(3), 4, axis=0) * np.arange(1, 13)[:, None]
    )  # row norms differ, directions not
    labels = np.repeat([2, 0, 1], 4)
    scores, first = evaluate_embedding(emb, labels, 3, repeats=3, n_init=2, seed=0)
    assert scores["acc"] == scores["nmi"] == scores["purity"] == scores["ari"] == 1.0
    assert scores["acc_std"] == 0.0 and len(first) == 12


def _errors():
    return pd.DataFrame(
        {
            "algorithm": ["mkkm"] * 6 + ["simplemkkm"],
            "method": ["uniform"] * 4 + ["projection"] * 2 + ["uniform"],
            "s": [10, 10, 40, 40, 10, 40, 10],
            "rel_error": [0.1, 0.3, 0.1, 0.1, 0.02, 0.0, 0.5],
            "linf_error": [1.0, 3.0, 2.0, 2.0, 0.0, 0.0, 0.0],
            "seconds": [1.0, 2.0, 3.0, 5.0, 0.0, 0.0, 0.0],
        }
    )


def test_mean_errors_by_hand():
    table = mean_errors(_errors()).set_index(["algorithm", "method", "s"])
    row = table.loc[("mkkm", "uniform", 10)]
    assert row["rel_error"] == pytest.approx(0.2) and row["linf_error"] == 2.0
    assert row["seconds"] == 1.5
    assert row["rel_error_std"] == pytest.approx(np.std([0.1, 0.3], ddof=1))  # pandas' sample std
    assert table.loc[("mkkm", "uniform", 40), "seconds"] == 4.0
    assert len(table) == 5


def test_loglog_slope_by_hand():
    # error = s^(-1/2): slope -0.5 on log-log axes
    errors = pd.DataFrame(
        {
            "algorithm": "mkkm",
            "method": "uniform",
            "s": [4, 16, 64],
            "rel_error": [0.5, 0.25, 0.125],
        }
    )
    assert loglog_slope(errors, "mkkm", "uniform") == pytest.approx(-0.5)
    # a zero error (log undefined) is left out; one point left is not a slope
    with_zero = errors.assign(rel_error=[0.5, 0.25, 0.0])
    assert loglog_slope(with_zero, "mkkm", "uniform") == pytest.approx(-0.5)
    assert np.isnan(loglog_slope(errors.iloc[:1], "mkkm", "uniform"))
    assert np.isnan(loglog_slope(errors, "mkkm", "leverage"))
    assert np.isnan(loglog_slope(errors, "simplemkkm", "uniform"))


def test_error_at_by_hand():
    errors = mean_errors(_errors())
    assert error_at(errors, "mkkm", "uniform", 40) == pytest.approx(0.1)
    assert error_at(errors, "mkkm", "projection", 10) == pytest.approx(0.02)
    assert error_at(errors, "simplemkkm", "uniform", 10) == pytest.approx(0.5)
    assert np.isnan(error_at(errors, "mkkm", "uniform", 80))
    assert np.isnan(error_at(errors, "latefusion", "uniform", 10))


def _timing(ns, seconds, algorithm="mkkm"):
    return pd.DataFrame({"algorithm": algorithm, "n": ns, "full_seconds": seconds})


def test_extrapolate_full_seconds_by_hand():
    # seconds = n^3 / 1e6 -> exponent 3; from the largest measured n: 8 * (400 / 200)^3
    seconds, slope = extrapolate_full_seconds(_timing([100, 200], [1.0, 8.0]), "mkkm", 400)
    assert slope == pytest.approx(3.0) and seconds == pytest.approx(64.0)
    # exponent 2.5 stays as fitted
    seconds, slope = extrapolate_full_seconds(_timing([100, 400], [1.0, 32.0]), "mkkm", 1600)
    assert slope == pytest.approx(2.5) and seconds == pytest.approx(32.0 * 4**2.5)
    # exponents outside [2, 3] are clipped: 1 -> 2, 4 -> 3
    assert extrapolate_full_seconds(_timing([100, 200], [1.0, 2.0]), "mkkm", 400) == pytest.approx(
        (8.0, 2.0)
    )
    assert extrapolate_full_seconds(_timing([100, 200], [1.0, 16.0]), "mkkm", 400) == pytest.approx(
        (128.0, 3.0)
    )


def test_extrapolate_full_seconds_edge_cases():
    # one measured size: cubic from that point; unmeasured (NaN) sizes and other algorithms ignored
    timing = pd.concat(
        [
            _timing([100, 300], [2.0, np.nan]),
            _timing([100, 200], [50.0, 60.0], algorithm="simplemkkm"),
        ]
    )
    assert extrapolate_full_seconds(timing, "mkkm", 200) == pytest.approx((16.0, 3.0))
    # the largest measured n is the anchor, whatever the row order
    unsorted = _timing([200, 100], [8.0, 1.0])
    assert extrapolate_full_seconds(unsorted, "mkkm", 400)[0] == pytest.approx(64.0)
    seconds, slope = extrapolate_full_seconds(timing, "latefusion", 200)
    assert np.isnan(seconds) and np.isnan(slope)


def test_evaluate_embedding_defaults_to_ten_kmeans_starts():
    # Structureless points: the number of k-means starts changes the labels, so the default shows.
    rng = np.random.default_rng(1)
    emb, labels = rng.standard_normal((60, 4)), rng.integers(0, 5, 60)
    default, _ = evaluate_embedding(emb, labels, 5, repeats=3, seed=0)
    ten, _ = evaluate_embedding(emb, labels, 5, repeats=3, n_init=10, seed=0)
    eleven, _ = evaluate_embedding(emb, labels, 5, repeats=3, n_init=11, seed=0)
    assert default == ten and default != eleven
