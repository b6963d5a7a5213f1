"""Contracts of the optimiser anchors, the Adam step and the scikit-learn multilabel pool on tiny cases."""

import time

import numpy as np
import pytest
from scipy.optimize import brentq
from sklearn.datasets import make_multilabel_classification
from sklearn.metrics import roc_auc_score

from paper_pipelines.pipelines.multilabel_bounds import baselines, data, training
from paper_pipelines.pipelines.multilabel_bounds import parameters as P


def _adam_reference(value, grads, lr, sign=1.0):
    """Textbook Adam (Kingma & Ba) written out step by step: b1 = 0.9, b2 = 0.999, eps = 1e-8."""
    m = v = 0.0
    for t, g in enumerate(grads, start=1):
        g = sign * g
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        value = value - lr * (m / (1 - 0.9**t)) / (np.sqrt(v / (1 - 0.999**t)) + 1e-8)
    return value


def test_adam_first_step_moves_by_lr_against_the_gradient_sign():
    # bias correction makes the first step lr * g / (|g| + eps): -lr * sign(g) for |g| >> eps
    state: dict = {}
    out = training.adam_step({"W": np.array([1.0, 1.0])}, {"W": np.array([3.0, -0.5])}, state, 0.1)
    np.testing.assert_allclose(out["W"], [0.9, 1.1], rtol=1e-7)
    assert state["t"] == 1
    # sign = -1 ascends
    up = training.adam_step({"W": np.array([1.0])}, {"W": np.array([3.0])}, {}, 0.1, sign=-1.0)
    np.testing.assert_allclose(up["W"], [1.1], rtol=1e-7)


def test_adam_first_step_on_a_tiny_gradient_feels_eps():
    # |g| = 1e-7: the step is lr * 1e-7 / (1e-7 + 1e-8) = lr / 1.1
    out = training.adam_step({"W": np.array([0.0])}, {"W": np.array([1e-7])}, {}, 1.0)
    np.testing.assert_allclose(out["W"], [-1 / 1.1], rtol=1e-9)


def test_adam_three_steps_match_the_textbook_recursion():
    grads = [np.array([1.0, -2.0]), np.array([3.0, 0.5]), np.array([-0.2, 0.5])]
    for sign in (1.0, -1.0, 2.0):
        params, state = {"W": np.array([0.5, -0.5])}, {}
        for g in grads:
            params = training.adam_step(params, {"W": g}, state, 0.05, sign)
        assert state["t"] == 3
        expected = _adam_reference(np.array([0.5, -0.5]), grads, 0.05, sign)
        np.testing.assert_allclose(params["W"], expected, rtol=1e-10)
    # the default sign descends
    params, state = {"W": np.array([0.5, -0.5])}, {}
    for g in grads:
        params = training.adam_step(params, {"W": g}, state, 0.05)
    np.testing.assert_allclose(params["W"], _adam_reference(np.array([0.5, -0.5]), grads, 0.05))


def _two_label_problem():
    # label 0 is x_1 > 0, label 1 its opposite: the two weight columns must mirror each other
    x = np.array([[1.0, 0.2], [0.8, -0.4], [-1.0, 0.3], [-0.6, -0.1], [0.3, 1.0]])
    y = np.column_stack([np.where(x[:, 0] > 0, 1.0, -1.0), np.where(x[:, 0] > 0, -1.0, 1.0)])
    return x, y


def test_sklearn_ridge_weights_are_the_closed_form():
    x, y = _two_label_problem()
    for alpha in (0.05, 3.0):
        w = baselines.sklearn_weights("sklearn_ridge", x, y, alpha)
        expected = np.linalg.solve(x.T @ x + alpha * np.eye(2), x.T @ y)
        assert w.shape == (2, 2)
        np.testing.assert_allclose(w, expected, rtol=1e-8, atol=1e-10)


def test_sklearn_logistic_weights_solve_the_penalised_problem():
    # points +-1 with labels +-1: min 1/2 w^2 + C * 2 log(1 + e^-w), i.e. w = 2 C sigmoid(-w)
    x = np.array([[1.0], [-1.0]])
    y = np.array([[1.0, -1.0], [-1.0, 1.0]])
    for strength in (0.3, 4.0):
        w = baselines.sklearn_weights("sklearn_logistic", x, y, strength)
        root = brentq(lambda u, s=strength: u - 2 * s / (1 + np.exp(u)), 0.0, 10.0, xtol=1e-14)
        assert w.shape == (1, 2)
        np.testing.assert_allclose(w, [[root, -root]], rtol=1e-6)


