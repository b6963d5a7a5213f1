"""ood_chameleon nodes: typed blocks in, the method modules called, data out (no I/O, no plotting here)."""

from __future__ import annotations

import logging
import time
from typing import Any

import pandas as pd
from matplotlib.figure import Figure

from paper_pipelines.common.claims import evaluate_claims
from paper_pipelines.common.progress import progress
from paper_pipelines.common.runtime import apply_runtime, substream, substream_seed

from . import backbone, data, descriptors, evaluation, figures, report, shifts, tasks, zoo
from .parameters import (
    DataParams,
    DescriptorParams,
    EvaluationParams,
    MetaParams,
    RuntimeParams,
    Seed,
    SelectorParams,
    ShiftParams,
    ZooParams,
)
from .selector import SelectorSettings, build_meta_dataset, tree_rules

logger = logging.getLogger(__name__)


# ---------------------------------------------------------------- ingest
def load_digits_pool(data_params: DataParams, seed: Seed) -> dict:
    """The digits' disjoint training / test pools and the fixed feature map (PCA fit on the pool)."""
    pool = data.load_digits_pool(data_params.digits_train_pool, substream(seed, "digits_pool"))
    pool["feature_map"] = data.fit_digit_features(
        pool, data_params.digit_features, data_params.digit_feature_dim,
        data_params.digits_noise, substream(seed, "digit_features"),
    )  # fmt: skip
    return pool


def load_real_pool(
    real_metadata: Any, real_images: Any, backbone_model: Any, data_params: DataParams,
    runtime: RuntimeParams,
) -> dict:  # fmt: skip
    """Frozen-backbone embeddings of the user's dataset when data.sources has 'real', else {}."""
    if "real" not in data_params.sources:
        return {}
    if real_metadata is not None:  # a malformed CSV fails first, naming its columns
        real_metadata = backbone.check_metadata(pd.DataFrame(real_metadata))
    if real_metadata is None or real_images is None or backbone_model is None:
        raise ValueError(
            "ood_chameleon.data.sources has 'real': supply the catalog entries "
            "ood_chameleon.real_metadata, ood_chameleon.real_images and ood_chameleon.backbone "
            "(conf/paper/catalog/ood_chameleon.yml); nothing was written"
        )
    apply_runtime(runtime)
    return backbone.embed_pool(
        pd.DataFrame(real_metadata), real_images, backbone_model, data_params.real_batch_size,
        progress=progress,
    )  # fmt: skip


def make_shift_grid(data_params: DataParams, shift_params: ShiftParams, seed: Seed) -> list[dict]:
    """Mixed triples from the rejection sampler, the single-shift families, unshifted, extras; x sizes."""
    sizes = data_params.sizes()
    kinds = {s.split(":")[0] for s in data_params.sources}
    smallest = min(n for kind in kinds for n in sizes[kind])
    rng = substream(seed, "shifts")
    triples = shifts.sample_valid_shifts(shift_params.n_mixed, smallest, rng)
    triples += shifts.single_shift_families(shift_params.single_shift_values)
    triples += [(0.5, 0.5, 0.5)] if shift_params.unshifted else []
    triples += [tuple(t) for t in shift_params.extra_triples]
    triples = list(dict.fromkeys(triples))
    grid = shifts.task_grid(
        list(data_params.sources), triples, sizes, data_params.synth_var_causal,
        data_params.synth_d_feat, substream(seed, "synth_grid"),
    )  # fmt: skip
    logger.info("shift grid: %d triples, %d tasks", len(triples), len(grid))
    return grid


# ---------------------------------------------------------------- preprocess
def build_tasks(
    shift_grid: list[dict], digits_pool: dict, real_pool: dict | None, seed: Seed
) -> tuple[pd.DataFrame, list[dict]]:
    """Every task's stored record (pool indices, colours or generator seed) and the grid as a table."""
    task_seed = substream_seed(seed, "tasks")
    records = [tasks.task_record(row, digits_pool, real_pool, task_seed) for row in shift_grid]
    return pd.DataFrame(shift_grid), records


def embed_tasks(
    task_index: list[dict], digits_pool: dict, real_pool: dict | None, data_params: DataParams
) -> list[dict]:
    """Training and test arrays of every task in the frozen feature space."""
    feature_map = digits_pool["feature_map"]
    return [
        tasks.embed_task(r, digits_pool, feature_map, real_pool, data_params.digits_noise)
        for r in task_index
    ]


def compute_descriptors(
    task_embeddings: list[dict], descriptor_params: DescriptorParams, seed: Seed
) -> pd.DataFrame:
    """The descriptors of every task's training split (known shifts, n, 2-D spreads, inferred shifts)."""
    rows = []
    for task in progress(task_embeddings, "dataset descriptors", total=len(task_embeddings)):
        shift = {k: task[k] for k in ("sc", "ci", "ai")}
        desc = descriptors.describe_task(
            task["x_tr"], task["y_tr"], task["a_tr"], shift, descriptor_params.reducer,
            substream_seed(seed, "descriptors") % 2**31,
        )  # fmt: skip
        rows.append({"task_id": task["task_id"], "source": task["source"], **desc})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- train / select
