"""The experiments of the paper at our scale: every (study, mu) split, leaf matching at each T, the
(alpha, gamma) grid, the baselines on the same splits, and per-epoch time on Erdos-Renyi graphs.

Keys: ``<study>/mu=<mu>`` for a split; ``<study>/mu=<mu>/<method>`` for one fitted method.
"""

from __future__ import annotations

import logging
import time
from itertools import product

import numpy as np
import pandas as pd
import torch

from paper_pipelines.common.progress import progress
from paper_pipelines.common.runtime import substream, substream_seed

from . import baselines as bl
from . import data as graphs
from .ct_space import distance_table
from .decentralised_search import SearchSettings, fit_leaf_matching
from .link_model import score_pairs
from .metrics import link_prediction_scores
from .observed_links import deduplicate, observed_split, validation_carve_out

logger = logging.getLogger(__name__)
STUDIES = ("hierarchy", "real")


def split_key(study: str, mu: float) -> str:
    return f"{study}/mu={mu:g}"


def settings_of(block, trees: int, **override) -> SearchSettings:
    """SearchSettings for one T from a SearchParams block (``override``: e.g. a grid's alpha, gamma)."""
    values = block.model_dump(exclude={"trees"})
    values.update(override)
    return SearchSettings(trees=trees, **values)


def check_graph(edges: pd.DataFrame, key: str, mu_list: list[float]) -> None:
    """A graph must give every mu at least one observed link (checked before anything is written)."""
    n_edges = len(deduplicate(edges.to_numpy())) if len(edges) else 0
    if n_edges == 0:
        raise ValueError(
            f"the graph of leaf_matching.data.{key} has no edges; choose another source or raise "
            f"leaf_matching.data.{key}.mean_degree"
        )
    too_small = [mu for mu in mu_list if int(mu * n_edges) < 1]
    if too_small:
        raise ValueError(
            f"leaf_matching.split.{key}_mu {too_small} observe no link of the {n_edges} edges of "
            f"leaf_matching.data.{key}; raise mu or use a larger graph"
        )


def make_splits(edges: dict[str, pd.DataFrame], split, seed: int) -> dict:
    """Every (study, mu) split and its validation carve-out, each from its own sub-stream."""
    out = {}
    for study in STUDIES:
        for mu in getattr(split, f"{study}_mu"):
            key = split_key(study, mu)
            s = observed_split(
                edges[study].to_numpy(), mu, split.neg_ratio, substream(seed, "split", key)
            )
            s["validation"] = validation_carve_out(
                s["train"],
                s["n_nodes"],
                split.validation_fraction,
                split.neg_ratio,
                substream(seed, "validation", key),
            )
            logger.info(
                "%s: %d nodes, %d observed edges, %d test positives, %d negatives",
                key, s["n_nodes"], len(s["train"]), len(s["test_pos"]), len(s["test_neg"]),
            )  # fmt: skip
            out[key] = s
    return out


def fit_and_keep(split: dict, settings: SearchSettings, seed: int, device: str) -> dict:
    """Leaf matching on one split; the leaves with what is needed to score them later."""
    started = time.perf_counter()
    fit = fit_leaf_matching(split["train"], split["n_nodes"], settings, seed, device)
    fit.update(
        seconds=time.perf_counter() - started,
        height=settings.height,
        alpha=settings.alpha,
        gamma=settings.gamma,
        eps=settings.eps,
    )
    return fit


def train_leaf_matching(splits: dict, model, seed: int, device: str) -> tuple[dict, pd.DataFrame]:
    """Leaf matching at every T of each study's block, on every split (the model: leaves per mu)."""
    jobs = [
        (key, trees)
        for key in splits
        for trees in getattr(model, key.split("/")[0]).trees
    ]  # fmt: skip
    fits, log = {}, []
    for key, trees in progress(jobs, "leaf matching fits", logger=logger):
        block = getattr(model, key.split("/")[0])
        name = f"{key}/leaf_matching_T{trees}"
        fit = fit_and_keep(
            splits[key], settings_of(block, trees), substream_seed(seed, name), device
        )
        fits[name] = fit
        log += [
            {"fit": name, "epoch": e, "loss": loss, "seconds": sec}
            for e, (loss, sec) in enumerate(zip(fit["loss"], fit["seconds_per_epoch"], strict=True))
        ]
    return fits, pd.DataFrame(log, columns=["fit", "epoch", "loss", "seconds"])


