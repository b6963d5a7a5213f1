"""The empirical study of the bounds' predictions P1-P4 (spec: Small-scale reproduction plan): every cell of
the grids is one ERM fit (training.fit) whose generalisation gaps are measured on a large test sample.

A task is one fit: (block, replicate, eta, class, loss, n, c). The decoupled class is fitted once on the
block's largest c (its columns are the fits on every prefix, see training.py); the coupled classes (low-rank,
mlp) once per c, and on the real set once per random label subset.
Tasks run on ``train.n_jobs`` joblib workers; every fit draws its own sub-stream of the one seed.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import numpy as np
import pandas as pd

from paper_pipelines.common.parallel import run_parallel
from paper_pipelines.common.runtime import substream, substream_seed

from . import data as ingest
from . import hypothesis, losses, metrics, rademacher, training

logger = logging.getLogger(__name__)

SYNTHETIC = ("low_d", "high_d", "optimistic", "multilabel")
MEASURES = ("surrogate", "hamming", "ranking", "auc_loss")


# ---------------------------------------------------------------- pools and splits
def synthetic_pools(data, seed: int) -> dict[str, list[dict[str, np.ndarray]]]:
    """The training pools and test samples of every enabled synthetic block (one per replicate)."""
    pools: dict[str, list] = {}
    for name in ("low_d", "high_d", "optimistic"):
        block = getattr(data, name)
        if not block.enabled:
            continue
        pools[name] = [
            ingest.linear_threshold_pool(
                block.n_pool, block.n_test, block.d, data.c_max, block.inputs, block.informative,
                block.informative_energy, data.label_rank, data.label_specific, data.positive_rate,
                substream(seed, "pool", name, r),
            )
            for r in range(block.replicates)
        ]  # fmt: skip
    ml = data.multilabel
    if ml.enabled:
        pools["multilabel"] = [
            ingest.sklearn_multilabel_pool(
                ml.n_pool,
                ml.n_test,
                ml.n_features,
                ml.c_max,
                substream_seed(seed, "multilabel") % 2**31,
            )
        ]
    return pools


def real_splits(table: pd.DataFrame, real, seed: int) -> dict[str, Any]:
    """Random splits of the real set: the first n rows of each permutation train, the rows after the largest
    n test; per (split, n) the usable labels and ``label_subsets`` random subsets of each size c."""
    n_max = max(real.n)
    label_cols = [c for c in table.columns if c.startswith("label_")]
    y = np.where(table[label_cols].to_numpy() > 0, 1.0, -1.0)
    out: dict[str, Any] = {"splits": []}
    for s in range(real.splits):
        rng = substream(seed, "real_split", s)
        perm = rng.permutation(len(table))
        split: dict[str, Any] = {"train": perm[:n_max].tolist(), "test": perm[n_max:].tolist()}
        split["subsets"] = {}
        for n in real.n:
            usable = ingest.usable_labels(
                y[perm[:n]], y[perm[n_max:]], real.min_label_count, f"{real.source} split {s} n={n}"
            )
            per_c = {}
            for c in real.c:
                if c > len(usable):
                    logger.info(
                        "%s split %d n=%d: only %d usable labels, c=%d uses them all",
                        real.source, s, n, len(usable), c,
                    )  # fmt: skip
                size = min(c, len(usable))
                draws = 1 if size == len(usable) else real.label_subsets
                per_c[str(c)] = [
                    sorted(rng.choice(usable, size=size, replace=False).tolist())
                    for _ in range(draws)
                ]
            split["subsets"][str(n)] = {"usable": usable.tolist(), "c": per_c}
        out["splits"].append(split)
    return out


# ---------------------------------------------------------------- tasks
def synthetic_tasks(data, train_params) -> list[dict[str, Any]]:
    """Every fit of the synthetic blocks: the decoupled class at the block's largest c, low-rank at each c."""
    tasks = []
    for name in SYNTHETIC:
        block = getattr(data, name)
        if not block.enabled:
            continue
        etas = getattr(block, "etas", [0.0])
        replicates = getattr(block, "replicates", 1)
        for r in range(replicates):
            for e, eta in enumerate(etas):
                for kind in block.models:
                    for loss in train_params.losses:
                        for n in block.n:
                            fits = [max(block.c)] if kind == "linear" else sorted(block.c)
                            for c_fit in fits:
                                tasks.append(
                                    {
                                        "block": name, "replicate": r, "eta": float(eta), "eta_index": e,
                                        "model": kind, "loss": loss, "n": int(n), "c_fit": int(c_fit),
                                        "lam": float(block.Lambda),
                                    }
                                )  # fmt: skip
    return tasks