def test_sklearn_svc_weights_solve_the_hinge_problem():
    # points +-1: min 1/2 w^2 + C * 2 max(0, 1 - w), i.e. w = min(1, 2 C) (squared hinge: 4C / (1 + 4C))
    x = np.array([[1.0], [-1.0]])
    y = np.array([[1.0, -1.0], [-1.0, 1.0]])
    w = baselines.sklearn_weights("sklearn_svc", x, y, 0.1)
    np.testing.assert_allclose(w, [[0.2, -0.2]], rtol=1e-3)
    w = baselines.sklearn_weights("sklearn_svc", x, y, 5.0)
    np.testing.assert_allclose(w, [[1.0, -1.0]], rtol=1e-3)


def test_sklearn_svc_has_no_intercept():
    # an intercept would absorb the shift of the asymmetric points; without one w solves 1/2 w^2 + C sum hinge
    x = np.array([[2.0], [1.0]])
    y = np.array([[1.0], [-1.0]])
    w = baselines.sklearn_weights("sklearn_svc", x, y, 0.1)
    # hinge terms: max(0, 1 - 2w) + max(0, 1 + w); at small C the minimiser is w = C (2 - 1) = 0.1
    np.testing.assert_allclose(w, [[0.1]], rtol=1e-3)


def _anchor_problem():
    rng = np.random.default_rng(1)
    x = np.hstack([rng.standard_normal((60, 3)), np.ones((60, 1))]) / 2.0
    y = np.where(
        x @ rng.standard_normal((4, 2)) + 0.5 * rng.standard_normal((60, 2)) > 0, 1.0, -1.0
    )
    return x[:40], y[:40], x[40:], y[40:]


def test_anchor_comparison_rows_report_their_own_measures():
    x_tr, y_tr, x_te, y_te = _anchor_problem()
    anchors = P.AnchorParams(n=40, logistic_C=0.2, ridge_alpha=2.0, svc_C=0.05)
    started = time.process_time()
    table = baselines.anchor_comparison(x_tr, y_tr, x_te, y_te, anchors, 20, 0.1, 0)
    elapsed = time.process_time() - started
    assert list(table.columns) == [
        "method", "loss", "anchor", "n", "c", "strength", "train_hamming", "test_hamming",
        "train_auc_loss", "test_auc_loss", "test_ranking", "seconds_per_label", "mean_weight_norm",
    ]  # fmt: skip
    assert list(table.loss) == ["logistic", "logistic", "squared", "squared", "hinge", "hinge"]
    assert (
        list(table.anchor) == ["sklearn_logistic"] * 2 + ["sklearn_ridge"] * 2 + ["sklearn_svc"] * 2
    )
    assert set(table.n) == {40} and set(table.c) == {2}
    by = table.set_index("method")
    assert by.loc["sklearn_svc", "strength"] == pytest.approx(0.05 * 4)
    assert by.loc["ours_hinge", "strength"] == pytest.approx(0.05 * 4)
    # the ridge row, recomputed from the closed form at alpha / s^2
    w = np.linalg.solve(x_tr.T @ x_tr + 0.5 * np.eye(4), x_tr.T @ y_tr)
    s_tr, s_te = x_tr @ w, x_te @ w
    ridge = by.loc["sklearn_ridge"]
    assert ridge["train_hamming"] == pytest.approx(np.mean(np.where(s_tr > 0, 1, -1) != y_tr))
    assert ridge["test_hamming"] == pytest.approx(np.mean(np.where(s_te > 0, 1, -1) != y_te))
    auc = [roc_auc_score(y_tr[:, j], s_tr[:, j]) for j in range(2)]
    assert ridge["train_auc_loss"] == pytest.approx(1 - np.mean(auc))
    auc = [roc_auc_score(y_te[:, j], s_te[:, j]) for j in range(2)]
    assert ridge["test_auc_loss"] == pytest.approx(1 - np.mean(auc))
    assert 0 <= ridge["test_ranking"] <= 1
    # mean of the per-label norms, not the Frobenius norm of W
    assert ridge["mean_weight_norm"] == pytest.approx(np.linalg.norm(w, axis=0).mean())
    for column in ("train_auc_loss", "test_auc_loss", "test_ranking"):
        assert ((table[column] >= 0) & (table[column] <= 1)).all()
    # CPU seconds per label: the six fits together took at most the call's time
    seconds = table.seconds_per_label.to_numpy(dtype=float)
    assert np.isfinite(seconds).all() and (seconds >= 0).all()
    assert seconds.sum() * 2 <= elapsed + 1e-6