def lm_scores(fit: dict, pairs: np.ndarray) -> np.ndarray:
    """Link probability of pairs under a fitted leaf embedding (the paper's test score)."""
    table = distance_table(fit["height"])
    leaves, degree = torch.as_tensor(fit["leaves"]), torch.as_tensor(fit["degree"])
    pairs = torch.as_tensor(np.asarray(pairs, dtype=np.int64).reshape(-1, 2))
    return score_pairs(leaves, degree, pairs, table, fit["alpha"], fit["gamma"], fit["eps"]).numpy()


def tune_link_model(
    splits: dict, model, tuning, seed: int, device: str
) -> tuple[pd.DataFrame, dict]:
    """Grid over (alpha, gamma) on each split's validation carve-out; refit the best on all observed."""
    rows, tuned = [], {}
    keys = [k for k in splits if k.split("/")[0] in tuning.studies]
    jobs = [(k, a, g) for k in keys for a, g in product(tuning.alpha, tuning.gamma)]
    for key, alpha, gamma in progress(jobs, "(alpha, gamma) grid", logger=logger):
        block = getattr(model, key.split("/")[0])
        settings = settings_of(block, tuning.trees, alpha=alpha, gamma=gamma)
        val = splits[key]["validation"]
        fit = fit_and_keep(val, settings, substream_seed(seed, "tuning", key), device)
        scores = link_prediction_scores(
            lm_scores(fit, val["test_pos"]), lm_scores(fit, val["test_neg"]), [50]
        )
        rows.append({"split": key, "alpha": alpha, "gamma": gamma, "val_auc": scores["auc"]})
    table = pd.DataFrame(rows, columns=["split", "alpha", "gamma", "val_auc"])
    for key in keys:
        best = table[table.split == key].sort_values("val_auc", ascending=False).iloc[0]
        settings = settings_of(
            getattr(model, key.split("/")[0]),
            tuning.trees,
            alpha=float(best.alpha),
            gamma=float(best.gamma),
        )
        name = f"{key}/leaf_matching_T{tuning.trees}_tuned"
        tuned[name] = fit_and_keep(splits[key], settings, substream_seed(seed, name), device)
    table["selected"] = False
    for key in keys:
        sub = table[table.split == key]
        table.loc[sub.val_auc.idxmax(), "selected"] = True
    return table, tuned


def _baseline_jobs(key: str, baselines) -> list[tuple[str, str, int | None]]:
    study = key.split("/")[0]
    jobs = []
    for method in baselines.methods:
        if method in ("euclidean", "poincare"):
            dims = getattr(getattr(baselines, method), f"{study}_dims")
            jobs += [(method, f"{method}_d{d}", d) for d in dims]
        else:
            jobs.append((method, method, None))
    return jobs


def fit_baseline(method: str, dim: int | None, split: dict, baselines, block, seed: int, name: str):
    """One baseline's scorer on one split (the same-likelihood ones share the study's alpha, gamma)."""
    train, n = split["train"], split["n_nodes"]
    gen = torch.Generator().manual_seed(substream_seed(seed, name))
    if method in ("euclidean", "poincare"):
        p = getattr(baselines, method)
        return bl.fit_same_likelihood(
            train, n, method, dim, p.steps, p.lr, block.alpha, block.gamma, block.eps,
            block.pos_ratio, gen, p.init_scale,
        )  # fmt: skip
    if method == "deepwalk":
        p = baselines.deepwalk
        return bl.fit_deepwalk(
            train, n, p.dim, p.walks_per_node, p.walk_length, p.window, p.negatives, p.epochs,
            p.lr, p.batch_size, substream(seed, name), gen,
        )  # fmt: skip
    if method == "gae":
        p = baselines.gae
        return bl.fit_gae(train, n, p.hidden, p.dim, p.epochs, p.lr, gen)
    if method == "preferential_attachment":
        return bl.fit_preferential_attachment(train, n)
    return bl.fit_adamic_adar(train, n)


