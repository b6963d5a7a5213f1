"""The zoo runner against the per-task reference loop, and the evaluation's splits and strategy rows on
hand-made meta-datasets."""

import numpy as np
import pandas as pd
import pytest
import torch

from paper_pipelines.pipelines.ood_chameleon import evaluation, zoo
from paper_pipelines.pipelines.ood_chameleon.selector import FittedSelector, SelectorSettings


def _task(task_id: int, n: int, d: int = 3) -> dict:
    rng = np.random.default_rng(task_id)
    task = {"task_id": task_id}
    for split, size in (("tr", n), ("te", 24)):
        y = np.repeat([0, 0, 1, 1], [size // 2 - 2, 2, 3, size - size // 2 - 3])
        a = np.concatenate(
            [np.zeros(size // 2 - 2), np.ones(2), np.zeros(3), np.ones(size - size // 2 - 3)]
        )
        x = rng.normal(size=(size, d)).astype(np.float32)
        x[:, 0] += 1.5 * (2 * y - 1)
        x[:, 1] += 2 * a - 1
        task.update({f"x_{split}": x, f"y_{split}": y, f"a_{split}": a.astype(int)})
    return task


def seed_of(kind: str, repeat: int, task_id: int) -> int:
    return 1000 * repeat + 10 * task_id + (kind == "init")


def test_run_zoo_scores_every_task_algorithm_and_repeat_as_the_reference_loop():
    settings = zoo.HeadSettings(max_steps=20, check_every=5, tol=1e-4, lr=0.05)
    tasks = [_task(0, 40), _task(1, 28)]  # two buckets of n
    frame = zoo.run_zoo(tasks, list(zoo.ALGORITHMS), settings, repeats=2, seed_of=seed_of)
    assert list(frame.columns) == [
        "task_id", "algorithm", "repeat", "steps", "avg_tr_err", "avg_te_err", "wga_te_err",
    ]  # fmt: skip
    assert len(frame) == 2 * len(zoo.ALGORITHMS) * 2
    for task in tasks:
        x, y = task["x_tr"], task["y_tr"]
        g = 2 * y + task["a_tr"]
        g_te = 2 * task["y_te"] + task["a_te"]
        for r in range(2):
            rng = np.random.default_rng(seed_of("resample", r, task["task_id"]))
            gen = torch.Generator().manual_seed(seed_of("init", r, task["task_id"]))
            init = zoo.init_heads(1, x.shape[1], settings, gen)
            for algorithm in zoo.ALGORITHMS:
                idx = None
                if algorithm == "oversample":
                    idx = zoo.oversample_indices(g, rng)
                elif algorithm == "undersample":
                    idx = zoo.undersample_indices(g, rng)
                params, steps = zoo.train_head_reference(
                    x, y, g, algorithm, [p[0] for p in init], settings, idx
                )
                w = params[0].numpy()
                pred_tr = (x @ w > 0).astype(int)
                pred_te = (task["x_te"] @ w > 0).astype(int)
                train_w = (
                    np.full(len(y), 1 / len(y))
                    if idx is None
                    else np.bincount(idx, minlength=len(y)) / len(idx)
                )
                row = frame[
                    (frame.task_id == task["task_id"])
                    & (frame.algorithm == algorithm)
                    & (frame.repeat == r)
                ]
                assert len(row) == 1
                row = row.iloc[0]
                assert row.steps == steps
                assert row.avg_tr_err == pytest.approx(np.sum(train_w * (pred_tr != y)))
                assert row.avg_te_err == pytest.approx(np.mean(pred_te != task["y_te"]))
                assert row.wga_te_err == pytest.approx(
                    zoo.worst_group_error(pred_te, task["y_te"], g_te)
                )
    # the algorithms really differ, and so do the repeats
    first = frame[(frame.task_id == 0) & (frame.repeat == 0)]
    assert first.avg_tr_err.nunique() > 1
    assert not frame[frame.repeat == 0].avg_tr_err.equals(frame[frame.repeat == 1].avg_tr_err)


def test_random_split_holds_out_the_rounded_fraction_at_least_one():
    train, test = evaluation.random_split(np.arange(10, 20), 0.25, np.random.default_rng(0))
    assert len(test) == 2 and len(train) == 8  # round(2.5) = 2
    assert sorted(np.concatenate([train, test]).tolist()) == list(range(10, 20))
    assert list(train) == sorted(train) and list(test) == sorted(test)
    _, one = evaluation.random_split(np.arange(5), 0.01, np.random.default_rng(0))
    assert len(one) == 1


def test_transfer_split_fits_on_training_sources_and_tests_on_the_others():
    meta = pd.DataFrame({"task_id": range(10), "source": ["a"] * 4 + ["b"] * 4 + ["c"] * 2})
    fit, val, test = evaluation.transfer_split(
        meta, ["a", "b"], ["c"], 0.25, np.random.default_rng(0)
    )
    assert test.tolist() == [8, 9]
    assert len(val) == 2 and len(fit) == 6
    assert sorted(fit.tolist() + val.tolist()) == list(range(8))
    fit, val, test = evaluation.transfer_split(
        meta, ["a"], ["b", "c"], 0.0, np.random.default_rng(0)
    )
    assert fit.tolist() == [0, 1, 2, 3] and len(val) == 0 and test.tolist() == list(range(4, 10))


class _Fixed:
    """A stand-in selector that picks a given algorithm per task (the rows only call choose)."""

    features = ["f"]

    def __init__(self, picks):
        self.picks = np.asarray(picks)

    def choose(self, x):
        assert x.shape == (len(self.picks), 1)
        sets = np.eye(3, dtype=int)[self.picks]
        return sets.astype(float), sets


def test_strategy_rows_by_hand():
    algorithms = ["A", "B", "C"]
    errors = np.array([[0.1, 0.3, 0.5], [0.4, 0.2, 0.6]])
    winners = np.array([[1, 0, 0], [0, 1, 0]])
    meta_test = pd.DataFrame({"f": [0.0, 1.0]})
    for j, name in enumerate(algorithms):
        meta_test[f"err_{name}"] = errors[:, j]
        meta_test[f"win_{name}"] = winners[:, j]
    meta_fit = pd.DataFrame({"win_A": [0, 0, 1], "win_B": [1, 1, 0], "win_C": [0, 1, 0]})
    fitted = {"mlp": _Fixed([0, 2]), "tree": _Fixed([0, 1])}
    rows = {
        r["strategy"]: r
        for r in evaluation.strategy_rows(meta_fit, meta_test, fitted, algorithms, "mlp")
    }
    assert list(rows) == [
        "chameleon", "chameleon_tree", "A", "B", "C", "global_best", "global_best_topk", "random", "oracle",
    ]  # fmt: skip
    assert rows["chameleon"]["kind"] == "selector" and rows["A"]["kind"] == "fixed"
    assert rows["chameleon"]["wg_err"] == pytest.approx((0.1 + 0.6) / 2)
    assert rows["chameleon"]["soft01_acc"] == 0.5 and rows["chameleon"]["strict01_acc"] == 0.5
    assert (
        rows["chameleon_tree"]["wg_err"] == pytest.approx(0.15)
        and rows["chameleon_tree"]["strict01_acc"] == 1
    )
    assert [rows[a]["wg_err"] for a in algorithms] == pytest.approx([0.25, 0.25, 0.55])
    assert rows["A"]["soft01_acc"] == 0.5 and rows["C"]["soft01_acc"] == 0.0
    # B wins most often on the training tasks (2 of 3)
    assert (
        rows["global_best"]["wg_err"] == pytest.approx(0.25)
        and rows["global_best"]["kind"] == "heuristic"
    )
    assert rows["random"]["wg_err"] == pytest.approx(errors.mean())
    # one winner of three per task: mean over k of C(1, k) / C(3, k) = (1/3 + 0 + 0) / 3
    assert rows["random"]["soft01_acc"] == pytest.approx(1 / 9)
    assert np.isnan(rows["random"]["strict01_acc"])
    assert rows["oracle"]["wg_err"] == pytest.approx(0.15) and rows["oracle"]["soft01_acc"] == 1
    assert rows["oracle"]["kind"] == "oracle"


def test_fit_learners_fits_each_learner_on_the_same_tasks():
    rng = np.random.default_rng(0)
    meta = pd.DataFrame({"task_id": range(30), "sc": rng.uniform(size=30)})
    algorithms = ["ERM", "undersample"]
    meta["err_ERM"] = np.where(meta.sc > 0.5, 0.1, 0.4)
    meta["err_undersample"] = np.where(meta.sc > 0.5, 0.4, 0.1)
    meta["win_ERM"], meta["win_undersample"] = (
        (meta.sc > 0.5).astype(int),
        (meta.sc <= 0.5).astype(int),
    )
    fitted = evaluation.fit_learners(
        meta, ["sc"], algorithms, ["knn", "tree"], SelectorSettings(epochs=5), 0.05, seed=0
    )
    assert list(fitted) == ["knn", "tree"]
    assert all(isinstance(f, FittedSelector) for f in fitted.values())
    assert [f.learner for f in fitted.values()] == ["knn", "tree"]
    assert all(f.features == ["sc"] and f.margin == 0.05 for f in fitted.values())
