"""How the selector is judged (Sec. 4): the tasks it is fit on, the tasks it is tested on, and the mean
worst-group error of the algorithm each strategy runs there, beside the baselines on the same tasks."""

from __future__ import annotations

import numpy as np
import pandas as pd

from . import baselines
from .metrics import selected_error, soft01_accuracy, strict01_accuracy
from .selector import FittedSelector, SelectorSettings, fit_selector


def random_split(task_ids: np.ndarray, test_frac: float, rng: np.random.Generator):
    """A random split of all tasks: (selector training tasks, held-out tasks)."""
    order = rng.permutation(np.asarray(task_ids))
    n_test = max(1, int(round(test_frac * len(order))))
    return np.sort(order[n_test:]), np.sort(order[:n_test])


def transfer_split(
    meta: pd.DataFrame,
    train_sources: list[str],
    test_sources: list[str],
    val_frac: float,
    rng: np.random.Generator,
):
    """Unseen datasets: fit on (1 - val_frac) of the training sources' tasks (the notebook's 80 %),
    hold out the rest of them (val), test on every task of the test sources."""
    pool = meta.loc[meta.source.isin(train_sources), "task_id"].to_numpy()
    fit, val = random_split(pool, val_frac, rng) if val_frac > 0 else (np.sort(pool), pool[:0])
    test = np.sort(meta.loc[meta.source.isin(test_sources), "task_id"].to_numpy())
    return fit, val, test


def fit_learners(
    meta_fit: pd.DataFrame,
    features: list[str],
    algorithms: list[str],
    learners: list[str],
    settings: SelectorSettings,
    margin: float,
    seed: int,
) -> dict[str, FittedSelector]:
    """Every learner on the same training tasks."""
    return {
        learner: fit_selector(meta_fit, features, algorithms, learner, settings, margin, seed)
        for learner in learners
    }


def strategy_rows(
    meta_fit: pd.DataFrame,
    meta_test: pd.DataFrame,
    fitted: dict[str, FittedSelector],
    algorithms: list[str],
    headline: str,
) -> list[dict]:
    """wg error, soft and strict 0-1 of every strategy on ``meta_test``: the learnt selectors
    (``chameleon`` = the headline learner), each fixed algorithm, random, global best, oracle."""
    errors = meta_test[[f"err_{a}" for a in algorithms]].to_numpy(float)
    winners = meta_test[[f"win_{a}" for a in algorithms]].to_numpy(int)
    train_winners = meta_fit[[f"win_{a}" for a in algorithms]].to_numpy(int)
    t, a = errors.shape
    rows = []

    def add(strategy, kind, probs, sets=None, soft=None):
        row = {"strategy": strategy, "kind": kind, "wg_err": selected_error(probs, errors)}
        row["soft01_acc"] = soft if soft is not None else soft01_accuracy(winners, sets)
        row["strict01_acc"] = strict01_accuracy(winners, sets) if sets is not None else np.nan
        rows.append(row)

    for learner, selector in fitted.items():
        probs, sets = selector.choose(meta_test[selector.features].to_numpy(float))
        name = "chameleon" if learner == headline else f"chameleon_{learner}"
        add(name, "selector", probs, sets)
    for j, algorithm in enumerate(algorithms):
        add(algorithm, "fixed", *baselines.fixed_algorithm(t, a, j))
    rank = baselines.global_rank(train_winners)
    add("global_best", "heuristic", *baselines.global_best(t, rank))
    add(
        "global_best_topk",
        "heuristic",
        baselines.global_best_topk(t, rank),
        soft=float(baselines.topk_soft01(winners, rank).mean()),
    )
    add(
        "random",
        "heuristic",
        baselines.random_selection(t, a),
        soft=float(baselines.random_soft01(winners).mean()),
    )
    add("oracle", "oracle", *baselines.oracle(errors))
    return rows