def train_baselines(splits: dict, baselines, model, seed: int) -> dict:
    """Scores of every baseline on every split's test positives and negatives, with fit seconds."""
    jobs = [(key, *job) for key in splits for job in _baseline_jobs(key, baselines)]
    out = {}
    for key, method, label, dim in progress(jobs, "baselines", logger=logger):
        split, block = splits[key], getattr(model, key.split("/")[0])
        name = f"{key}/{label}"
        started = time.perf_counter()
        scorer = fit_baseline(method, dim, split, baselines, block, seed, name)
        out[name] = {
            "pos": np.asarray(scorer(split["test_pos"]), dtype=np.float64),
            "neg": np.asarray(scorer(split["test_neg"]), dtype=np.float64),
            "seconds": time.perf_counter() - started,
        }
    return out


def evaluate(splits: dict, fits: dict, baseline_scores: dict, hits_k: list[int]) -> pd.DataFrame:
    """One row per (study, mu, method): ROC-AUC, AP, F1, Hits@K, MRR and fit seconds."""
    rows = []
    for name, fit in fits.items():
        study, mu, method = name.split("/")
        split = splits[f"{study}/{mu}"]
        pos, neg = lm_scores(fit, split["test_pos"]), lm_scores(fit, split["test_neg"])
        rows.append(_row(name, pos, neg, hits_k, fit["seconds"], split))
    for name, scores in baseline_scores.items():
        study, mu, method = name.split("/")
        split = splits[f"{study}/{mu}"]
        rows.append(_row(name, scores["pos"], scores["neg"], hits_k, scores["seconds"], split))
    return pd.DataFrame(rows)


def _row(name, pos, neg, hits_k, seconds, split) -> dict:
    study, mu, method = name.split("/")
    row = {"study": study, "mu": float(mu.removeprefix("mu=")), "method": method}
    row.update(link_prediction_scores(pos, neg, hits_k))
    row.update(
        n_train_edges=len(split["train"]), n_test_pos=len(pos), n_test_neg=len(neg),
        fit_seconds=seconds,
    )  # fmt: skip
    return row


def scaling_graphs(scaling, seed: int) -> pd.DataFrame:
    """Erdos-Renyi edges for every size of the scalability study, one ``n_nodes`` group each."""
    frames = [
        graphs.erdos_renyi(n, scaling.mean_degree, substream(seed, "scaling", n)).assign(n_nodes=n)
        for n in scaling.n_nodes
    ]
    return pd.concat(frames, ignore_index=True)


def measure_scaling(edges: pd.DataFrame, mu: float, block, seed: int, device: str) -> pd.DataFrame:
    """Seconds per epoch of leaf matching on Erdos-Renyi graphs of growing size (1:1 negatives)."""
    rows = []
    sizes = sorted(edges.n_nodes.unique())
    for n in progress(sizes, "scaling graphs", logger=logger):
        graph = edges[edges.n_nodes == n][["src", "dst"]].to_numpy()
        split = observed_split(graph, mu, 1, substream(seed, "scaling split", int(n)))
        for trees in block.trees:
            fit = fit_leaf_matching(
                split["train"], split["n_nodes"], settings_of(block, trees),
                substream_seed(seed, "scaling", int(n), trees), device,
            )  # fmt: skip
            seconds = fit["seconds_per_epoch"]
            # the first epoch carries start-up costs; the later ones time the search alone
            steady = seconds[1:] if len(seconds) > 1 else seconds
            rows.append(
                {
                    "n_nodes": int(n),
                    "trees": trees,
                    "n_train_edges": len(split["train"]),
                    "seconds_per_epoch": float(np.mean(steady)),
                    "seconds_per_epoch_per_edge": float(np.mean(steady)) / len(split["train"]),
                }
            )
    return pd.DataFrame(rows)
