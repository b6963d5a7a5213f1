"""The fit and evaluate stages on a tiny data set: each table cell is recomputed from its definition."""

import math

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import PCA

from paper_pipelines.common.runtime import substream_seed
from paper_pipelines.pipelines.srca.baselines import (
    baseline_projection,
    fit_baseline_models,
    fit_manifold_embeddings,
    manifold_estimator,
)
from paper_pipelines.pipelines.srca.coranking import coranking_scores
from paper_pipelines.pipelines.srca.data import (
    coranking_points,
    noisy_circle,
    noisy_sphere,
    prepare_datasets,
)
from paper_pipelines.pipelines.srca.metrics import (
    angles,
    coranking_tables,
    pca_angles,
    phase_recovery,
    phase_table,
    reconstruction_mse,
    reconstruction_table,
)
from paper_pipelines.pipelines.srca.parameters import (
    BaselineParams,
    EvaluationParams,
    ModelParams,
    PreprocessParams,
)
from paper_pipelines.pipelines.srca.spherelets import project_spherelet
from paper_pipelines.pipelines.srca.srca import (
    fit_srca,
    fit_srca_models,
    project,
    reduced_coordinates,
    srca_embeddings,
)

SEED = 3
EVALUATION = EvaluationParams(
    coranking_k=2, coranking_max_n=20, coranking_datasets=["circle"], phase_datasets=["circle"]
)
BASELINES = BaselineParams(
    n_neighbors=5, tsne_perplexity=5.0, manifold_methods=["isomap", "mds", "tsne"]
)


@pytest.fixture(scope="module")
def stages():
    """A 40-point circle in R^4 (with phase) and a 30-point sphere (without), fitted at k = 1, 2."""
    raw = {
        "circle": noisy_circle(40, 4, 2.0, 0.1, 0.5, seed=0),
        "sphere": noisy_sphere(30, 1.0, 0.0, 0.05, 3, seed=1),
    }
    prepared = prepare_datasets(raw, PreprocessParams(test_fraction=0.5), SEED)
    model = ModelParams(k={"circle": [1, 2], "sphere": [1]})
    srca_models = fit_srca_models(prepared, model)
    baseline_models = fit_baseline_models(prepared, model)
    manifold = fit_manifold_embeddings(prepared, BASELINES, EVALUATION, SEED)
    return prepared, srca_models, baseline_models, manifold


def test_every_data_set_k_and_split_is_fitted(stages):
    prepared, srca_models, baseline_models, _ = stages
    keys = {"circle/k1/full", "circle/k1/train", "circle/k2/full", "circle/k2/train"}
    keys |= {"sphere/k1/full", "sphere/k1/train"}
    assert set(srca_models) == keys and set(baseline_models) == keys
    d = prepared["circle"]
    train = srca_models["circle/k1/train"]
    # the training-half model is the SRCA of the training rows, nothing else
    direct = fit_srca(d["X"][d["train"]], 1)
    np.testing.assert_allclose(train.center, direct.center, atol=1e-8)
    assert train.axes == direct.axes and train.n_subsets == direct.n_subsets
    for m in srca_models.values():
        assert isinstance(m.fit_seconds, float) and 0 < m.fit_seconds < 60
    for entry in baseline_models.values():
        assert set(entry) == {"seconds", "pca", "spherelets"}
        assert set(entry["seconds"]) == {"PCA", "Spherelets"}
        assert all(0 <= s < 60 for s in entry["seconds"].values())
    entry = baseline_models["circle/k2/train"]
    assert entry["pca"].n_components_ == 2 and entry["spherelets"].k == 2
    np.testing.assert_allclose(entry["pca"].mean_, d["X"][d["train"]].mean(axis=0))


def test_fit_settings_reach_every_fit():
    d = prepare_datasets(
        {"circle": noisy_circle(30, 4, 2.0, 0.1, 0.5, seed=2)}, PreprocessParams(), 0
    )
    unpruned = ModelParams(k={"circle": [1]}, prune=False, out_of_sample=False)
    fits = fit_srca_models(d, unpruned)
    assert list(fits) == ["circle/k1/full"]
    assert fits["circle/k1/full"].n_subsets == math.comb(4, 2)  # no pruning: all C(D, k + 1)
    top = ModelParams(k={"circle": [1]}, search_overrides={"circle": "top"}, out_of_sample=False)
    m = fit_srca_models(d, top)["circle/k1/full"]
    assert (m.search, m.n_subsets, m.axes) == ("top", 1, (0, 1))
    assert list(fit_baseline_models(d, unpruned)) == ["circle/k1/full"]
    with pytest.raises(ValueError, match="srca.model.k has no entry for data set 'circle'"):
        fit_srca_models(d, ModelParams(k={"sphere": [1]}))


def test_baseline_projection_is_pca_reconstruction_or_the_spherelet(stages):
    prepared, _, baseline_models, _ = stages
    X = prepared["circle"]["X"]
    entry = baseline_models["circle/k1/full"]
    pca = PCA(n_components=1).fit(X)
    expected = pca.mean_ + (X - pca.mean_) @ pca.components_.T @ pca.components_
    np.testing.assert_allclose(baseline_projection(entry, "PCA", X), expected, atol=1e-10)
    np.testing.assert_allclose(
        baseline_projection(entry, "Spherelets", X), project_spherelet(entry["spherelets"], X)
    )


