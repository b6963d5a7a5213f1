"""The metrics contract, the claims, the evaluation splits, the selection table, the metrics dict and the
results table of the evaluate stage."""

from __future__ import annotations

from typing import Any

import pandas as pd

from paper_pipelines.common.claims import Claim
from paper_pipelines.common.reporting import check_metrics_contract, results_table
from paper_pipelines.common.runtime import substream

from . import evaluation
from .metrics import gap_closure
from .parameters import EvaluationParams
from .selector import tree_top_features

# The metrics contract: mean worst-group test error of the selected algorithm on the random
# 80/20 task split (mean of the split repeats) and on the headline unseen-dataset transfer
# (evaluation.transfers[0]: synthetic + digits:ge5 -> digits:parity by default).
METRICS: tuple[str, ...] = (
    "wg_err_chameleon",
    "wg_err_random",
    "wg_err_erm",
    "soft01_acc",
    "transfer_wg_err_chameleon",
    "transfer_wg_err_best_fixed",
    "transfer_gap_closure",
)

SPEC = "spec acceptance check"
ABSTRACT = "abstract (arXiv 2410.02735, ICML 2025); the table cells were not available to the spec"
CLAIMS: tuple[Claim, ...] = (
    Claim(
        id="selector_beats_naive_choices",
        statement="On held-out tasks of a random 80/20 task split (mean of 3 splits) the algorithm "
        "OOD-Chameleon picks has a worst-group error at least 0.05 below random selection and 0.10 "
        "below always-ERM, and is a ground-truth winner (soft 0-1) on at least 70 % of the tasks.",
        condition="wg_err_chameleon <= wg_err_random - 0.05 and wg_err_chameleon <= wg_err_erm - 0.10 "
        "and soft01_acc >= 0.70",
        source=f"{SPEC} 2 (prototype: 0.375 vs 0.460 and 0.566, soft 0-1 0.78)",
    ),
    Claim(
        id="transfer_ties_best_fixed",
        statement="Trained on synthetic + digits:ge5 tasks and tested on the unseen digits:parity "
        "dataset, the selector is within 0.01 of the best fixed algorithm (in hindsight) and of the "
        "global-best heuristic, and closes >= 60 % of the random-to-oracle gap.",
        condition="transfer_wg_err_chameleon <= transfer_wg_err_best_fixed + 0.01 and "
        "transfer_wg_err_chameleon <= transfer_wg_err_global_best + 0.01 and transfer_gap_closure >= 0.6",
        source=f"{SPEC} 3 (prototype: 0.403 vs 0.406, gap closure 0.80)",
    ),
    Claim(
        id="tree_rules_read_descriptors",
        statement="The depth-3 tree's root and second-level splits use the shift / size / spread "
        "descriptors, and its rules are saved as text.",
        condition="tree_top_splits_on_descriptors",
        source=f"{SPEC} 5; {ABSTRACT}: non-trivial decision rules",
    ),
    Claim(
        id="beats_every_fixed_algorithm",
        statement="On held-out tasks (random split) the selector beats the best single algorithm.",
        condition="wg_err_chameleon < wg_err_best_fixed",
        source=f"{ABSTRACT}: outperforms every individual algorithm; {SPEC} 4 (reported)",
        gates=False,
    ),
    Claim(
        id="transfer_beats_every_fixed_algorithm",
        statement="On the unseen digits:parity dataset the selector beats the best single algorithm.",
        condition="transfer_wg_err_chameleon < transfer_wg_err_best_fixed",
        source=f"{ABSTRACT}: unseen datasets; {SPEC} 4 (prototype only tied: 0.403 vs 0.406)",
        gates=False,
    ),
    Claim(
        id="transfer_beats_heuristics",
        statement="On the unseen dataset the selector beats random selection and the global best.",
        condition="transfer_wg_err_chameleon < transfer_wg_err_random and "
        "transfer_wg_err_chameleon < transfer_wg_err_global_best",
        source=f"{ABSTRACT}: outperforms simple selection heuristics",
        gates=False,
    ),
    Claim(
        id="synthetic_only_transfers_to_digits",
        statement="Trained on synthetic tasks only, the selector beats the best fixed algorithm on "
        "the digits tasks.",
        condition="synth_to_digits_wg_err_chameleon < synth_to_digits_wg_err_best_fixed",
        source="spec prototype (did not transfer: 0.525 vs undersampling's 0.441); reported",
        gates=False,
    ),
)

HEADLINE_FIGURE = "selection_error_plot"
DESCRIPTOR_FEATURES = {"n", "sc", "ci", "ai", "c_intra", "a_intra"}


# ---------------------------------------------------------------- splits
def headline_split_key(evaluation_params: EvaluationParams) -> str:
    return evaluation_params.transfers[0].name


def evaluation_splits(
    meta: pd.DataFrame, evaluation_params: EvaluationParams, seed: int
) -> dict[str, dict[str, Any]]:
    """Every split the selectors are fit on: the random split's repeats, then each transfer."""
    splits: dict[str, dict[str, Any]] = {}
    ids = meta.task_id.to_numpy()
    for r in range(evaluation_params.split_repeats):
        fit, test = evaluation.random_split(
            ids, evaluation_params.test_frac, substream(seed, "random_split", r)
        )
        splits[f"random_split/{r}"] = {
            "evaluation": "random_split", "repeat": r, "fit": fit, "val": fit[:0], "test": test,
        }  # fmt: skip
    for transfer in evaluation_params.transfers:
        fit, val, test = evaluation.transfer_split(
            meta, list(transfer.train_sources), list(transfer.test_sources),
            evaluation_params.val_frac, substream(seed, "transfer", transfer.name),
        )  # fmt: skip
        if len(fit) == 0 or len(test) == 0:
            raise ValueError(
                f"ood_chameleon.evaluation.transfers {transfer.name!r} has {len(fit)} training and "
                f"{len(test)} test tasks; check its sources against ood_chameleon.data.sources"
            )
        splits[transfer.name] = {
            "evaluation": transfer.name, "repeat": 0, "fit": fit, "val": val, "test": test,
        }  # fmt: skip
    return splits


