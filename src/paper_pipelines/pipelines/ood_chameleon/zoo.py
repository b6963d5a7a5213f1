"""The algorithm zoo (Sec. 3.2, official ``train.py`` / ``algs.py``): five ways to train a head on frozen
embeddings, each scored by its worst-group test error on the task's group-balanced test split.

Every candidate trains a bias-free linear head (or an MLP 100-ReLU-1) with full-batch Adam (lr 1e-3),
BCE with logits plus 1e-6 x ||theta||_2 (the norm, not its square), for at most ``max_steps`` + 1 steps,
stopping when the loss fell by less than ``tol`` over the last ``check_every`` steps:

* ERM: the mean BCE.
* GroupDRO: online group weights q_g <- q_g exp(eta L_g), renormalised; loss sum_g q_g L_g (eta = 1e-3).
* oversample: each group replicated up to the largest group (floor copies + a remainder drawn without
  replacement), then ERM.
* undersample: min-group-size samples drawn per group without replacement, then ERM.
* remax-margin: logits of group g scaled by c_g = p_g / max_h p_h during training;
  loss (1/4) sum_g mean_{i in g} BCE(c_g f(x_i), y_i).

``train_heads`` trains many (task, algorithm) heads at once as one batched tensor program: every
candidate's loss is a weighted sum of per-row BCE terms over the task's own rows (a resampled multiset
is a weight per row), and Adam is element-wise, so each head follows exactly the path it would follow
alone. ``train_head_reference`` is the plain per-task loop the batched one is tested against.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

logger = logging.getLogger(__name__)

ALGORITHMS = ("ERM", "GroupDRO", "oversample", "remax-margin", "undersample")
N_GROUPS = 4


@dataclass(frozen=True)
class HeadSettings:
    """The official head-training hyperparameters (train.py)."""

    classifier: str = "linear"  # linear (bias-free) | mlp (100 ReLU units)
    hidden: int = 100
    optimizer: str = "adam"  # adam (train.py) | sgd (synthetic/train_syn.py)
    lr: float = 1e-3
    max_steps: int = 1000
    tol: float = 1e-3
    check_every: int = 100
    l2: float = 1e-6
    groupdro_eta: float = 1e-3


# ---------------------------------------------------------------- the candidates' ingredients
def oversample_indices(g: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """algs.oversample: every group up to the largest (floor(max/count) copies + remainder w/o replacement)."""
    counts = np.bincount(g, minlength=N_GROUPS)
    top = counts.max()
    out = []
    for group in range(N_GROUPS):
        idx = np.flatnonzero(g == group)
        if counts[group] < top:
            out.extend([idx] * (top // counts[group]))
            out.append(rng.choice(idx, top % counts[group], replace=False))
        else:
            out.append(idx)
    return np.concatenate(out)


def undersample_indices(g: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """algs.undersample: min-group-size samples of every group, drawn without replacement."""
    smallest = np.bincount(g, minlength=N_GROUPS).min()
    return np.concatenate(
        [
            rng.choice(np.flatnonzero(g == group), smallest, replace=False)
            for group in range(N_GROUPS)
        ]
    )


def remax_scales(g: np.ndarray) -> np.ndarray:
    """remax-margin: c_g = p_g / max_h p_h from the training group frequencies p_g."""
    p = np.bincount(g, minlength=N_GROUPS) / len(g)
    return p / p.max()


def groupdro_update(q, group_losses, eta: float):
    """GroupDRO's online step: q_g <- q_g exp(eta L_g), then q / sum(q) (works on numpy and torch)."""
    q = q * (eta * group_losses).exp() if hasattr(q, "exp") else q * np.exp(eta * group_losses)
    return q / q.sum(-1, keepdims=True)