def test_reconstruction_table_cells(stages):
    prepared, srca_models, baseline_models, _ = stages
    table = reconstruction_table(prepared, srca_models, baseline_models)
    assert list(table.columns) == [
        "dataset",
        "k",
        "evaluation",
        "n",
        "D",
        "method",
        "mse",
        "fit_seconds",
        "axes",
        "search",
        "sphere_fits",
        "radius",
    ]
    assert len(table) == 3 * len(srca_models)
    d = prepared["circle"]
    X, test = d["X"], d["X"][d["test"]]
    rows = table.set_index(["dataset", "k", "evaluation", "method"])
    full = srca_models["circle/k2/full"]
    row = rows.loc[("circle", 2, "in_sample", "SRCA")]
    assert row["mse"] == pytest.approx(reconstruction_mse(X, project(full, X)), rel=1e-12)
    assert (row["n"], row["D"]) == (40, 4)
    assert row["axes"] == ",".join(map(str, full.axes)) and row["search"] == full.search
    assert row["sphere_fits"] == full.n_subsets and row["radius"] == full.radius
    assert row["fit_seconds"] == full.fit_seconds
    # out of sample: the training-half model scored on the held-out rows; n stays the data set's size
    train = srca_models["circle/k1/train"]
    row = rows.loc[("circle", 1, "out_of_sample", "SRCA")]
    assert row["mse"] == pytest.approx(reconstruction_mse(test, project(train, test)), rel=1e-12)
    assert row["n"] == 40
    base = baseline_models["circle/k1/train"]
    pca_row = rows.loc[("circle", 1, "out_of_sample", "PCA")]
    pca_mse = reconstruction_mse(test, baseline_projection(base, "PCA", test))
    assert pca_row["mse"] == pytest.approx(pca_mse, rel=1e-12)
    assert (pca_row["axes"], pca_row["search"], pca_row["sphere_fits"]) == ("", "", 0)
    assert np.isnan(pca_row["radius"]) and pca_row["fit_seconds"] == base["seconds"]["PCA"]
    sph_row = rows.loc[("circle", 1, "out_of_sample", "Spherelets")]
    sph_mse = reconstruction_mse(test, baseline_projection(base, "Spherelets", test))
    assert sph_row["mse"] == pytest.approx(sph_mse, rel=1e-12)
    assert sph_row["radius"] == base["spherelets"].radius


def test_coranking_tables_score_each_method_on_the_same_subset(stages):
    prepared, srca_models, baseline_models, manifold = stages
    table, curves = coranking_tables(
        prepared, srca_models, baseline_models, manifold, EVALUATION, SEED
    )
    X = coranking_points(prepared["circle"], 20, SEED, "circle")
    assert X.shape == (20, 4)
    outputs = {
        "SRCA": project(srca_models["circle/k2/full"], X),
        "PCA": baseline_projection(baseline_models["circle/k2/full"], "PCA", X),
        "Spherelets": baseline_projection(baseline_models["circle/k2/full"], "Spherelets", X),
        "Isomap": manifold["circle"]["isomap"],
        "MDS": manifold["circle"]["mds"],
        "t-SNE": manifold["circle"]["tsne"],
    }
    assert list(table["method"]) == list(outputs)
    assert list(table.columns) == [
        "dataset",
        "method",
        "k",
        "n",
        "auc_weighted",
        "auc_unweighted",
        "k_max_lcmc",
    ]
    for (_, row), (method, out) in zip(table.iterrows(), outputs.items(), strict=True):
        s = coranking_scores(X, out)
        assert (row["dataset"], row["k"], row["n"]) == ("circle", 2, 20)
        assert row["auc_weighted"] == pytest.approx(s["auc_weighted"], rel=1e-12), method
        assert row["auc_unweighted"] == pytest.approx(s["auc_unweighted"], rel=1e-12), method
        assert row["k_max_lcmc"] == s["k_max_lcmc"]
        curve = curves[curves["method"] == method]
        np.testing.assert_array_equal(curve["K"], np.arange(1, 19))  # K = 1..n-2
        np.testing.assert_allclose(curve["rnx"], s["rnx"])
        assert set(curve["dataset"]) == {"circle"}
    assert list(curves.columns) == ["dataset", "method", "K", "rnx"]


def test_coranking_tables_without_a_fitted_data_set_are_empty_with_columns(stages):
    prepared, srca_models, baseline_models, _ = stages
    none = EvaluationParams(coranking_k=3, coranking_datasets=["circle", "co2"])  # no k = 3 fit
    table, curves = coranking_tables(prepared, srca_models, baseline_models, {}, none, SEED)
    assert table.empty and curves.empty
    assert list(curves.columns) == ["dataset", "method", "K", "rnx"]
    # without manifold embeddings only the three projections are scored
    table, _ = coranking_tables(prepared, srca_models, baseline_models, {}, EVALUATION, SEED)
    assert list(table["method"]) == ["SRCA", "PCA", "Spherelets"]


