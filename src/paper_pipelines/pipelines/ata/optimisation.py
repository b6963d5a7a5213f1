"""The optimisation problem that supplies a real loss curve: sklearn digits, a small torch model, Adam.

Every iteration k uses B tasks, each the gradient on ``samples_per_task`` random training samples at the
same point x_k; the step is Adam on their mean (Sec. 5 of the paper: minibatch SGD-type methods with a
constant step). Which worker computed a gradient does not change it, so the trajectory is the same for every
allocation policy with a fixed seed (common random numbers): we compute it once and attach each policy's
time stamps afterwards.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch
from torch import nn

from paper_pipelines.common.progress import progress

MODELS = ("mlp", "cnn")


def build_model(kind: str, in_features: int, hidden: int, n_classes: int) -> nn.Module:
    """``mlp``: in-hidden-ReLU-classes. ``cnn``: 3 conv + 2 fully connected layers (the paper's shape)
    on square single-channel images (digits are 8 x 8)."""
    if kind == "mlp":
        return nn.Sequential(
            nn.Linear(in_features, hidden), nn.ReLU(), nn.Linear(hidden, n_classes)
        )
    if kind == "cnn":
        side = int(round(in_features**0.5))
        if side * side != in_features or side < 4:
            raise ValueError(
                f"model cnn needs square images with side >= 4, got {in_features} features"
            )
        return nn.Sequential(
            nn.Unflatten(1, (1, side, side)),
            nn.Conv2d(1, 16, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(32, 32, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Flatten(),
            nn.Linear(32 * (side // 4) ** 2, hidden),
            nn.ReLU(),
            nn.Linear(hidden, n_classes),
        )
    raise ValueError(f"unknown model {kind!r}; allowed: {', '.join(MODELS)}")


@torch.no_grad()
def _evaluate(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    logits = model(X)
    return float(nn.functional.cross_entropy(logits, y)), float(
        (logits.argmax(1) == y).float().mean()
    )


def train_trajectory(
    data: dict[str, np.ndarray],
    model_kind: str,
    hidden: int,
    lr: float,
    B: int,
    K: int,
    samples_per_task: int,
    log_every: int,
    seed: int,
    device: str = "cpu",
) -> tuple[pd.DataFrame, nn.Module]:
    """K Adam steps on the mean of B task gradients; returns the loss trajectory and the trained model.

    The trajectory has one row per logged iteration k (0, log_every, ..., K): full training loss and
    accuracy, holdout loss and accuracy.
    """
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    X_tr = torch.as_tensor(data["X_train"], device=device)
    y_tr = torch.as_tensor(data["y_train"], device=device)
    X_ho = torch.as_tensor(data["X_holdout"], device=device)
    y_ho = torch.as_tensor(data["y_holdout"], device=device)
    n_classes = int(max(data["y_train"].max(), data["y_holdout"].max(initial=0))) + 1
    model = build_model(model_kind, X_tr.shape[1], hidden, n_classes).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    batch = B * samples_per_task
    rows = []

    def log(k: int) -> None:
        train_loss, train_acc = _evaluate(model, X_tr, y_tr)
        ho_loss, ho_acc = _evaluate(model, X_ho, y_ho)
        rows.append(
            {
                "k": k,
                "train_loss": train_loss,
                "train_acc": train_acc,
                "holdout_loss": ho_loss,
                "holdout_acc": ho_acc,
            }
        )

    log(0)
    for k in progress(range(1, K + 1), desc="ATA optimisation (Adam steps)"):
        # B tasks of samples_per_task i.i.d. samples each, all at the same point x_k.
        idx = torch.as_tensor(rng.integers(0, X_tr.shape[0], size=batch), device=device)
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(X_tr[idx]), y_tr[idx]).backward()
        opt.step()
        if k % log_every == 0 or k == K:
            log(k)
    return pd.DataFrame(rows), model.cpu()
