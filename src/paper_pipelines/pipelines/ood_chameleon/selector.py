"""OOD-Chameleon proper (Sec. 3.4, official ``train_chameleon.ipynb`` / ``utils.py``): algorithm selection
learnt as multi-label classification over the candidates, from dataset descriptors only.

Meta-dataset: one row per task, X = its descriptors, Y = the multi-hot vector of every algorithm whose
worst-group error is within ``margin`` of the task's best (``get_gt_rank``). The selector (an MLP with
100 hidden ReLU units, or linear) is trained with BCE on Y, Adam lr 1e-3, weight decay 1e-4, full batch,
on descriptors standardised with a scaler fit on its own training tasks; on a new task it picks the
argmax of its sigmoid scores, without training any candidate there. Ablation learners: kNN (k = 5), a
depth-3 gini tree (its rules are the paper's readable decision rules) and the regression formulation
(predict each algorithm's error from [descriptors, algorithm index], pick the lowest).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

LEARNERS = ("mlp", "linear", "knn", "tree", "regression")


# ---------------------------------------------------------------- labels
def multi_hot_winners(errors: np.ndarray, margin: float) -> np.ndarray:
    """get_gt_rank: 1 for every algorithm with error <= min error + margin (rows = tasks)."""
    errors = np.atleast_2d(errors)
    return (errors <= errors.min(axis=1, keepdims=True) + margin + 1e-12).astype(int)


def build_meta_dataset(
    descriptors: pd.DataFrame,
    results: pd.DataFrame,
    algorithms: list[str],
    metric: str,
    margin: float,
) -> pd.DataFrame:
    """One row per task: its descriptors, err_<alg> (mean over zoo repeats) and win_<alg> (multi-hot)."""
    mean = results.groupby(["task_id", "algorithm"])[metric].mean().unstack("algorithm")
    errors = mean[algorithms].rename(columns=lambda a: f"err_{a}")
    winners = multi_hot_winners(errors.to_numpy(), margin)
    for j, algorithm in enumerate(algorithms):
        errors[f"win_{algorithm}"] = winners[:, j]
    return descriptors.merge(errors.reset_index(), on="task_id", validate="one_to_one")


# ---------------------------------------------------------------- learners
@dataclass
class SelectorSettings:
    hidden: int = 100
    epochs: int = 1000
    lr: float = 1e-3
    weight_decay: float = 1e-4
    knn_k: int = 5
    tree_depth: int = 3
    regression_alpha: float = 0.1


@dataclass
class FittedSelector:
    """A fitted learner with the scaler of its training tasks; ``choose`` returns (choice probs, sets)."""

    learner: str
    features: list[str]
    mean: np.ndarray
    scale: np.ndarray
    model: Any
    n_algorithms: int
    margin: float = 0.05
    extra: dict = field(default_factory=dict)

    def standardise(self, x: np.ndarray) -> np.ndarray:
        return (np.asarray(x, dtype=float) - self.mean) / self.scale

    def scores(self, x: np.ndarray) -> np.ndarray:
        """Sigmoid scores of the multi-label heads (mlp / linear)."""
        import torch

        with torch.no_grad():
            logits = self.model(torch.as_tensor(self.standardise(x), dtype=torch.float32))
        return torch.sigmoid(logits).numpy()

    def predicted_sets(self, x: np.ndarray) -> np.ndarray:
        """The multi-hot prediction of every task (one-hot argmax for the multi-label networks)."""
        a = self.n_algorithms
        if self.learner in ("mlp", "linear"):
            return np.eye(a, dtype=int)[self.scores(x).argmax(1)]
        if self.learner == "knn":
            return np.asarray(self.model.predict(self.standardise(x)), dtype=int)
        if self.learner == "tree":  # fit on raw descriptors: same splits, readable thresholds
            return np.asarray(self.model.predict(np.asarray(x, dtype=float)), dtype=int)
        rows = np.repeat(np.asarray(x, dtype=float), a, axis=0)
        rows = np.hstack([rows, np.tile(np.arange(a), len(x))[:, None]])
        predicted = self.model.predict(self.standardise(rows)).reshape(len(x), a)
        return multi_hot_winners(predicted, self.margin)

    def choose(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(probability of running each algorithm, predicted sets): a set's member is drawn at random
        (eval_wga_err), an empty set draws among all algorithms."""
        sets = self.predicted_sets(x)
        probs = np.where(sets.sum(1, keepdims=True) > 0, sets, 1).astype(float)
        return probs / probs.sum(1, keepdims=True), sets


def _network(kind: str, n_in: int, n_out: int, hidden: int):
    import torch.nn as nn

    if kind == "mlp":
        return nn.Sequential(nn.Linear(n_in, hidden), nn.ReLU(), nn.Linear(hidden, n_out))
    return nn.Linear(n_in, n_out)


