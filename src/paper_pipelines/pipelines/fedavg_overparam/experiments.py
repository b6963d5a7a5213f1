"""The two experiments at one width: FedAvg on each client split and its centralised twin, run in lock
step from one initialisation, with every quantity the paper's predictions name measured along the way.

Exp. A (kernel regime, the paper's mini-MNIST runs; predictions P1-P5): relative change of the global and of
client 0's local NTK, parameter change, linearisation error of the global and local models, FedAvg against
centralised GD. Exp. B (heterogeneity, Fig. 1; P6): test accuracy and loss of IID and non-IID FedAvg and of
centralised GD.
"""

from __future__ import annotations

import logging
import math
from typing import Any

import numpy as np
import pandas as pd
import torch
from torch import nn

from paper_pipelines.common.progress import progress

from .fedavg import (
    Schedule,
    fedavg_round,
    local_update,
    loss_value,
    model_divergence,
    predicted_labels,
)
from .ntk import (
    empirical_ntk,
    flat_parameters,
    linearised_outputs,
    load_flat_parameters,
    relative_kernel_change,
)

logger = logging.getLogger(__name__)


def experiment_tensors(
    images: dict[str, Any],
    splits: pd.DataFrame,
    experiment: str,
    classes: list[int] | None = None,
    device: str = "cpu",
) -> dict[str, Any]:
    """Pooled train / test tensors and each split's clients [(x_i, y_i)] of one experiment.

    Exp. A relabels ``classes`` to 0, 1, ... (a scalar 0/1 target for two classes). The pooled training
    set (the centralised twin's data) is the non-IID split's rows, client by client.
    """
    rows = splits[splits.experiment == experiment]
    y_all = images["y"]
    if classes is not None:
        lookup = np.full(max(int(y_all.max()), max(classes)) + 1, -1)
        lookup[list(classes)] = np.arange(len(classes))
        y_all = lookup[y_all]

    def tensors(samples: np.ndarray) -> tuple[torch.Tensor, torch.Tensor]:
        x = torch.as_tensor(images["x"][samples], device=device)
        return x, torch.as_tensor(y_all[samples], device=device)

    out: dict[str, Any] = {"clients": {}}
    for split in ("noniid", "iid"):
        part = rows[(rows.split == split) & (rows.role == "train")].sort_values(
            ["client", "sample"], kind="stable"
        )
        out["clients"][split] = [
            tensors(group["sample"].to_numpy()) for _, group in part.groupby("client", sort=True)
        ]
        if split == "noniid":
            out["x_train"], out["y_train"] = tensors(part["sample"].to_numpy())
    out["x_test"], out["y_test"] = tensors(rows[rows.role == "test"]["sample"].to_numpy())
    return out


def schedule_of(block) -> Schedule:
    """The fedavg.Schedule of a kernel_regime / heterogeneity parameter block."""
    return Schedule(
        lr=block.lr,
        tau=block.tau,
        loss=block.loss,
        optimizer=block.optimizer,
        batch_size=block.batch_size,
        weight_decay=block.weight_decay,
        weighted=block.aggregate == "weighted",
    )


def rmse(a: torch.Tensor, b: torch.Tensor) -> float:
    """Root mean squared difference over every entry (outputs or parameters)."""
    return float(torch.sqrt(torch.mean((a - b) ** 2)))


@torch.no_grad()
def _evaluate(
    model: nn.Module, theta: torch.Tensor, x, y, loss: str
) -> tuple[torch.Tensor, float, float]:
    load_flat_parameters(model, theta)
    out = model(x)
    accuracy = float((predicted_labels(out, loss) == y).float().mean())
    return out, float(loss_value(out, y, loss)), accuracy


