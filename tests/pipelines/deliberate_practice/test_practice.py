"""The DP loop: plateau rule, sample budget, rounds, and the pool's bookkeeping (scripted learners)."""

import io
import logging

import numpy as np
import pytest

from paper_pipelines.pipelines.deliberate_practice import practice


def test_plateau_after_patience_evaluations_without_a_new_best():
    d = practice.PlateauDetector(3)
    assert [d.update(v) for v in [0.5, 0.6, 0.6, 0.55, 0.59]] == [False, False, False, False, True]
    assert d.best == 0.6 and d.wait == 3
    d.reset()
    assert d.best == -np.inf and d.wait == 0
    assert d.update(0.1) is False
    one = practice.PlateauDetector(1)
    assert one.update(0.5) is False and one.update(0.5) is True


def test_next_round_size_respects_the_sample_budget():
    assert practice.next_round_size(800, 200, 1000) == 200
    assert practice.next_round_size(900, 200, 1000) == 100
    assert practice.next_round_size(1000, 200, 1000) == 0
    assert practice.next_round_size(1100, 200, 1000) == 0


def test_class_balanced_labels_cycle_from_the_offset():
    assert practice.class_balanced_labels(5, 3).tolist() == [0, 1, 2, 0, 1]
    assert practice.class_balanced_labels(5, 3, offset=2).tolist() == [2, 0, 1, 2, 0]
    assert practice.class_balanced_labels(4, 10).dtype == np.int64


def test_pool_keeps_round_and_entropy_of_each_sample():
    pool = practice.Pool()
    pool.add(np.zeros((2, 1)), np.array([0, 1]), 0, [0.1, 0.2])
    pool.add(np.ones((1, 1)), np.array([2]), 3, [0.9])
    arrays = pool.arrays()
    assert len(pool) == 3
    assert arrays["round"].tolist() == [0, 0, 3]
    assert arrays["y"].tolist() == [0, 1, 2]
    assert np.allclose(arrays["entropy_at_generation"], [0.1, 0.2, 0.9])
    assert arrays["x"][:, 0].tolist() == [0, 0, 1]


class FakeTrainer:
    def __init__(self):
        self.iterations = 0
        self.pool_sizes = []

    def train_steps(self, x, y, steps):
        self.iterations += steps
        self.pool_sizes.append(len(y))
        return 0.0


def _run(val_curve, **loop):
    trainer = FakeTrainer()
    calls = []

    def generate(n, offset, round_, current):
        calls.append((n, offset, round_, current is trainer))
        labels = practice.class_balanced_labels(n, 10, offset)
        return np.zeros((n, 1, 2, 2), np.float32), labels, np.full(n, float(round_))

    values = iter(val_curve)

    def evaluate(_):
        v = next(values)
        return {"val_acc": v, "test_acc": v, "ood_acc": v}

    settings = dict(n0=20, delta_n=10, eval_every=50, patience=2, max_iters=500, max_samples=45)
    settings.update(loop)
    pool, records = practice.deliberate_practice(trainer, generate, evaluate, **settings)
    return trainer, calls, pool, records


def test_loop_generates_on_each_plateau_until_the_sample_budget():
    # a flat validation curve plateaus every `patience` evaluations after a reset (the first sets best)
    trainer, calls, pool, records = _run([0.5] * 10)
    assert calls[0] == (20, 0, 0, False)  # unguided initial set, no learner
    assert calls[1:] == [(10, 20, 1, True), (10, 30, 2, True), (5, 40, 3, True)]
    assert [r["iteration"] for r in records] == list(range(50, 501, 50))
    assert [r["generation_round"] for r in records] == [0, 0, 1, 0, 0, 2, 0, 0, 3, 0]
    assert len(pool) == 45 and records[-1]["generated"] == 45
    assert trainer.iterations == 500
    # the learner trains on the grown pool right after each round
    assert trainer.pool_sizes == [20, 20, 20, 30, 30, 30, 40, 40, 40, 45]
    assert pool.arrays()["round"].tolist() == [0] * 20 + [1] * 10 + [2] * 10 + [3] * 5


def test_loop_does_not_generate_while_validation_improves():
    trainer, calls, pool, records = _run([0.1 * k for k in range(1, 11)])
    assert len(calls) == 1 and len(pool) == 20
    assert all(r["pool_size"] == 20 for r in records)


def test_loop_stops_at_the_iteration_budget_even_mid_interval():
    trainer, calls, pool, records = _run([0.5] * 3, max_iters=120)
    assert [r["iteration"] for r in records] == [50, 100, 120]
    # the plateau at the last evaluation does not generate: no iterations are left to use the samples
    assert len(calls) == 1


def test_loop_with_patience_one_generates_after_every_repeat():
    trainer, calls, pool, records = _run([0.5] * 4, patience=1, max_iters=200, max_samples=1000)
    # e1 sets the best, e2 repeats it (round 1), e3 sets a new best, e4 repeats at the budget's end
    assert [c[2] for c in calls] == [0, 1]
    assert [r["generation_round"] for r in records] == [0, 1, 0, 0]


@pytest.mark.parametrize("n0", [20, 45])
def test_records_carry_pool_size_and_accuracies(n0):
    _, _, pool, records = _run([0.5] * 10, n0=n0)
    assert {"iteration", "pool_size", "generated", "val_acc", "test_acc", "ood_acc"} <= set(
        records[0]
    )
    assert records[0]["pool_size"] == n0


def test_evaluate_judges_the_trainer_after_each_interval():
    trainer = FakeTrainer()
    seen = []

    def generate(n, offset, round_, current):
        return np.zeros((n, 1, 2, 2), np.float32), np.zeros(n, np.int64), np.zeros(n)

    def evaluate(current):
        seen.append((current is trainer, current.iterations))
        return {"val_acc": 0.1 * len(seen)}

    practice.deliberate_practice(trainer, generate, evaluate, 4, 2, 50, 2, 120, 10)
    assert seen == [(True, 50), (True, 100), (True, 120)]


def test_pool_stores_rounds_as_int64_and_entropies_as_float32():
    pool = practice.Pool()
    pool.add(np.zeros((2, 1)), np.array([0, 1]), np.int32(2), np.array([0.25, 0.5]))
    arrays = pool.arrays()
    assert arrays["round"].dtype == np.int64 and arrays["round"].tolist() == [2, 2]
    assert arrays["entropy_at_generation"].dtype == np.float32


def test_a_last_round_of_one_sample_is_generated():
    _, calls, pool, _ = _run([0.5] * 4, max_iters=200, max_samples=21)
    assert [c[:3] for c in calls] == [(20, 0, 0), (1, 20, 1)] and len(pool) == 21


def test_loop_logs_its_progress_and_each_round(caplog, monkeypatch):
    monkeypatch.setattr("sys.stderr", io.StringIO())  # not a terminal: progress goes to the log
    with caplog.at_level(logging.INFO, logger=practice.__name__):
        _run([0.5] * 4, max_iters=200, max_samples=30)
    lines = [r.getMessage() for r in caplog.records if r.name == practice.__name__]
    assert "plateau at iteration 150: round 1 added 10 guided samples (pool 30)" in lines
    assert lines[-1].startswith("deliberate practice: 4 done in ")


def test_no_empty_round_once_the_sample_budget_is_spent():
    _, calls, pool, records = _run([0.5] * 10, max_samples=30)
    assert [c[:3] for c in calls] == [(20, 0, 0), (10, 20, 1)] and len(pool) == 30
    assert [r["generation_round"] for r in records] == [0, 0, 1] + [0] * 7
