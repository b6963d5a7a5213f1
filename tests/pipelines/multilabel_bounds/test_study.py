"""The study's bookkeeping on tiny grids: tasks, splits, gap rows, the Rademacher table, the anchors."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.multilabel_bounds import baselines, data, study
from paper_pipelines.pipelines.multilabel_bounds import parameters as P


def _params():
    d = P.DataParams.model_validate(
        {
            "c_max": 6,
            "low_d": {"d": 4, "n": [20, 40], "c": [2, 6], "etas": [0.0, 0.1], "n_pool": 40,
                      "n_test": 200, "models": ["linear", "lowrank"]},
            "high_d": {"enabled": False, "n": [20, 40], "c": [2, 4], "etas": [0.0],
                       "models": ["linear"], "n_pool": 40},
            "optimistic": {"enabled": False, "n": [20, 40], "c": [2, 4], "etas": [0.0],
                           "models": ["linear"], "n_pool": 40},
            "multilabel": {"enabled": False, "n": [20, 40], "c": [2, 4], "models": ["lowrank"]},
            "real": {"source": "digits", "digits_rows": 700, "n": [50, 100], "c": [2, 10],
                     "splits": 2, "label_subsets": 3},
        }
    )  # fmt: skip
    t = P.TrainParams(steps=30, n_jobs=1, losses=["squared", "hinge"])
    return d, t


def test_tasks_fit_the_decoupled_class_once_and_lowrank_per_c():
    d, t = _params()
    tasks = study.synthetic_tasks(d, t)
    linear = [x for x in tasks if x["model"] == "linear"]
    lowrank = [x for x in tasks if x["model"] == "lowrank"]
    # 2 etas x 2 losses x 2 n; low-rank also x 2 c
    assert len(linear) == 8 and {x["c_fit"] for x in linear} == {6}
    assert len(lowrank) == 16 and {x["c_fit"] for x in lowrank} == {2, 6}
    assert len({study.task_key(x) for x in tasks}) == len(tasks)
    assert {x["lam"] for x in tasks} == {10.0}


def test_fit_and_measure_give_one_row_per_task_and_c():
    d, t = _params()
    pools = study.synthetic_pools(d, seed=0)
    assert set(pools) == {"low_d"} and pools["low_d"][0]["X_train"].shape == (40, 5)
    fits = study.fit_synthetic(pools, d, P.ModelParams(rank=2), t, seed=0)
    gaps = study.measure_synthetic(pools, fits, d, t)
    # linear: 8 tasks x 2 c; low-rank: 16 tasks x 1 c
    assert len(gaps) == 8 * 2 + 16
    assert set(gaps.c) == {2, 6} and (gaps.c_used == gaps.c).all()
    again = study.fit_synthetic(pools, d, P.ModelParams(rank=2), t, seed=0)
    for key, params in fits["params"].items():
        for name, value in params.items():
            np.testing.assert_array_equal(value, again["params"][key][name])  # same seed, same fit
    row = gaps[(gaps.model == "linear") & (gaps.loss == "hinge") & (gaps.n == 40) & (gaps.eta == 0)]
    assert (row.gap_surrogate == row.test_surrogate - row.train_surrogate).all()


def test_measure_columns_averages_the_chosen_labels():
    y = np.array([[1.0, -1.0, 1.0], [-1.0, 1.0, 1.0], [1.0, 1.0, -1.0]])
    s = np.array([[1.0, -1.0, -1.0], [-1.0, 1.0, 1.0], [1.0, -1.0, 1.0]])
    per_label = study.per_label_measures(s, y, "hinge")
    np.testing.assert_allclose(per_label["hamming"], [0.0, 1 / 3, 2 / 3])
    out = study.measure_columns(per_label, s, y, np.array([0, 2]))
    assert out["hamming"] == pytest.approx(1 / 3)
    assert out["surrogate"] == pytest.approx((0.0 + 4 / 3) / 2)  # hinge of margins per label
    assert set(out) == {"surrogate", "hamming", "auc_loss", "ranking"}


def test_real_splits_are_disjoint_and_subsets_use_usable_labels():
    d, _ = _params()
    table = data.load_multi_digits(700, 3, np.random.default_rng(0))
    index = study.real_splits(table, d.real, seed=0)
    assert len(index["splits"]) == 2
    for split in index["splits"]:
        assert len(split["train"]) == 100 and len(split["test"]) == 600
        assert not set(split["train"]) & set(split["test"])
        for entry in split["subsets"].values():
            draws2 = entry["c"]["2"]
            assert len(draws2) == 3 and all(len(x) == 2 for x in draws2)
            assert all(set(x) <= set(entry["usable"]) for x in draws2)
            # c = 10 takes every usable label, once
            assert entry["c"]["10"] == [sorted(entry["usable"])]
    assert index["splits"][0]["train"] != index["splits"][1]["train"]


def test_mlp_is_opt_in_and_fitted_once_per_c_on_the_synthetic_grid():
    d, t = _params()
    assert not [x for x in study.synthetic_tasks(d, t) if x["model"] == "mlp"]  # default: no mlp
    d = d.model_copy(
        update={"low_d": d.low_d.model_copy(update={"models": ["mlp"], "etas": [0.0]})}
    )
    tasks = study.synthetic_tasks(d, t)
    assert len(tasks) == 2 * 2 * 2 and {x["c_fit"] for x in tasks} == {2, 6}  # losses x n x c
    pools = study.synthetic_pools(d, seed=0)
    fits = study.fit_synthetic(pools, d, P.ModelParams(rank=2, hidden=3), t, seed=0)
    params = next(iter(fits["params"].values()))
    assert params["V"].shape == (5, 3)  # h = model.hidden, not model.rank
    gaps = study.measure_synthetic(pools, fits, d, t)
    assert len(gaps) == 8 and set(gaps.model) == {"mlp"} and (gaps.c_used == gaps.c).all()


def test_width_is_the_rank_or_the_hidden_layer():
    model = P.ModelParams(rank=2, hidden=7)
    assert [study.width(k, model) for k in ("linear", "lowrank", "mlp")] == [2, 2, 7]


def test_real_coupled_classes_are_fitted_per_label_subset():
    d, t = _params()
    real = d.real.model_copy(update={"models": ["linear", "mlp"], "splits": 1})
    table = data.load_multi_digits(700, 3, np.random.default_rng(0))
    index = study.real_splits(table, real, seed=0)
    model = P.ModelParams(rank=2, hidden=3)
    fits = study.fit_real(table, index, real, model, t, seed=0)
    keys = list(fits["params"])
    mlp = [k for k in keys if "/mlp/" in k]
    # per n: 3 random subsets of c = 2 plus the one of all usable labels, x 2 losses; linear: 1 per loss
    assert len(mlp) == 2 * 2 * 4 and len(keys) - len(mlp) == 2 * 2
    assert len({k for k in mlp if k.endswith("/s2")}) == 2 * 2  # the third subset of c = 2
    gaps = study.measure_real(table, index, fits, real, t)
    for kind in ("linear", "mlp"):
        g = gaps[gaps.model == kind]
        assert len(g) == 2 * 2 * 4  # one row per (n, loss, subset) for both classes
        assert set(g[g.c == 2].c_used) == {2}
    again = study.fit_real(table, index, real, model, t, seed=0)
    for key in mlp[:3]:
        np.testing.assert_array_equal(fits["params"][key]["V"], again["params"][key]["V"])
    one = fits["params"][next(k for k in mlp if "/squared/100/2/s0" in k)]
    assert one["B"].shape == (3, 2)  # a coupled fit sees only its subset's labels


def test_rademacher_table_has_every_quantity():
    d, t = _params()
    pools = study.synthetic_pools(d, seed=0)
    rad = P.RademacherParams(mc_draws=10, sign_draws=1, restarts=2, ascent_steps=5, n=[20, 40],
                             c=[2, 6], losses=["squared"], models=["linear", "lowrank"])  # fmt: skip
    table = study.rademacher_study(pools, d, P.ModelParams(rank=2), rad, t, seed=0)
    counts = table.quantity.value_counts().to_dict()
    # per-label: 2 n; flattened: 2 n x 2 c (decoupled closed form) + 2 x 2 (low-rank ascent);
    # loss class: 2 n x 2 c x 2 classes; local: 2 n of the low-d block
    assert counts == {"per_label": 2, "flattened": 8, "loss_class": 8, "local_fixed_point": 2}
    assert (table[table.quantity == "loss_class"].value > 0).all()
    off = study.rademacher_study(pools, d, P.ModelParams(rank=2), rad.model_copy(update={"enabled": False}),
                                 t, seed=0)  # fmt: skip
    assert off.empty


def test_rademacher_rows_are_the_named_estimators_on_the_named_data():
    from paper_pipelines.common.runtime import substream_seed
    from paper_pipelines.pipelines.multilabel_bounds import rademacher

    d, t = _params()
    pools = study.synthetic_pools(d, seed=0)
    rad = P.RademacherParams(mc_draws=50, sign_draws=1, restarts=2, ascent_steps=4, n=[20, 40],
                             c=[2, 6], losses=["squared"], models=["linear", "lowrank"])  # fmt: skip
    table = study.rademacher_study(pools, d, P.ModelParams(rank=2), rad, t, seed=0)
    pool, lam = pools["low_d"][0], d.low_d.Lambda
    per = table[table.quantity == "per_label"]
    assert set(per.c) == {1} and set(per.block) == {"low_d"} and set(per.model) == {"linear"}
    assert set(per.loss) == {""} and per.spread.isna().all()
    for _, row in per.iterrows():
        assert row["bound"] == pytest.approx(
            rademacher.linear_ball_bound(pool["X_train"][: row.n], lam)
        )
        assert row["value"] <= row["bound"]  # Jensen
    flat = table[(table.quantity == "flattened") & (table.model == "linear")]
    assert set(flat.c) == {2, 6}
    np.testing.assert_allclose(flat.c_times_value, flat.c * flat.value)
    # c times the flattened complexity is the sum of c per-label ones (in expectation; 50 draws)
    np.testing.assert_allclose(flat.per_label_sum, flat.c_times_value, rtol=0.15)
    np.testing.assert_allclose(table.sqrt_n_value, table.value * np.sqrt(table.n))
    # one loss-class row, recomputed: squared loss, eta = 0 labels, the row's own sub-stream
    row = table[(table.quantity == "loss_class") & (table.model == "linear") & (table.n == 20)
                & (table.c == 2)].iloc[0]  # fmt: skip
    x, y = pool["X_train"][:20], data.with_noise(pool, 0.0)["Y_train"][:20, :2]
    rng = np.random.default_rng(
        substream_seed(0, "rademacher", "ascent", "linear", "squared", 20, 2)
    )
    mean, std = rademacher.loss_class_complexity(
        x, y, "squared", "linear", lam, 2, 1, 2, 4, 0.1, rng
    )
    assert (row["value"], row["spread"], row["loss"]) == (
        pytest.approx(mean),
        pytest.approx(std),
        "squared",
    )
    # the low-rank flattened row: the identity loss, one sign per point, its own sub-stream
    row = table[(table.quantity == "flattened") & (table.model == "lowrank") & (table.n == 40)
                & (table.c == 6)].iloc[0]  # fmt: skip
    x, y = pool["X_train"][:40], pool["Y_train"][:40, :6]
    rng = np.random.default_rng(substream_seed(0, "rademacher", "flat", "lowrank", 40, 6))
    signs = rademacher.rademacher_signs(y.shape, rng)
    value = rademacher.ascent_sup(
        x, np.ones_like(y), signs, "identity", "lowrank", lam, 2, 4, 0.1, 2, rng
    )
    assert (
        row["value"] == pytest.approx(value) and row["spread"] == 0.0 and row["loss"] == "identity"
    )
    core = ["quantity", "block", "model", "loss", "n", "c", "value", "sqrt_n_value"]
    assert set(table.columns) == {*core, "spread", "bound", "c_times_value", "per_label_sum"}
    assert table[core].notna().all().all()
    local = table[table.quantity == "local_fixed_point"]
    assert set(local.c) == {1} and set(local.model) == {"linear"} and set(local.loss) == {""}
    assert list(local.n) == [20, 40] and set(local.block) == {"low_d"} and local.spread.isna().all()
    for _, row in local.iterrows():
        eig = rademacher.gram_eigenvalues(pool["X_train"][: row.n])
        assert row["value"] == pytest.approx(rademacher.fixed_point(eig, lam, row.n))
    no_ascent = study.rademacher_study(pools, d, P.ModelParams(rank=2),
                                       rad.model_copy(update={"sign_draws": 0}), t, seed=0)  # fmt: skip
    assert set(no_ascent.quantity) == {"per_label", "flattened", "local_fixed_point"}
    off = study.rademacher_study(pools, d, P.ModelParams(rank=2),
                                 rad.model_copy(update={"enabled": False}), t, seed=0)  # fmt: skip
    assert list(off.columns) == ["quantity", "block", "model", "loss", "n", "c", "value", "spread",
                                 "sqrt_n_value"]  # fmt: skip


def test_anchor_comparison_matches_sklearn_on_a_small_problem():
    rng = np.random.default_rng(0)
    x = np.hstack([rng.standard_normal((300, 5)), np.ones((300, 1))]) / np.sqrt(6)
    y = np.where(
        x @ rng.standard_normal((6, 3)) + 0.3 * rng.standard_normal((300, 3)) > 0, 1.0, -1.0
    )
    anchors = P.AnchorParams(n=200)
    table = baselines.anchor_comparison(x[:200], y[:200], x[200:], y[200:], anchors, 600, 0.1, 0)
    by = table.set_index("method")
    assert list(by.index) == [
        "sklearn_logistic", "ours_logistic", "sklearn_ridge", "ours_squared", "sklearn_svc", "ours_hinge",
    ]  # fmt: skip
    assert (
        abs(by.loc["ours_logistic", "test_hamming"] - by.loc["sklearn_logistic", "test_hamming"])
        <= 0.02
    )
    assert (
        abs(by.loc["ours_squared", "train_hamming"] - by.loc["sklearn_ridge", "train_hamming"])
        <= 0.02
    )
    # matched radius: our weights have the sklearn norms (the constraint binds)
    assert by.loc["ours_squared", "mean_weight_norm"] == pytest.approx(
        by.loc["sklearn_ridge", "mean_weight_norm"], rel=1e-3
    )
    assert by.loc["sklearn_logistic", "strength"] == pytest.approx(0.1 * 6)
    assert by.loc["sklearn_ridge", "strength"] == pytest.approx(10.0 / 6)


def test_sklearn_multilabel_pool_is_unit_norm_with_bias():
    pool = data.sklearn_multilabel_pool(100, 200, 8, 5, seed=0)
    assert pool["X_train"].shape == (100, 9) and pool["Y_test"].shape == (200, 5)
    np.testing.assert_allclose(np.linalg.norm(pool["X_test"], axis=1), 1.0)
    assert set(np.unique(pool["Y_train"])) == {-1.0, 1.0}
    assert isinstance(pool, dict) and not isinstance(pool, pd.DataFrame)