def row_weights(
    algorithm: str, g: np.ndarray, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """(weight, logit scale) of every training row: the candidate's loss is sum_i w_i BCE(s_i f(x_i), y_i).

    GroupDRO's weights q_g / n_g change every step; its rows get the ERM weights here (only the
    training-error report reads them).
    """
    n = len(g)
    scales = np.ones(n)
    if algorithm in ("ERM", "GroupDRO"):
        weights = np.full(n, 1.0 / n)
    elif algorithm in ("oversample", "undersample"):
        picker = oversample_indices if algorithm == "oversample" else undersample_indices
        idx = picker(g, rng)
        weights = np.bincount(idx, minlength=n) / len(idx)
    elif algorithm == "remax-margin":
        counts = np.bincount(g, minlength=N_GROUPS)
        weights = 1.0 / (N_GROUPS * counts[g])
        scales = remax_scales(g)[g]
    else:
        raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
    return weights, scales


# ---------------------------------------------------------------- batched heads
def init_heads(batch: int, d: int, settings: HeadSettings, generator) -> list:
    """nn.Linear's default initialisation, U(-1/sqrt(fan_in), 1/sqrt(fan_in)), for ``batch`` heads."""
    import torch

    def uniform(shape, fan_in):
        bound = 1.0 / np.sqrt(fan_in)
        return (torch.rand(shape, generator=generator) * 2 - 1) * bound

    if settings.classifier == "linear":
        return [uniform((batch, d), d)]
    h = settings.hidden
    return [
        uniform((batch, d, h), d),
        uniform((batch, h), d),
        uniform((batch, h), h),
        uniform((batch,), h),
    ]


def head_logits(params: list, x):
    """f_b(x) for every head b: x is (B, n, d); returns (B, n)."""
    import torch

    if len(params) == 1:
        return torch.bmm(x, params[0].unsqueeze(-1)).squeeze(-1)
    w1, b1, w2, b2 = params
    hidden = torch.relu(torch.bmm(x, w1) + b1.unsqueeze(1))
    return torch.bmm(hidden, w2.unsqueeze(-1)).squeeze(-1) + b2.unsqueeze(-1)


def norm_penalty(params: list):
    """sum over parameter tensors of ||theta||_2 per head (the official l2_reg, a norm not a square)."""
    return sum(p.flatten(1).norm(dim=1) if p.dim() > 1 else p.abs() for p in params)


def train_heads(x, y, g, weights, scales, is_dro, params: list, settings: HeadSettings):
    """Train B heads at once; returns (trained params, steps taken per head).

    x (B, n, d), y (B, n) in {0, 1}, g (B, n) group ids, weights / scales (B, n) from ``row_weights``,
    is_dro (B,) bool. Head b stops on its own (the official rule); its weights are kept from that step.
    """
    import torch
    import torch.nn.functional as F

    params = [p.clone().requires_grad_(True) for p in params]
    opt_cls = torch.optim.Adam if settings.optimizer == "adam" else torch.optim.SGD
    opt = opt_cls(params, lr=settings.lr)
    batch = x.shape[0]
    onehot = F.one_hot(g, N_GROUPS).to(x.dtype)
    counts = onehot.sum(1)
    q = torch.ones(batch, N_GROUPS, dtype=x.dtype, device=x.device)
    active = torch.ones(batch, dtype=torch.bool, device=x.device)
    last = torch.zeros(batch, dtype=x.dtype, device=x.device)
    final = [p.detach().clone() for p in params]
    steps = torch.full((batch,), settings.max_steps, dtype=torch.long, device=x.device)
    for t in range(settings.max_steps + 1):
        rows = F.binary_cross_entropy_with_logits(
            scales * head_logits(params, x), y, reduction="none"
        )
        group_losses = torch.einsum("bn,bnk->bk", rows, onehot) / counts
        q = torch.where(
            is_dro[:, None], groupdro_update(q, group_losses.detach(), settings.groupdro_eta), q
        )
        loss = torch.where(is_dro, (q * group_losses).sum(1), (weights * rows).sum(1))
        loss = loss + settings.l2 * norm_penalty(params)
        opt.zero_grad()
        loss.sum().backward()  # head b's loss depends on head b's parameters only
        opt.step()
        if t % settings.check_every == 0:
            value = loss.detach()
            stop = active & (last - value < settings.tol) if t > 0 else torch.zeros_like(active)
            for kept, p in zip(final, params, strict=True):
                kept[stop] = p.detach()[stop]
            steps[stop] = t
            active = active & ~stop
            last = torch.where(active, value, last)
            if not bool(active.any()):
                break
    for kept, p in zip(final, params, strict=True):
        kept[active] = p.detach()[active]
    return final, steps


# ---------------------------------------------------------------- per-task reference loop
def train_head_reference(
    x: np.ndarray,
    y: np.ndarray,
    g: np.ndarray,
    algorithm: str,
    params: list,
    settings: HeadSettings,
    resample_idx: np.ndarray | None = None,
) -> tuple[list, int]:
    """One head trained as train.py does (resampled arrays, a loop over groups); params without batch dim."""
    import torch
    import torch.nn.functional as F

    if algorithm in ("oversample", "undersample"):
        x, y, g = x[resample_idx], y[resample_idx], g[resample_idx]
    c = remax_scales(g) if algorithm == "remax-margin" else None
    xt = torch.tensor(x, dtype=torch.float32)
    yt = torch.tensor(y, dtype=torch.float32)
    gt = torch.tensor(g)
    params = [p.clone().unsqueeze(0).requires_grad_(True) for p in params]
    opt_cls = torch.optim.Adam if settings.optimizer == "adam" else torch.optim.SGD
    opt = opt_cls(params, lr=settings.lr)
    q = torch.ones(N_GROUPS)
    last, steps = 0.0, settings.max_steps
    for t in range(settings.max_steps + 1):
        logits = head_logits(params, xt.unsqueeze(0)).squeeze(0)
        if algorithm == "GroupDRO":
            losses = F.binary_cross_entropy_with_logits(logits, yt, reduction="none")
            for group in range(N_GROUPS):
                q[group] *= float(
                    torch.exp(settings.groupdro_eta * losses[gt == group].mean().detach())
                )
            q = q / q.sum()
            loss = sum(q[group] * losses[gt == group].mean() for group in range(N_GROUPS))
        elif algorithm == "remax-margin":
            loss = sum(
                F.binary_cross_entropy_with_logits(c[k] * logits[gt == k], yt[gt == k]) / N_GROUPS
                for k in range(N_GROUPS)
            )
        else:
            loss = F.binary_cross_entropy_with_logits(logits, yt)
        loss = loss + settings.l2 * sum(p.norm() for p in params)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if t % settings.check_every == 0:
            if t > 0 and last - loss.item() < settings.tol:
                steps = t
                break
            last = loss.item()
    return [p.detach().squeeze(0) for p in params], steps


# ---------------------------------------------------------------- scores
def group_errors(pred: np.ndarray, y: np.ndarray, g: np.ndarray) -> np.ndarray:
    """0-1 error of every group (pred, y in {0, 1})."""
    return np.array([np.mean(pred[g == k] != y[g == k]) for k in range(N_GROUPS)])


def worst_group_error(pred: np.ndarray, y: np.ndarray, g: np.ndarray) -> float:
    """wga_te_err = 1 - min_g acc_g on the group-balanced test split."""
    return float(group_errors(pred, y, g).max())


# ---------------------------------------------------------------- the whole zoo
def run_zoo(
    tasks: list[dict],
    algorithms: list[str],
    settings: HeadSettings,
    repeats: int,
    seed_of,
    device: str = "cpu",
    progress=lambda items, desc, total=None: items,
) -> pd.DataFrame:
    """Every (task, algorithm, repeat): train the heads bucketed by (n, d), score them on the test split.

    ``seed_of(kind, repeat, task_id)`` gives the integer seed of a task's resampling draws ("resample")
    and initial weights ("init"; shared by the algorithms of one task and repeat).
    """
    import torch

    buckets: dict[tuple, list[dict]] = {}
    for task in tasks:
        buckets.setdefault(task["x_tr"].shape, []).append(task)
    rows = []
    jobs = [(shape, r) for shape in sorted(buckets) for r in range(repeats)]
    for (n, d), r in progress(jobs, "algorithm zoo (buckets of equal n, d)", total=len(jobs)):
        members = buckets[(n, d)]
        started = time.perf_counter()
        xs, ys, gs, ws, ss, dro, inits = [], [], [], [], [], [], []
        for task in members:
            g = 2 * task["y_tr"] + task["a_tr"]
            rng = np.random.default_rng(seed_of("resample", r, task["task_id"]))
            gen = torch.Generator().manual_seed(seed_of("init", r, task["task_id"]))
            init = init_heads(1, d, settings, gen)
            for algorithm in algorithms:
                w, s = row_weights(algorithm, g, rng)
                xs.append(task["x_tr"])
                ys.append(task["y_tr"])
                gs.append(g)
                ws.append(w)
                ss.append(s)
                dro.append(algorithm == "GroupDRO")
                inits.append(init)
        tensor = lambda a, dt=torch.float32: torch.as_tensor(np.stack(a), dtype=dt, device=device)  # noqa: E731
        params = [torch.cat([i[k] for i in inits]).to(device) for k in range(len(inits[0]))]
        trained, steps = train_heads(
            tensor(xs), tensor(ys), tensor(gs, torch.long), tensor(ws), tensor(ss),
            torch.as_tensor(dro, device=device), params, settings,
        )  # fmt: skip
        b = 0
        with torch.no_grad():
            for task in members:
                for algorithm in algorithms:
                    head = [p[b : b + 1] for p in trained]
                    resampled = algorithm in ("oversample", "undersample")
                    train_w = ws[b] if resampled else np.full(n, 1.0 / n)
                    rows.append(_score(task, algorithm, head, train_w, r, int(steps[b]), device))
                    b += 1
        logger.info(
            "zoo bucket n=%d d=%d repeat %d: %d heads in %.1f s",
            n, d, r, len(xs), time.perf_counter() - started,
        )  # fmt: skip
    return pd.DataFrame(rows)


def _score(task, algorithm, head, train_weights, repeat, steps, device) -> dict:
    import torch

    out = {"task_id": task["task_id"], "algorithm": algorithm, "repeat": repeat, "steps": steps}
    for split in ("tr", "te"):
        x = torch.as_tensor(task[f"x_{split}"], dtype=torch.float32, device=device)
        pred = (head_logits(head, x.unsqueeze(0)).squeeze(0) > 0).cpu().numpy().astype(int)
        y, g = task[f"y_{split}"], 2 * task[f"y_{split}"] + task[f"a_{split}"]
        if (
            split == "tr"
        ):  # on the candidate's own (resampled) training multiset, as train.py reports it
            out["avg_tr_err"] = float(np.sum(train_weights * (pred != y)))
        else:
            out["avg_te_err"] = float(np.mean(pred != y))
            out["wga_te_err"] = worst_group_error(pred, y, g)
    return out
