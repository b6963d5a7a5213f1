"""The Deliberate Practice loop (Askari-Hemmat et al. 2025, Sec. 3): generate when learning plateaus.

1. D_0: N_0 class-balanced samples from plain (unguided CFG) sampling.
2. Train the learner on the pool only; every ``eval_every`` iterations measure accuracy on a real
   validation split (the plateau rule's only use of real data).
3. After ``patience`` evaluations without a new best, generate delta_N samples with entropy guidance
   from the current learner and append them to the pool (the ICML version accumulates).
4. Continue until the iteration budget; generation stops once ``max_samples`` are generated.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from paper_pipelines.common.progress import progress

logger = logging.getLogger(__name__)


class PlateauDetector:
    """Early-stopping style patience on validation accuracy, reset after every generation round."""

    def __init__(self, patience: int) -> None:
        self.patience = patience
        self.reset()

    def reset(self) -> None:
        self.best = -np.inf
        self.wait = 0

    def update(self, value: float) -> bool:
        """Record one evaluation; True once ``patience`` evaluations in a row did not beat the best."""
        if value > self.best:
            self.best, self.wait = value, 0
        else:
            self.wait += 1
        return self.wait >= self.patience


def next_round_size(generated: int, delta_n: int, max_samples: int) -> int:
    """Samples the next round may generate: delta_N, capped by what is left of the sample budget."""
    return max(0, min(delta_n, max_samples - generated))


def class_balanced_labels(n: int, num_classes: int, offset: int = 0) -> np.ndarray:
    """n labels cycling through the classes (starting at ``offset``), so every prefix is balanced."""
    return ((np.arange(n) + offset) % num_classes).astype(np.int64)


@dataclass
class Pool:
    """The synthetic pool: images, labels, generation round and learner entropy at generation time."""

    x: list[np.ndarray] = field(default_factory=list)
    y: list[np.ndarray] = field(default_factory=list)
    round: list[np.ndarray] = field(default_factory=list)
    entropy: list[np.ndarray] = field(default_factory=list)

    def add(self, x: np.ndarray, y: np.ndarray, round_: int, entropy: np.ndarray) -> None:
        self.x.append(x)
        self.y.append(y)
        self.round.append(np.full(len(y), round_, dtype=np.int64))
        self.entropy.append(np.asarray(entropy, dtype=np.float32))

    def arrays(self) -> dict[str, np.ndarray]:
        return {
            "x": np.concatenate(self.x),
            "y": np.concatenate(self.y),
            "round": np.concatenate(self.round),
            "entropy_at_generation": np.concatenate(self.entropy),
        }

    def __len__(self) -> int:
        return int(sum(len(y) for y in self.y))


# generate(n, labels offset, round, trainer or None) -> (images, labels, learner entropy per sample)
Generate = Callable[[int, int, int, object], tuple[np.ndarray, np.ndarray, np.ndarray]]
Evaluate = Callable[[object], dict[str, float]]


def deliberate_practice(
    trainer,
    generate: Generate,
    evaluate: Evaluate,
    n0: int,
    delta_n: int,
    eval_every: int,
    patience: int,
    max_iters: int,
    max_samples: int,
) -> tuple[Pool, list[dict]]:
    """Run the DP loop; returns the pool and one record per evaluation (iteration, pool size, accuracies)."""
    pool = Pool()
    x, y, h = generate(n0, 0, 0, None)
    pool.add(x, y, 0, h)
    generated, rounds = n0, 0
    detector = PlateauDetector(patience)
    px, py = torch.from_numpy(pool.arrays()["x"]), torch.from_numpy(pool.arrays()["y"])
    records: list[dict] = []
    evaluations = -(-max_iters // eval_every)
    for _ in progress(range(evaluations), "deliberate practice", logger=logger):
        trainer.train_steps(px, py, min(eval_every, max_iters - trainer.iterations))
        scores = evaluate(trainer)
        record = {"iteration": trainer.iterations, "pool_size": len(pool), "generated": generated}
        records.append({**record, **scores, "generation_round": 0})
        plateau = detector.update(scores["val_acc"])
        n_new = next_round_size(generated, delta_n, max_samples)
        if plateau and n_new > 0 and trainer.iterations < max_iters:
            rounds += 1
            x, y, h = generate(n_new, generated, rounds, trainer)
            pool.add(x, y, rounds, h)
            generated += n_new
            records[-1]["generation_round"] = rounds
            arrays = pool.arrays()
            px, py = torch.from_numpy(arrays["x"]), torch.from_numpy(arrays["y"])
            detector.reset()
            logger.info(
                "plateau at iteration %d: round %d added %d guided samples (pool %d)",
                trainer.iterations, rounds, n_new, len(pool),
            )  # fmt: skip
    return pool, records
