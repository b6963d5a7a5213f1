"""Selection baselines (official notebook ``predict_baseline`` and the paper's comparisons), each as the
probability of running every algorithm on every test task plus its predicted set (for soft 0-1)."""

from __future__ import annotations

from math import comb

import numpy as np


def fixed_algorithm(n_tasks: int, n_algorithms: int, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Always run algorithm j."""
    sets = np.zeros((n_tasks, n_algorithms), dtype=int)
    sets[:, j] = 1
    return sets.astype(float), sets


def oracle(errors: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The best algorithm of every test task in hindsight (a lower bound)."""
    sets = np.eye(errors.shape[1], dtype=int)[errors.argmin(1)]
    return sets.astype(float), sets


def random_selection(n_tasks: int, n_algorithms: int) -> np.ndarray:
    """A random non-empty subset, one member taken: each algorithm with probability 1/A (in expectation)."""
    return np.full((n_tasks, n_algorithms), 1.0 / n_algorithms)


def global_rank(train_winners: np.ndarray) -> np.ndarray:
    """How often each algorithm is a winner (within the margin) on the selector's training tasks."""
    return np.asarray(train_winners).sum(0)


def global_best(n_tasks: int, rank: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The single most frequent winner on the training tasks (ties: the first in the algorithm list)."""
    return fixed_algorithm(n_tasks, len(rank), int(np.argmax(rank)))


def global_best_topk(n_tasks: int, rank: np.ndarray) -> np.ndarray:
    """The notebook's global_best: k ~ U{1..A}, the k most frequent winners, one of them at random."""
    a = len(rank)
    order = np.argsort(rank, kind="stable")[::-1]
    probs = np.zeros(a)
    for k in range(1, a + 1):
        probs[order[:k]] += 1.0 / (a * k)
    return np.tile(probs, (n_tasks, 1))


def random_soft01(winners: np.ndarray) -> np.ndarray:
    """P(a random non-empty subset lies inside the winners): mean over k of C(w, k) / C(A, k)."""
    a = winners.shape[1]
    w = winners.sum(1)
    return np.array([np.mean([comb(int(wi), k) / comb(a, k) for k in range(1, a + 1)]) for wi in w])


def topk_soft01(winners: np.ndarray, rank: np.ndarray) -> np.ndarray:
    """P(the k most frequent winners, k ~ U{1..A}, all lie inside a task's winners)."""
    order = np.argsort(rank, kind="stable")[::-1]
    a = len(rank)
    return np.array([np.mean([row[order[:k]].all() for k in range(1, a + 1)]) for row in winners])