def task_key(task: dict[str, Any]) -> str:
    parts = [task["block"], task.get("replicate", task.get("split")), task["eta"], task["model"]]
    parts += [task["loss"], task["n"], task["c_fit"]]
    if "subset" in task:  # coupled fits on the real set: one per random label subset
        parts.append(f"s{task['subset']}")
    return "/".join(str(p) for p in parts)


def width(kind: str, model) -> int:
    """The shared layer's size: r for the low-rank class, h hidden units for the mlp (unused when linear)."""
    return model.hidden if kind == "mlp" else model.rank


def _fit_one(task: dict, x: np.ndarray, y: np.ndarray, rank: int, steps: int, lr: float, seed: int):
    started = time.process_time()
    params = training.fit(
        x, y, task["loss"], task["model"], task["lam"], rank, steps, lr, np.random.default_rng(seed)
    )
    return task_key(task), params, time.process_time() - started


def _cost(task: dict, d: int, r: int) -> float:
    if task["model"] == "linear":
        return task["n"] * task["c_fit"] * d
    return task["n"] * r * (task["c_fit"] + d)


def fit_synthetic(pools: dict, data, model, train_params, seed: int) -> dict[str, Any]:
    """Fit every synthetic task; returns {task key: parameters} plus the CPU seconds of each fit."""
    tasks = synthetic_tasks(data, train_params)
    jobs = []
    for task in tasks:
        pool = ingest.with_noise(pools[task["block"]][task["replicate"]], task["eta"])
        x = pool["X_train"][: task["n"]]
        y = pool["Y_train"][: task["n"], : task["c_fit"]]
        fit_seed = substream_seed(seed, "fit", task_key(task))
        r = width(task["model"], model)
        jobs.append((task, x, y, r, train_params.steps, train_params.lr, fit_seed))
    # largest fits first so the two workers finish together
    jobs.sort(key=lambda job: -_cost(job[0], job[1].shape[1], job[3]))
    out = run_parallel(
        _fit_one, jobs, train_params.n_jobs, "multilabel_bounds synthetic fits", logger
    )
    return {"params": {k: p for k, p, _ in out}, "seconds": {k: s for k, _, s in out}}


def _real_fits(subsets: dict, kinds: list[str], losses_: list[str], n_labels: int):
    """(task head, label columns) of every fit at one (split, n): the decoupled class once per loss on all
    labels (the subsets are its columns), a coupled class once per random label subset."""
    for kind in kinds:
        for loss in losses_:
            if kind == "linear":
                yield {"model": kind, "loss": loss, "c_fit": n_labels}, np.arange(n_labels)
                continue
            for c, draws in subsets.items():
                for k, columns in enumerate(draws):
                    head = {"model": kind, "loss": loss, "c_fit": int(c), "subset": k}
                    yield head, np.array(columns, dtype=int)


def fit_real(
    table: pd.DataFrame, splits: dict, real, model, train_params, seed: int
) -> dict[str, Any]:
    """The same trainer on the real set: every split, n, class and loss (see _real_fits)."""
    jobs = []
    for s, split in enumerate(splits["splits"]):
        train_rows, test_rows = np.array(split["train"]), np.array(split["test"])
        for n in real.n:
            x, y, _, _ = ingest.real_features(table, train_rows[:n], test_rows)
            subsets = split["subsets"][str(n)]["c"]
            for head, columns in _real_fits(subsets, real.models, train_params.losses, y.shape[1]):
                task = {"block": "real", "split": s, "eta": 0.0, "n": int(n),
                        "lam": float(real.Lambda), **head}  # fmt: skip
                fit_seed = substream_seed(seed, "fit", task_key(task))
                r = width(task["model"], model)
                y_fit = y[:, columns]
                jobs.append((task, x, y_fit, r, train_params.steps, train_params.lr, fit_seed))
    jobs.sort(key=lambda job: -_cost(job[0], job[1].shape[1], job[3]))
    out = run_parallel(
        _fit_one, jobs, train_params.n_jobs, "multilabel_bounds real-data fits", logger
    )
    return {"params": {k: p for k, p, _ in out}, "seconds": {k: s for k, _, s in out}}


# ---------------------------------------------------------------- gaps
def per_label_measures(scores: np.ndarray, y: np.ndarray, loss: str) -> dict[str, np.ndarray]:
    """Surrogate risk, Hamming loss and 1 - AUC of every label (all decompose over labels)."""
    return {
        "surrogate": losses.surrogate_per_label(scores, y, loss),
        "hamming": metrics.hamming_per_label(scores, y),
        "auc_loss": 1.0 - metrics.auc_per_label(scores, y),
    }