def test_sklearn_multilabel_pool_follows_the_generator():
    pool = data.sklearn_multilabel_pool(200, 100, 6, 4, seed=3)
    again = data.sklearn_multilabel_pool(200, 100, 6, 4, seed=3)
    for key in pool:
        np.testing.assert_array_equal(pool[key], again[key])  # the seed fixes everything
    assert pool["W_star"].shape == (0, 0)  # no ground-truth weights for this pool
    assert pool["X_train"].shape == (200, 7) and pool["Y_train"].shape == (200, 4)
    assert pool["X_test"].shape == (100, 7) and pool["Y_test"].shape == (100, 4)
    # the spec's generator: bag-of-words counts, 2 labels on average, no unlabeled row
    counts, labels = make_multilabel_classification(
        n_samples=300, n_features=6, n_classes=4, n_labels=2, allow_unlabeled=False, random_state=3
    )
    x = np.vstack([pool["X_train"], pool["X_test"]])
    y = np.vstack([pool["Y_train"], pool["Y_test"]])
    np.testing.assert_array_equal(y, np.where(labels > 0, 1.0, -1.0))
    assert ((y > 0).sum(axis=1) >= 1).all()
    # E[k | 1 <= k <= 4] for k ~ Poisson(2) is 2.11
    assert abs((y > 0).sum(axis=1).mean() - 2.11) < 0.2
    # rows: the counts' direction, nonnegative, then the bias, all over sqrt(2)
    assert (x >= 0).all()
    np.testing.assert_allclose(x[:, -1], 1 / np.sqrt(2))
    direction = counts / np.linalg.norm(counts, axis=1, keepdims=True) / np.sqrt(2)
    np.testing.assert_allclose(x[:, :-1], direction, atol=1e-8)
    # the uniforms that drive the label noise: one per label entry, in [0, 1)
    for part in ("train", "test"):
        u = pool[f"U_{part}"]
        assert u.shape == pool[f"Y_{part}"].shape
        assert ((u >= 0) & (u < 1)).all() and u.std() > 0.2


def test_random_starts_have_per_label_norm_lam_below_one():
    # lam in (0, 1): a random point of F with ||w_j|| = lam exactly, also when the raw draw is short (d = 1)
    from paper_pipelines.pipelines.multilabel_bounds import hypothesis

    w = hypothesis.init_params("linear", 1, 30, 2, np.random.default_rng(0), lam=0.5)["W"]
    assert w.shape == (1, 30)
    np.testing.assert_allclose(np.abs(w), 0.5)
    assert (w > 0).any() and (w < 0).any()
    for kind in ("lowrank", "mlp"):
        p = hypothesis.init_params(kind, 4, 6, 3, np.random.default_rng(1), lam=0.5)
        assert p["B"].shape == (3, 6)
        np.testing.assert_allclose(np.linalg.norm(p["B"], axis=0), 0.5)
    p = hypothesis.init_params("lowrank", 4, 6, 3, np.random.default_rng(1), lam=0.5)
    np.testing.assert_allclose(p["A"].T @ p["A"], np.eye(3), atol=1e-12)
    p = hypothesis.init_params("mlp", 4, 6, 3, np.random.default_rng(1), lam=0.5)
    np.testing.assert_allclose(np.linalg.norm(p["V"], axis=0), 1.0)


def test_unknown_model_class_names_the_choices():
    from paper_pipelines.pipelines.multilabel_bounds import hypothesis

    with pytest.raises(ValueError, match="choose one of linear, lowrank, mlp"):
        hypothesis.init_params("tree", 3, 2, 1, np.random.default_rng(0))