def run_algorithm_zoo(
    task_embeddings: list[dict], zoo_params: ZooParams, seed: Seed, runtime: RuntimeParams
) -> pd.DataFrame:
    """Worst-group / average test error of every (task, algorithm, repeat), heads trained batched."""
    device = apply_runtime(runtime)
    settings = zoo.HeadSettings(**zoo_params.model_dump(exclude={"algorithms", "repeats"}))
    started = time.perf_counter()

    def seed_of(kind: str, repeat: int, task_id: int) -> int:
        return substream_seed(seed, "zoo", kind, repeat, int(task_id)) % 2**63

    results = zoo.run_zoo(
        task_embeddings, list(zoo_params.algorithms), settings, zoo_params.repeats, seed_of,
        device, progress,
    )  # fmt: skip
    results.attrs = {}
    logger.info("algorithm zoo: %d heads in %.1f s", len(results), time.perf_counter() - started)
    results["seconds_total"] = time.perf_counter() - started
    return results


def build_meta(
    descriptor_table: pd.DataFrame, zoo_results: pd.DataFrame, zoo_params: ZooParams,
    meta_params: MetaParams,
) -> pd.DataFrame:  # fmt: skip
    """The meta-dataset: one row per task, descriptors + per-algorithm errors + multi-hot winners."""
    return build_meta_dataset(
        descriptor_table, zoo_results, list(zoo_params.algorithms), meta_params.metric,
        meta_params.margin,
    )  # fmt: skip


def fit_selectors(
    meta_dataset: pd.DataFrame, zoo_params: ZooParams, meta_params: MetaParams,
    selector_params: SelectorParams, evaluation_params: EvaluationParams, seed: Seed,
) -> dict:  # fmt: skip
    """The selector and the ablation learners fit on every evaluation's training tasks."""
    settings = SelectorSettings(**selector_params.model_dump(
        include={"hidden", "epochs", "lr", "weight_decay", "knn_k", "tree_depth", "regression_alpha"}
    ))  # fmt: skip
    learners = list(dict.fromkeys([selector_params.learner, *selector_params.ablations]))
    splits = report.evaluation_splits(meta_dataset, evaluation_params, seed)
    fitted = {}
    for key, split in progress(list(splits.items()), "fitting selectors", total=len(splits)):
        meta_fit = meta_dataset[meta_dataset.task_id.isin(split["fit"])]
        fitted[key] = {
            **split,
            "learners": evaluation.fit_learners(
                meta_fit, list(selector_params.features), list(zoo_params.algorithms), learners,
                settings, meta_params.margin, substream_seed(seed, "selector", key) % 2**31,
            ),
        }  # fmt: skip
    return {"headline": selector_params.learner, "splits": fitted}


def extract_tree_rules(
    selectors: dict, zoo_params: ZooParams, evaluation_params: EvaluationParams
) -> str:
    """The depth-3 tree's rules (fit on the headline transfer's training tasks) as text."""
    key = report.headline_split_key(evaluation_params)
    learners = selectors["splits"][key]["learners"]
    if "tree" not in learners:
        return "no tree: add 'tree' to ood_chameleon.selector.ablations"
    return f"# tree fit for {key}\n" + tree_rules(learners["tree"], list(zoo_params.algorithms))


# ---------------------------------------------------------------- evaluate
def evaluate_selection(
    meta_dataset: pd.DataFrame, selectors: dict, zoo_params: ZooParams
) -> pd.DataFrame:
    """Every strategy on every evaluation's test (and val) tasks: wg error, soft / strict 0-1."""
    return report.selection_table(meta_dataset, selectors, list(zoo_params.algorithms))


def summarise_metrics(
    selection: pd.DataFrame, meta_dataset: pd.DataFrame, zoo_results: pd.DataFrame,
    selectors: dict, zoo_params: ZooParams, evaluation_params: EvaluationParams,
) -> dict:  # fmt: skip
    """The metrics contract (report.METRICS) and the numbers behind the spec's checks."""
    return report.build_metrics(
        selection, meta_dataset, zoo_results, selectors, list(zoo_params.algorithms),
        evaluation_params,
    )  # fmt: skip


def tabulate_results(selection: pd.DataFrame) -> pd.DataFrame:
    """One row per strategy, one column per evaluation (mean worst-group error) plus soft 0-1."""
    return report.build_results(selection)


def check_claims(metrics: dict) -> pd.DataFrame:
    """Each claim of report.CLAIMS with our values and whether it holds in this run."""
    return evaluate_claims(report.CLAIMS, metrics, "ood_chameleon")


def plot_selection_errors(selection: pd.DataFrame) -> Figure:
    return figures.selection_error_figure(selection)


def plot_win_rates(meta_dataset: pd.DataFrame, zoo_params: ZooParams) -> Figure:
    return figures.win_rate_figure(meta_dataset, list(zoo_params.algorithms))


def plot_tree(
    selectors: dict, zoo_params: ZooParams, evaluation_params: EvaluationParams
) -> Figure:
    key = report.headline_split_key(evaluation_params)
    return figures.tree_figure(
        selectors["splits"][key]["learners"].get("tree"), list(zoo_params.algorithms), key
    )