def measure_columns(
    per_label: dict[str, np.ndarray], scores: np.ndarray, y: np.ndarray, columns: np.ndarray
) -> dict[str, float]:
    """The four measures of the label subset ``columns`` (the ranking loss does not decompose)."""
    out = {k: float(np.nanmean(v[columns])) for k, v in per_label.items()}
    out["ranking"] = metrics.ranking_loss(scores[:, columns], y[:, columns])
    return out


def _gap_row(base: dict, train: dict, test: dict) -> dict:
    row = dict(base)
    for m in MEASURES:
        row[f"train_{m}"], row[f"test_{m}"] = train[m], test[m]
        row[f"gap_{m}"] = test[m] - train[m]
    return row


def _measure_synthetic(
    task: dict, params: dict, x_tr, y_tr, x_te, y_te, cs: list[int]
) -> list[dict]:
    s_tr, s_te = (hypothesis.scores(params, x).astype(np.float64) for x in (x_tr, x_te))
    pl_tr = per_label_measures(s_tr, y_tr, task["loss"])
    pl_te = per_label_measures(s_te, y_te, task["loss"])
    usable = ingest.usable_labels(y_tr, y_te, 1, f"{task['block']} n={task['n']} {task['model']}")
    rows = []
    for c in cs:
        columns = usable[usable < c]
        if len(columns) < c:
            logger.info(
                "%s: c=%d measured on its %d usable labels", task_key(task), c, len(columns)
            )
        if len(columns) == 0:
            continue
        base = {k: task[k] for k in ("block", "replicate", "eta", "model", "loss", "n")}
        base.update({"c": int(c), "split": -1, "subset": 0, "c_used": int(len(columns))})
        train = measure_columns(pl_tr, s_tr, y_tr, columns)
        test = measure_columns(pl_te, s_te, y_te, columns)
        rows.append(_gap_row(base, train, test))
    return rows


def measure_synthetic(pools: dict, fitted: dict, data, train_params) -> pd.DataFrame:
    """Train and test values of every measure and their gaps, one row per (task, c)."""
    jobs = []
    for task in synthetic_tasks(data, train_params):
        block = getattr(data, task["block"])
        pool = ingest.with_noise(pools[task["block"]][task["replicate"]], task["eta"])
        cs = (
            [c for c in block.c if c <= task["c_fit"]]
            if task["model"] == "linear"
            else [task["c_fit"]]
        )
        jobs.append(
            (
                task, fitted["params"][task_key(task)],
                pool["X_train"][: task["n"]], pool["Y_train"][: task["n"], : task["c_fit"]],
                pool["X_test"], pool["Y_test"][:, : task["c_fit"]], cs,
            )
        )  # fmt: skip
    out = run_parallel(
        _measure_synthetic, jobs, train_params.n_jobs, "multilabel_bounds gaps", logger
    )
    return pd.DataFrame([row for rows in out for row in rows])


def measure_real(
    table: pd.DataFrame, splits: dict, fitted: dict, real, train_params
) -> pd.DataFrame:
    """Gaps on the real set: each split, n, class, loss and random label subset of size c."""
    rows = []
    for s, split in enumerate(splits["splits"]):
        train_rows, test_rows = np.array(split["train"]), np.array(split["test"])
        for n in real.n:
            x_tr, y_tr, x_te, y_te = ingest.real_features(table, train_rows[:n], test_rows)
            subsets = split["subsets"][str(n)]["c"]
            fits = _real_fits(subsets, real.models, train_params.losses, y_tr.shape[1])
            for head, fit_columns in fits:
                task = {"block": "real", "split": s, "eta": 0.0, "n": int(n), **head}
                params = fitted["params"][task_key(task)]
                yf_tr, yf_te = y_tr[:, fit_columns], y_te[:, fit_columns]
                s_tr, s_te = (hypothesis.scores(params, x).astype(np.float64) for x in (x_tr, x_te))
                pl_tr = per_label_measures(s_tr, yf_tr, head["loss"])
                pl_te = per_label_measures(s_te, yf_te, head["loss"])
                # the decoupled fit covers every subset through its columns; a coupled fit is its subset
                measured = (
                    [(int(c), k, np.array(cols, dtype=int))
                     for c, draws in subsets.items() for k, cols in enumerate(draws)]
                    if head["model"] == "linear"
                    else [(head["c_fit"], head["subset"], np.arange(len(fit_columns)))]
                )  # fmt: skip
                for c, k, columns in measured:
                    base = {
                        "block": "real", "replicate": 0, "eta": 0.0, "model": head["model"],
                        "loss": head["loss"], "n": int(n), "c": int(c), "split": s, "subset": k,
                        "c_used": int(len(columns)),
                    }  # fmt: skip
                    train = measure_columns(pl_tr, s_tr, yf_tr, columns)
                    test = measure_columns(pl_te, s_te, yf_te, columns)
                    rows.append(_gap_row(base, train, test))
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- Rademacher quantities
def _ascent_one(kind_of_row: dict, x, y, loss, model_kind, lam, rank, rad, seed) -> dict:
    rng = np.random.default_rng(seed)
    row = dict(kind_of_row)
    if row["quantity"] == "loss_class":
        mean, std = rademacher.loss_class_complexity(
            x, y, loss, model_kind, lam, rank, rad.sign_draws, rad.restarts, rad.ascent_steps,
            rad.ascent_lr, rng,
        )  # fmt: skip
    else:  # flattened complexity of the class: identity loss, one sign per point (x_i, j)
        values = [
            rademacher.ascent_sup(
                x, np.ones_like(y), rademacher.rademacher_signs(y.shape, rng), "identity",
                model_kind, lam, rank, rad.ascent_steps, rad.ascent_lr, rad.restarts, rng,
            )
            for _ in range(max(1, rad.sign_draws))
        ]  # fmt: skip
        mean, std = float(np.mean(values)), float(np.std(values))
    row.update(value=mean, spread=std, sqrt_n_value=mean * np.sqrt(row["n"]))
    return row