def test_auc_is_nan_for_a_label_with_one_class_and_warns_nothing():
    import warnings

    from paper_pipelines.pipelines.multilabel_bounds import metrics

    scores = np.array([[0.1, 0.5, 0.3], [0.9, 0.2, 0.4], [0.4, 0.7, 0.8]])
    labels = np.array([[1.0, -1.0, 1.0], [1.0, -1.0, -1.0], [1.0, -1.0, 1.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 0 / 0 of an absent class must stay silent
        auc = metrics.auc_per_label(scores, labels)
    assert np.isnan(auc[0]) and np.isnan(auc[1])  # all positive; all negative
    # label 2: positives 0.3, 0.8 against the negative 0.4: one of two pairs ordered
    assert auc[2] == pytest.approx(0.5)


def test_ranking_loss_of_a_row_with_a_single_pair():
    from paper_pipelines.pipelines.multilabel_bounds import metrics

    # one relevant, one irrelevant label: the single pair is misordered (loss 1) or ordered (loss 0)
    assert metrics.ranking_loss(np.array([[0.0, 1.0]]), np.array([[1.0, -1.0]])) == 1.0
    assert metrics.ranking_loss(np.array([[1.0, 0.0]]), np.array([[1.0, -1.0]])) == 0.0
    assert metrics.ranking_loss(
        np.array([[0.0, 1.0], [0.2, 0.1]]), np.array([[1.0, -1.0], [1.0, -1.0]])
    ) == pytest.approx(0.5)


def test_spiked_linear_threshold_pool_puts_w_star_and_energy_on_the_informative_block():
    pool = data.linear_threshold_pool(300, 200, 10, 4, "spiked", 3, 0.9, 2, 0.3, 0.3,
                                      np.random.default_rng(0))  # fmt: skip
    w = pool["W_star"]
    assert w.shape == (11, 4)
    np.testing.assert_allclose(np.linalg.norm(w, axis=0), 1.0)
    assert (w[3:10] == 0).all() and (w[:3] != 0).all() and (w[10] != 0).all()
    x = pool["X_train"]
    share = (x[:, :3] ** 2).sum(axis=1) / (x[:, :10] ** 2).sum(axis=1)
    assert share.mean() > 0.8  # isotropic inputs would give about 3 / 10
    for part in ("train", "test"):
        y = pool[f"Y_{part}"]
        assert set(np.unique(y)) == {-1.0, 1.0}
        assert pool[f"U_{part}"].shape == y.shape
    # isotropic inputs: W* uses every row
    iso = data.linear_threshold_pool(50, 50, 10, 4, "isotropic", 3, 0.9, 2, 0.3, 0.3,
                                     np.random.default_rng(0))  # fmt: skip
    assert (iso["W_star"] != 0).all()
    share = (iso["X_train"][:, :3] ** 2).sum(axis=1) / (iso["X_train"][:, :10] ** 2).sum(axis=1)
    assert share.mean() < 0.5


def test_usable_labels_needs_both_classes_in_each_part(caplog):
    import logging

    # columns: fine; one training negative only; test part all negative; test part all positive
    y_train = np.array([[1, 1, 1, 1], [1, 1, 1, 1], [-1, 1, -1, -1], [-1, -1, -1, -1]], float)
    y_test = np.array([[1, 1, -1, 1], [-1, -1, -1, 1]], float)
    with caplog.at_level(logging.INFO):
        kept = data.usable_labels(y_train, y_test, 2, "toy")
    assert kept.tolist() == [0]
    assert (
        "toy: dropped labels [1, 2, 3] (fewer than 2 positives or negatives in the training part, or one "
        "class missing from the test part)"
    ) in caplog.text


def test_real_features_standardise_with_the_training_statistics():
    import pandas as pd

    table = pd.DataFrame(
        {"Att1": [1.0, 3.0, 5.0, 7.0, 9.0], "Att2": [2.0, 2.0, 8.0, 0.0, 4.0],
         "label_a": [1, 0, 1, 1, 0], "label_b": [0, 0, 1, 0, 1]}
    )  # fmt: skip
    x_tr, y_tr, x_te, y_te = data.real_features(table, np.array([0, 1, 2]), np.array([3, 4]))
    # training part: Att1 mean 3, std sqrt(8/3); Att2 mean 4, std sqrt(8); bias 1; all over sqrt(3)
    s1, s2 = np.sqrt(8 / 3), np.sqrt(8.0)
    expected_tr = np.array([[-2 / s1, -2 / s2, 1], [0, -2 / s2, 1], [2 / s1, 4 / s2, 1]]) / np.sqrt(
        3
    )
    np.testing.assert_allclose(x_tr, expected_tr)
    np.testing.assert_allclose(x_te, np.array([[4 / s1, -4 / s2, 1], [6 / s1, 0, 1]]) / np.sqrt(3))
    np.testing.assert_array_equal(y_tr, [[1, -1], [-1, -1], [1, 1]])
    np.testing.assert_array_equal(y_te, [[1, -1], [-1, 1]])
    assert x_tr.dtype == np.float64 and y_tr.dtype == np.float64