def train_multilabel(
    x: np.ndarray, y: np.ndarray, kind: str, settings: SelectorSettings, seed: int
):
    """train_mlc: BCE-with-logits on the multi-hot targets, full-batch Adam with weight decay."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = _network(kind, x.shape[1], y.shape[1], settings.hidden)
    xt = torch.as_tensor(x, dtype=torch.float32)
    yt = torch.as_tensor(np.array(y), dtype=torch.float32)  # parquet arrays are read-only
    opt = torch.optim.Adam(net.parameters(), lr=settings.lr, weight_decay=settings.weight_decay)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    for _ in range(settings.epochs):
        opt.zero_grad()
        loss = loss_fn(net(xt), yt)
        loss.backward()
        opt.step()
    return net.eval()


def fit_selector(
    meta: pd.DataFrame,
    features: list[str],
    algorithms: list[str],
    learner: str,
    settings: SelectorSettings,
    margin: float,
    seed: int,
) -> FittedSelector:
    """Fit one learner on the meta-dataset rows ``meta`` (the selector's training tasks)."""
    x = meta[features].to_numpy(float)
    y = meta[[f"win_{a}" for a in algorithms]].to_numpy(int)
    mean, std = x.mean(0), x.std(0)
    scale = np.where(std > 0, std, 1.0)
    xs = (x - mean) / scale
    extra: dict = {}
    if learner in ("mlp", "linear"):
        model = train_multilabel(xs, y, learner, settings, seed)
    elif learner == "knn":
        from sklearn.neighbors import KNeighborsClassifier

        model = KNeighborsClassifier(n_neighbors=min(settings.knn_k, len(xs))).fit(xs, y)
    elif learner == "tree":
        from sklearn.tree import DecisionTreeClassifier

        model = DecisionTreeClassifier(
            criterion="gini", max_depth=settings.tree_depth, random_state=seed
        ).fit(x, y)
    elif learner == "regression":
        from sklearn.exceptions import ConvergenceWarning
        from sklearn.neural_network import MLPRegressor

        a = len(algorithms)
        rows = np.hstack([np.repeat(x, a, axis=0), np.tile(np.arange(a), len(x))[:, None]])
        errs = meta[[f"err_{alg}" for alg in algorithms]].to_numpy(float).reshape(-1)
        mean, std = rows.mean(0), rows.std(0)
        scale = np.where(std > 0, std, 1.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model = MLPRegressor(
                hidden_layer_sizes=(settings.hidden,),
                alpha=settings.regression_alpha,
                max_iter=settings.epochs,
                tol=1e-4,
                random_state=seed,
            ).fit((rows - mean) / scale, errs)
    else:
        raise ValueError(f"unknown learner {learner!r}; choose from {', '.join(LEARNERS)}")
    return FittedSelector(
        learner, list(features), mean, scale, model, len(algorithms), margin, extra
    )


def tree_leaf_sets(selector: FittedSelector, algorithms: list[str]) -> dict[int, list[str]]:
    """The algorithms a multi-output tree predicts at each leaf (every output whose class 1 wins)."""
    model, tree = selector.model, selector.model.tree_
    sets = {}
    for node in range(tree.node_count):
        if tree.children_left[node] == -1:
            sets[node] = [
                a for j, a in enumerate(algorithms)
                if model.classes_[j][int(np.argmax(tree.value[node][j][: len(model.classes_[j])]))] == 1
            ]  # fmt: skip
    return sets


def tree_rules(selector: FittedSelector, algorithms: list[str]) -> str:
    """The depth-3 tree's decision rules as text, each leaf naming the algorithms it picks."""
    tree = selector.model.tree_
    leaves = tree_leaf_sets(selector, algorithms)
    lines = ["predicted winners at each leaf (multi-hot over " + ", ".join(algorithms) + ")"]

    def walk(node: int, depth: int) -> None:
        pad = "|   " * depth + "|--- "
        if node in leaves:
            picked = ", ".join(leaves[node]) or "none (random pick)"
            lines.append(f"{pad}winners: {picked}  ({int(tree.n_node_samples[node])} tasks)")
            return
        name, threshold = selector.features[tree.feature[node]], tree.threshold[node]
        lines.append(f"{pad}{name} <= {threshold:.3f}")
        walk(tree.children_left[node], depth + 1)
        lines.append(f"{pad}{name} >  {threshold:.3f}")
        walk(tree.children_right[node], depth + 1)

    walk(0, 0)
    return "\n".join(lines) + "\n"


def tree_top_features(selector: FittedSelector) -> list[str]:
    """The features of the root split and of the two second-level splits (leaves skipped)."""
    tree = selector.model.tree_
    nodes = [0, tree.children_left[0], tree.children_right[0]]
    return [selector.features[tree.feature[i]] for i in nodes if i >= 0 and tree.feature[i] >= 0]