def rademacher_study(pools: dict, data, model, rad, train_params, seed: int) -> pd.DataFrame:
    """(a) closed forms, (b) the ascent estimates and (c) the local fixed points, one row per quantity."""
    rows: list[dict] = []
    if not rad.enabled or "low_d" not in pools:
        return pd.DataFrame(
            columns=[
                "quantity",
                "block",
                "model",
                "loss",
                "n",
                "c",
                "value",
                "spread",
                "sqrt_n_value",
            ]
        )
    pool = pools["low_d"][0]
    lam = data.low_d.Lambda
    for n in rad.n:
        x = pool["X_train"][:n]
        rng = substream(seed, "rademacher", "closed", n)
        value = rademacher.linear_ball_complexity(x, lam, rad.mc_draws, rng)
        bound = rademacher.linear_ball_bound(x, lam)
        base = {"block": "low_d", "model": "linear", "loss": "", "n": int(n), "spread": np.nan}
        rows.append({**base, "quantity": "per_label", "c": 1, "value": value,
                     "sqrt_n_value": value * np.sqrt(n), "bound": bound})  # fmt: skip
        for c in rad.c:
            flat = rademacher.flattened_decoupled(x, c, lam, rad.mc_draws, rng)
            per_label_sum = sum(
                rademacher.linear_ball_complexity(x, lam, rad.mc_draws, rng) for _ in range(c)
            )
            rows.append({**base, "quantity": "flattened", "c": int(c), "value": flat,
                         "sqrt_n_value": flat * np.sqrt(n), "c_times_value": c * flat,
                         "per_label_sum": per_label_sum})  # fmt: skip
    jobs = []
    if rad.sign_draws > 0:
        eta0 = ingest.with_noise(pool, 0.0)
        for n in rad.n:
            for c in rad.c:
                x, y = eta0["X_train"][:n], eta0["Y_train"][:n, :c]
                for kind in rad.models:
                    for loss in rad.losses:
                        head = {"quantity": "loss_class", "block": "low_d", "model": kind,
                                "loss": loss, "n": int(n), "c": int(c)}  # fmt: skip
                        s = substream_seed(seed, "rademacher", "ascent", kind, loss, n, c)
                        jobs.append((head, x, y, loss, kind, lam, model.rank, rad, s))
                    if kind == "lowrank":
                        head = {"quantity": "flattened", "block": "low_d", "model": kind,
                                "loss": "identity", "n": int(n), "c": int(c)}  # fmt: skip
                        s = substream_seed(seed, "rademacher", "flat", kind, n, c)
                        jobs.append((head, x, y, "identity", kind, lam, model.rank, rad, s))
    rows += run_parallel(
        _ascent_one, jobs, train_params.n_jobs, "multilabel_bounds Rademacher ascent", logger
    )
    for name in ("low_d", "high_d", "optimistic"):
        if name not in pools:
            continue
        block = getattr(data, name)
        x_pool = pools[name][0]["X_train"]
        for n in block.n:
            r_star = rademacher.fixed_point(
                rademacher.gram_eigenvalues(x_pool[:n]), block.Lambda, n
            )
            rows.append({"quantity": "local_fixed_point", "block": name, "model": "linear", "loss": "",
                         "n": int(n), "c": 1, "value": r_star, "spread": np.nan,
                         "sqrt_n_value": r_star * np.sqrt(n)})  # fmt: skip
    return pd.DataFrame(rows)