def test_phase_table_in_and_out_of_sample(stages):
    prepared, srca_models, baseline_models, _ = stages
    evaluation = EvaluationParams(
        phase_datasets=["circle", "sphere", "iris"]
    )  # only circle has phase
    table = phase_table(prepared, srca_models, baseline_models, evaluation)
    assert list(table.columns) == ["dataset", "evaluation", "method", "phase_recovery"]
    assert list(table["evaluation"]) == ["in_sample"] * 3 + ["out_of_sample"] * 3
    assert list(table["method"]) == ["SRCA", "PCA", "Spherelets"] * 2
    assert set(table["dataset"]) == {"circle"}
    d = prepared["circle"]
    X, phase = d["X"], d["phase"]
    test, train = d["test"], d["X"][d["train"]]
    sph = baseline_models["circle/k1/train"]["spherelets"]
    expected = [
        phase_recovery(angles(reduced_coordinates(srca_models["circle/k1/full"], X)), phase),
        phase_recovery(pca_angles(X, X), phase),
        phase_recovery(
            angles(
                (X - baseline_models["circle/k1/full"]["spherelets"].center)
                @ baseline_models["circle/k1/full"]["spherelets"].basis
            ),
            phase,
        ),
        phase_recovery(
            angles(reduced_coordinates(srca_models["circle/k1/train"], X[test])), phase[test]
        ),
        phase_recovery(pca_angles(train, X[test]), phase[test]),
        phase_recovery(angles((X[test] - sph.center) @ sph.basis), phase[test]),
    ]
    np.testing.assert_allclose(table["phase_recovery"], expected, rtol=1e-12)
    # a circle is recovered in phase by SRCA (hand check of the measure's meaning)
    assert table["phase_recovery"].iloc[0] > 0.95
    empty = phase_table(prepared, {}, baseline_models, evaluation)
    assert empty.empty and list(empty.columns) == list(table.columns)


def test_srca_embeddings_keep_only_the_full_fits(stages):
    prepared, srca_models, _, _ = stages
    out = srca_embeddings(prepared, srca_models)
    assert set(out) == {"circle/k1/full", "circle/k2/full", "sphere/k1/full"}
    m = srca_models["circle/k2/full"]
    e = out["circle/k2/full"]
    np.testing.assert_array_equal(e["reduced"], reduced_coordinates(m, prepared["circle"]["X"]))
    assert e["reduced"].shape == (40, 3)
    np.testing.assert_array_equal(e["center"], m.center)
    assert float(e["radius"]) == m.radius and tuple(e["axes"]) == m.axes


def test_manifold_embeddings_are_seeded_from_the_paper_seed(stages):
    prepared, _, _, manifold = stages
    X = coranking_points(prepared["circle"], 20, SEED, "circle")
    assert set(manifold) == {"circle"} and set(manifold["circle"]) == {"isomap", "mds", "tsne"}
    state = substream_seed(SEED, "baselines")
    for method in ("isomap", "mds", "tsne"):
        est = manifold_estimator(method, 20, 2, BASELINES, state)
        np.testing.assert_allclose(manifold["circle"][method], est.fit_transform(X), atol=1e-10)
        assert manifold["circle"][method].shape == (20, 2)


def test_manifold_estimators_get_their_settings():
    b = BaselineParams(n_neighbors=7, tsne_perplexity=30.0)
    iso = manifold_estimator("isomap", 50, 3, b, 5).get_params()
    assert (iso["n_neighbors"], iso["n_components"]) == (7, 3)
    lle = manifold_estimator("lle", 50, 3, b, 5).get_params()
    assert (lle["n_neighbors"], lle["n_components"], lle["eigen_solver"]) == (7, 3, "dense")
    assert lle["random_state"] == 5
    # t-SNE needs perplexity < n: capped at (n - 1) / 3 = 10 for 31 points
    tsne = manifold_estimator("tsne", 31, 2, b, 5).get_params()
    assert tsne["perplexity"] == pytest.approx(10.0) and tsne["n_components"] == 2
    assert (tsne["init"], tsne["random_state"]) == ("pca", 5)
    assert manifold_estimator("tsne", 500, 2, b, 5).get_params()["perplexity"] == 30.0
    mds = manifold_estimator("mds", 50, 3, b, 5).get_params()
    assert (mds["n_components"], mds["n_init"], mds["random_state"]) == (3, 1, 5)
    assert type(manifold_estimator("lle", 50, 3, b, 5)).__name__ == "LocallyLinearEmbedding"


def test_pca_angles_recover_a_planar_circle():
    t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
    X = np.column_stack([3 * np.cos(t), 3 * np.sin(t), np.zeros(24)]) + 5.0
    assert phase_recovery(pca_angles(X, X), t) == pytest.approx(1.0, abs=1e-12)
    # fitted on another sample of the same circle, applied to these points
    half = pd.Series(range(24)) % 2 == 0
    assert phase_recovery(pca_angles(X[half.to_numpy()], X), t) == pytest.approx(1.0, abs=1e-12)