def kernel_regime_run(
    model: nn.Module,
    data: dict[str, Any],
    block,
    ntk_rows: np.ndarray,
    splits: list[str],
    generator: torch.Generator,
    label: str = "",
) -> dict[str, Any]:
    """Exp. A at one width: FedAvg on ``splits`` and centralised GD from theta_0, every round of ``block``.

    Every round records train/test loss and accuracy; every ``block.ntk_every`` rounds (and the last) also
    the relative global NTK change, client 0's local NTK change after its tau local epochs, the parameter
    change (RMSE and l2), the linearisation RMSE on the training set of the global model and of client 0's
    local model, FedAvg-vs-central test-output RMSE, and the model divergence.
    """
    schedule = schedule_of(block)
    theta_0 = flat_parameters(model)
    n_params = theta_0.numel()
    x_tr, y_tr, x_te, y_te = data["x_train"], data["y_train"], data["x_test"], data["y_test"]
    x_ntk = x_tr[torch.as_tensor(ntk_rows)]
    kernel_0 = empirical_ntk(model, theta_0, x_ntk)
    names = [f"fedavg_{s}" for s in splits] + ["centralised"]
    theta = dict.fromkeys(names, theta_0)
    trace: dict[str, Any] = {
        "n_params": n_params,
        "rounds": [],
        "measure_rounds": [],
        **{n: {"train_loss": [], "test_loss": [], "test_acc": [], "measures": []} for n in names},
    }

    def record(r: int, local: dict[str, list]) -> None:
        trace["rounds"].append(r)
        outs = {}
        for name in names:
            _, train_loss, _ = _evaluate(model, theta[name], x_tr, y_tr, schedule.loss)
            outs[name], test_loss, test_acc = _evaluate(
                model, theta[name], x_te, y_te, schedule.loss
            )
            trace[name]["train_loss"].append(train_loss)
            trace[name]["test_loss"].append(test_loss)
            trace[name]["test_acc"].append(test_acc)
        if r % block.ntk_every and r != block.rounds:
            return
        trace["measure_rounds"].append(r)
        for name in names:
            th = theta[name]
            with torch.no_grad():
                load_flat_parameters(model, th)
                f_train = model(x_tr)
            m = {
                "ntk_change": relative_kernel_change(empirical_ntk(model, th, x_ntk), kernel_0),
                "weight_rmse": math.sqrt(float(torch.sum((th - theta_0) ** 2)) / n_params),
                "weight_l2": float(torch.linalg.norm(th - theta_0)),
                "linearisation_rmse": rmse(f_train, linearised_outputs(model, theta_0, th, x_tr)),
                "fed_central_rmse": rmse(outs[name], outs["centralised"]),
            }
            if name in local and local[name]:
                client_0 = local[name][0]
                with torch.no_grad():
                    load_flat_parameters(model, client_0)
                    f_local = model(x_tr)
                m["local_ntk_change"] = relative_kernel_change(
                    empirical_ntk(model, client_0, x_ntk), kernel_0
                )
                m["local_linearisation_rmse"] = rmse(
                    f_local, linearised_outputs(model, theta_0, client_0, x_tr)
                )
                sizes = [len(x) for x, _ in data["clients"][name.removeprefix("fedavg_")]]
                m["divergence"] = model_divergence(local[name], th, sizes, schedule.weighted)
            trace[name]["measures"].append(m)

    record(0, {})
    for r in progress(range(1, block.rounds + 1), desc=f"kernel regime {label}", logger=logger):
        local = {}
        for split in splits:
            name = f"fedavg_{split}"
            theta[name], local[name] = fedavg_round(
                model, theta[name], data["clients"][split], schedule, generator
            )
        theta["centralised"] = local_update(
            model, theta["centralised"], x_tr, y_tr, schedule, generator
        )
        record(r, local)
    return trace


def heterogeneity_run(
    model: nn.Module, data: dict[str, Any], block, generator: torch.Generator, label: str = ""
) -> dict[str, Any]:
    """Exp. B at one width: IID and non-IID FedAvg and centralised GD from theta_0; test accuracy and
    loss, training loss every ``block.eval_every`` rounds (and the last)."""
    schedule = schedule_of(block)
    theta_0 = flat_parameters(model)
    names = ["fedavg_iid", "fedavg_noniid", "centralised"]
    theta = dict.fromkeys(names, theta_0)
    trace: dict[str, Any] = {
        "n_params": theta_0.numel(),
        "rounds": [],
        **{n: {"train_loss": [], "test_loss": [], "test_acc": [], "divergence": []} for n in names},
    }
    x_tr, y_tr, x_te, y_te = data["x_train"], data["y_train"], data["x_test"], data["y_test"]

    def record(r: int, local: dict[str, list]) -> None:
        trace["rounds"].append(r)
        for name in names:
            _, train_loss, _ = _evaluate(model, theta[name], x_tr, y_tr, schedule.loss)
            _, test_loss, test_acc = _evaluate(model, theta[name], x_te, y_te, schedule.loss)
            trace[name]["train_loss"].append(train_loss)
            trace[name]["test_loss"].append(test_loss)
            trace[name]["test_acc"].append(test_acc)
            if name in local:
                sizes = [len(x) for x, _ in data["clients"][name.removeprefix("fedavg_")]]
                div = model_divergence(local[name], theta[name], sizes, schedule.weighted)
            else:
                div = None
            trace[name]["divergence"].append(div)

    record(0, {})
    for r in progress(range(1, block.rounds + 1), desc=f"heterogeneity {label}", logger=logger):
        local = {}
        for split in ("iid", "noniid"):
            name = f"fedavg_{split}"
            theta[name], local[name] = fedavg_round(
                model, theta[name], data["clients"][split], schedule, generator
            )
        theta["centralised"] = local_update(
            model, theta["centralised"], x_tr, y_tr, schedule, generator
        )
        if r % block.eval_every == 0 or r == block.rounds:
            record(r, local)
    return trace
