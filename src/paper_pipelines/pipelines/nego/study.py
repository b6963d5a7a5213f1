"""The experiment grid (method x split x seed), its datasets, and the evaluate-stage measurements."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from . import framework, molecules, training
from . import metrics as measures
from .data import BASES
from .splits import PARTS

HEADLINE = "bias"
fit = training.fit
# every environment a graph can carry: the five base types, then the molecule size environments
ENVIRONMENTS = (*BASES, *molecules.ENVIRONMENTS)


def run_grid(ood_splits: dict[str, Any], train) -> list[dict[str, Any]]:
    """Every (method, split, seed) to train: ``train.seeds`` on the headline split, else ``seeds_other_splits``."""
    runs = []
    for split in ood_splits:
        n = train.seeds if split == HEADLINE else train.seeds_other_splits
        runs += [{"method": m, "split": split, "seed": s} for s in range(n) for m in train.methods]
    return runs


def run_key(run: dict[str, Any]) -> str:
    return f"{run['split']}/{run['method']}/seed{run['seed']}"


def build_datasets(graphs: pd.DataFrame, ood_splits: dict[str, Any]) -> dict[str, dict[str, list]]:
    """torch-geometric Data lists per split and part (environments indexed over ENVIRONMENTS)."""
    return {
        split: {part: training.to_dataset(graphs, ids, ENVIRONMENTS) for part, ids in parts.items()}
        for split, parts in ood_splits.items()
    }


def class_counts(graphs: pd.DataFrame, data) -> dict[str, int]:
    """Classes of each split of the graph table: the motifs, or on the molecules split the distinct
    values of the label property (molecules.read_molecules numbers them 0..K-1)."""
    return {
        str(split): int(frame["y"].max()) + 1 if split == "molecules" else len(data.motifs)
        for split, frame in graphs.groupby("split", sort=False)
    }


def run_config(
    method: str,
    data,
    model,
    prompt,
    extractor,
    loss,
    train,
    split: str = HEADLINE,
    num_classes: int | None = None,
) -> training.RunConfig:
    """The RunConfig of one method on one split from the parameter blocks (the molecules split has
    atom features and ``num_classes`` label values, from :func:`class_counts`; the motif splits
    all-ones features and the motifs)."""
    is_molecules = split == "molecules"
    weights = framework.LossWeights(
        lambda_neg=loss.lambda_neg,
        lambda_inv=loss.lambda_inv,
        lambda_ib=loss.lambda_ib,
        lambda_cov=loss.lambda_cov,
        lambda_div=loss.lambda_div,
        vrex=loss.vrex,
        lambda_vrex=loss.lambda_vrex,
        num_pseudo_envs=loss.num_pseudo_envs,
        r=extractor.r,
        neg_mode=prompt.neg_mode,
    )
    return training.RunConfig(
        method=method,
        num_classes=len(data.motifs) if num_classes is None else num_classes,
        in_dim=molecules.NUM_FEATURES if is_molecules else 1,
        hidden=model.hidden,
        layers=model.layers,
        pool=model.pool,
        dropout=model.dropout,
        norm=model.norm,
        head=model.head,
        epochs=train.epochs,
        batch_size=train.batch_size,
        lr=train.lr,
        weight_decay=train.weight_decay,
        eval_every=train.eval_every,
        patience=train.patience,
        select_on=train.select_on,
        num_prompts=prompt.num_prompts,
        residual=prompt.residual,
        encoder=prompt.encoder,
        condition=extractor.condition,
        sampling=extractor.sampling,
        temperature=extractor.temperature,
        symmetric=extractor.symmetric,
        weights=weights,
        lambda_vrex_oracle=loss.lambda_vrex_oracle,
    )


def load_model(state: dict, cfg: training.RunConfig, device: str):
    """Rebuild a selected model from its saved state dict."""
    net = training.build_model(cfg)
    net.load_state_dict(state)
    return net.to(device).eval()


def evaluate_runs(
    classifiers,
    train_log,
    datasets,
    data,
    model,
    prompt,
    extractor,
    loss,
    train,
    device,
    classes=None,
) -> pd.DataFrame:
    """One row per run: accuracy on every part, severe drop, OOD-test edge-mask AUC, epoch, seconds
    (``classes``: :func:`class_counts`, needed where a molecules split is evaluated)."""
    rows = []
    for (method, split, seed), log in train_log.groupby(["method", "split", "seed"], sort=False):
        run = {"method": method, "split": split, "seed": int(seed)}
        num_classes = (classes or {}).get(split)
        cfg = run_config(method, data, model, prompt, extractor, loss, train, split, num_classes)
        net = load_model(classifiers[run_key(run)], cfg, device)
        row: dict[str, Any] = dict(run)
        for part in PARTS:
            out = training.predict(net, datasets[split][part], 256, device)
            row[f"acc_{part}"] = measures.accuracy(
                training.labels_of(datasets[split][part]), out["pred"]
            )
            if part == "ood_test":
                row["mask_auc"] = (
                    measures.mask_auc(out["mask"], out["edge_gt"])
                    if "mask" in out
                    else float("nan")
                )
        row["severe_drop"] = measures.severe_drop(row["acc_ood_test"], row["acc_severe_test"])
        row["selected_epoch"] = int(log.selected_epoch.iloc[0])
        row["epochs_run"] = int(log.epoch.max())
        row["seconds"] = float(log.seconds.iloc[0])
        rows.append(row)
    return pd.DataFrame(rows)


def _nego_runs(classifiers: dict, split: str) -> list[str]:
    return sorted(k for k in classifiers if k.startswith(f"{split}/nego_r/"))


def probe_environment(
    classifiers,
    graphs,
    ood_splits,
    data,
    model,
    prompt,
    extractor,
    loss,
    train,
    evaluation,
    rng,
    device,
) -> dict[str, Any]:
    """Mean over NeGo-R seeds of the probe accuracies (label, base type) on its OOD-test e_G."""
    split = HEADLINE if HEADLINE in ood_splits else next(iter(ood_splits))
    keys = _nego_runs(classifiers, split)
    result: dict[str, Any] = {"split": split, "runs": len(keys)}
    if not keys:
        return {**result, "probe_y_acc": float("nan"), "probe_base_acc": float("nan")}
    ids = ood_splits[split]["ood_test"]
    dataset = training.to_dataset(graphs, ids, ENVIRONMENTS)
    y = training.labels_of(dataset)
    base = graphs.loc[ids, "base"].to_numpy()
    num_classes = class_counts(graphs, data)[split]
    cfg = run_config("nego_r", data, model, prompt, extractor, loss, train, split, num_classes)
    ys, bs = [], []
    for key in keys:
        env = training.predict(load_model(classifiers[key], cfg, device), dataset, 256, device)[
            "env"
        ]
        ys.append(measures.probe_accuracy(env, y, evaluation.probe_fraction, rng))
        bs.append(measures.probe_accuracy(env, base, evaluation.probe_fraction, rng))
    chance = float(np.max(np.unique(y, return_counts=True)[1]) / len(y))
    return {
        **result,
        "probe_y_acc": float(np.mean(ys)),
        "probe_base_acc": float(np.mean(bs)),
        "majority_y": chance,
    }


def explain(
    classifiers, graphs, ood_splits, data, model, prompt, extractor, loss, train, evaluation, device
) -> dict[str, Any]:
    """Edges, true motif edges and each extractor method's mask on the first few OOD-test graphs."""
    split = HEADLINE if HEADLINE in ood_splits else next(iter(ood_splits))
    ids = ood_splits[split]["ood_test"][: evaluation.explain_graphs]
    dataset = training.to_dataset(graphs, ids, ENVIRONMENTS)
    out: dict[str, Any] = {"split": split, "graphs": []}
    for gid, d in zip(ids, dataset, strict=True):
        row = graphs.loc[gid]
        out["graphs"].append(
            {
                "graph_id": int(gid),
                "base": row.base,
                "motif": row.motif,
                "edge_index": d.edge_index.tolist(),
                "edge_gt": d.edge_gt.tolist(),
                "masks": {},
            }
        )
    num_classes = class_counts(graphs, data)[split]
    for method in train.methods:
        key = f"{split}/{method}/seed0"
        if method not in training.EXTRACTOR_METHODS or key not in classifiers:
            continue
        cfg = run_config(method, data, model, prompt, extractor, loss, train, split, num_classes)
        pred = training.predict(load_model(classifiers[key], cfg, device), dataset, 256, device)
        for i, g in enumerate(out["graphs"]):
            g["masks"][method] = pred["mask"][pred["mask_graph"] == i].tolist()
    return out
