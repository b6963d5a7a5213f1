"""The optimisation problem that supplies a real loss curve: sklearn digits, a small torch model, Adam.

Every iteration k uses B tasks, each the gradient on ``samples_per_task`` random training samples at the
same point x_k; the step is Adam on their mean (Sec. 5 of the paper: minibatch SGD-type methods with a
constant step). Which worker computed a gradient does not change it, so the trajectory is the same for every
allocation policy with a fixed seed (common random numbers): we compute it once and attach each policy's
time stamps afterwards.
"""

from __future__ import annotations

import logging

import numpy as np
import pandas as pd
import torch
from torch import nn

logger = logging.getLogger(__name__)

MODELS = ("mlp", "cnn")


def load_digits_frame() -> pd.DataFrame:
    """sklearn's digits (1797 x 64 pixels, 10 classes; shipped inside the wheel, no download)."""
    from sklearn.datasets import load_digits

    digits = load_digits()
    frame = pd.DataFrame(digits.data, columns=[f"pixel_{j}" for j in range(digits.data.shape[1])])
    frame["label"] = digits.target.astype(np.int64)
    return frame


def split_and_scale(frame: pd.DataFrame, holdout_frac: float, seed: int) -> dict[str, np.ndarray]:
    """Stratified train/holdout split, features standardised with the training statistics."""
    from sklearn.model_selection import train_test_split

    if "label" not in frame.columns or frame.shape[1] < 2:
        raise ValueError(
            f"the data must have a 'label' column and features, got {list(frame.columns)}"
        )
    X = frame.drop(columns="label").to_numpy(np.float32)
    y = frame["label"].to_numpy(np.int64)
    X_tr, X_ho, y_tr, y_ho = train_test_split(
        X, y, test_size=holdout_frac, random_state=seed, stratify=y
    )
    mean, std = X_tr.mean(axis=0), X_tr.std(axis=0)
    std = np.where(std > 0, std, 1.0).astype(np.float32)
    return {
        "X_train": (X_tr - mean) / std,
        "y_train": y_tr,
        "X_holdout": (X_ho - mean) / std,
        "y_holdout": y_ho,
    }


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
    progress_every = max(K // 10, 1)
    for k in range(1, K + 1):
        # B tasks of samples_per_task i.i.d. samples each, all at the same point x_k.
        idx = torch.as_tensor(rng.integers(0, X_tr.shape[0], size=batch), device=device)
        opt.zero_grad(set_to_none=True)
        nn.functional.cross_entropy(model(X_tr[idx]), y_tr[idx]).backward()
        opt.step()
        if k % log_every == 0 or k == K:
            log(k)
        if k % progress_every == 0:
            logger.info(
                "ATA optimisation: step %d / %d, train loss %.4f", k, K, rows[-1]["train_loss"]
            )
    return pd.DataFrame(rows), model.cpu()