# ---------------------------------------------------------------- the selection table
def selection_table(meta: pd.DataFrame, selectors: dict, algorithms: list[str]) -> pd.DataFrame:
    """One row per (evaluation, repeat, part, strategy)."""
    rows = []
    by_id = meta.set_index("task_id", drop=False)
    for split in selectors["splits"].values():
        meta_fit = by_id.loc[split["fit"]]
        for part in ("test", "val"):
            if len(split[part]) == 0:
                continue
            meta_part = by_id.loc[split[part]]
            for row in evaluation.strategy_rows(
                meta_fit, meta_part, split["learners"], algorithms, selectors["headline"]
            ):
                rows.append(
                    {"evaluation": split["evaluation"], "repeat": split["repeat"], "part": part,
                     "n_tasks": len(meta_part), **row}
                )  # fmt: skip
    return pd.DataFrame(rows)


def _mean_test(selection: pd.DataFrame, name: str) -> pd.DataFrame:
    part = selection[(selection.evaluation == name) & (selection.part == "test")]
    return part.groupby("strategy", sort=False)[["wg_err", "soft01_acc", "strict01_acc"]].mean()


# ---------------------------------------------------------------- metrics and results
def build_metrics(
    selection: pd.DataFrame,
    meta: pd.DataFrame,
    zoo_results: pd.DataFrame,
    selectors: dict,
    algorithms: list[str],
    evaluation_params: EvaluationParams,
) -> dict:
    """The contract keys, every strategy's mean error per evaluation, win rates and the tree's splits."""
    metrics: dict[str, Any] = {"n_tasks": int(len(meta)), "algorithms": list(algorithms)}
    names = ["random_split", *[t.name for t in evaluation_params.transfers]]
    for name in names:
        table = _mean_test(selection, name)
        prefix = "" if name == "random_split" else f"{name}_"
        for strategy, row in table.iterrows():
            metrics[f"{prefix}wg_err_{strategy.lower().replace('-', '_')}"] = float(row.wg_err)
            metrics[f"{prefix}soft01_{strategy.lower().replace('-', '_')}"] = float(row.soft01_acc)
        fixed = table.loc[[a for a in algorithms if a in table.index], "wg_err"]
        metrics[f"{prefix}wg_err_best_fixed"] = float(fixed.min())
        metrics[f"{prefix}best_fixed_algorithm"] = str(fixed.idxmin())
        metrics[f"{prefix}soft01_acc"] = float(table.loc["chameleon", "soft01_acc"])
        metrics[f"{prefix}gap_closure"] = gap_closure(
            float(table.loc["random", "wg_err"]),
            float(table.loc["chameleon", "wg_err"]),
            float(table.loc["oracle", "wg_err"]),
        )
    # the contract's transfer_* keys are the headline transfer's
    head = f"{evaluation_params.transfers[0].name}_"
    for key in list(metrics):
        if key.startswith(head):
            metrics["transfer_" + key.removeprefix(head)] = metrics[key]
    metrics["random_split_repeats"] = int(evaluation_params.split_repeats)
    for source, part in meta.groupby("source"):
        for a in algorithms:
            metrics[f"win_rate_{source.replace(':', '_')}_{a}"] = float(part[f"win_{a}"].mean())
    key = headline_split_key(evaluation_params)
    tree = selectors["splits"][key]["learners"].get("tree")
    top = tree_top_features(tree) if tree is not None else []
    metrics["tree_top_features"] = top
    # non-trivial rules: the top three splits use at least two different shift / size / spread descriptors
    metrics["tree_top_splits_on_descriptors"] = (
        set(top) <= DESCRIPTOR_FEATURES and len(set(top)) >= 2
    )
    metrics["zoo_heads"] = int(len(zoo_results))
    metrics["zoo_seconds"] = (
        float(zoo_results["seconds_total"].iloc[0]) if len(zoo_results) else 0.0
    )
    metrics["mean_zoo_steps"] = float(zoo_results["steps"].mean())
    # keys the reported claims read, null when that evaluation is not configured (claim: not reproduced)
    for k in ("synth_to_digits_wg_err_chameleon", "synth_to_digits_wg_err_best_fixed"):
        metrics.setdefault(k, float("nan"))
    return check_metrics_contract(metrics, METRICS, "ood_chameleon")


def build_results(selection: pd.DataFrame) -> pd.DataFrame:
    """One row per strategy: its kind, then mean wg error and soft 0-1 on each evaluation's test tasks."""
    test = selection[selection.part == "test"]
    order = list(dict.fromkeys(test.strategy))
    rows = []
    for strategy in order:
        sub = test[test.strategy == strategy]
        row: dict[str, Any] = {"method": strategy, "kind": sub.kind.iloc[0]}
        for name, part in sub.groupby("evaluation", sort=False):
            row[f"{name}_wg_err"] = float(part.wg_err.mean())
            row[f"{name}_soft01"] = float(part.soft01_acc.mean())
        rows.append(row)
    return results_table(rows)
