"""Node functions of the `tca` pipeline: validate the parameter block, call the method, return data."""

from __future__ import annotations

import copy
import logging
from typing import Any

import numpy as np
import pandas as pd
import torch
from matplotlib.figure import Figure

from paper_pipelines.common.params import ParameterError, validate_params
from paper_pipelines.common.runtime import resolve_device, seed_everything, set_torch_threads
from paper_pipelines.pipelines.tca import digits_c, evaluation, real_data
from paper_pipelines.pipelines.tca.adaptation import (
    accuracy_of_logits,
    collect_domain,
    make_prepare,
    model_from_record,
    probe_memory,
    state_fingerprint,
    stream_order,
    tca_on_outputs,
)
from paper_pipelines.pipelines.tca.parameters import (
    DataParams,
    ForgettingParams,
    LinearTCAParams,
    RealDataParams,
    RuntimeParams,
    SourceParams,
    TTAParams,
)
from paper_pipelines.pipelines.tca.source_model import (
    SmallCNN,
    build_model,
    map_checkpoint_keys,
    normalise,
    to_float_images,
    train_source,
)
from paper_pipelines.pipelines.tca.tta_methods import Tent, run_stream

logger = logging.getLogger(__name__)

DIGITS_CLASSES = 10


def _runtime(runtime: dict[str, Any]) -> str:
    rt = validate_params(RuntimeParams, runtime, "tca.runtime")
    set_torch_threads(rt.torch_threads)
    return resolve_device(rt.device)


def validate_all(
    data: dict[str, Any],
    real: dict[str, Any],
    source: dict[str, Any],
    tta: dict[str, Any],
    linear_tca: dict[str, Any],
    forgetting: dict[str, Any],
    runtime: dict[str, Any],
) -> tuple[DataParams, RealDataParams]:
    """Check every parameter block before the first output is written (a bad value must write nothing)."""
    dp = validate_params(DataParams, data, "tca.data")
    rp = validate_params(RealDataParams, real, "tca.real_data")
    validate_params(SourceParams, source, "tca.source")
    tp = validate_params(TTAParams, tta, "tca.tta")
    validate_params(LinearTCAParams, linear_tca, "tca.linear_tca")
    validate_params(ForgettingParams, forgetting, "tca.forgetting")
    rt = validate_params(RuntimeParams, runtime, "tca.runtime")
    try:
        resolve_device(rt.device)
    except ValueError as exc:
        raise ParameterError(f"parameter tca.runtime.device: {exc}") from None
    if not rp.enabled:
        _check_digits(dp)
    _check_batch(tp.batch_size, rp.num_classes if rp.enabled else DIGITS_CLASSES)
    return dp, rp


def _check_batch(batch_size: int, num_classes: int) -> None:
    if batch_size < num_classes:
        raise ParameterError(
            f"parameter tca.tta.batch_size = {batch_size} is smaller than the number of classes "
            f"({num_classes}): BN/Tent batch statistics and T3A supports would come from fewer "
            f"samples than classes; use a batch size >= {num_classes}"
        )


def load_source_data(
    data: dict[str, Any],
    real: dict[str, Any],
    source: dict[str, Any],
    tta: dict[str, Any],
    linear_tca: dict[str, Any],
    forgetting: dict[str, Any],
    runtime: dict[str, Any],
    seed: int,
) -> dict[str, Any]:
    """Ingest: sklearn digits at image_size, stratified source (train) / target-content (test) split."""
    dp, rp = validate_all(data, real, source, tta, linear_tca, forgetting, runtime)
    if rp.enabled:
        logger.info(
            "real_data.enabled: the source model comes from %s, no source split", rp.checkpoint
        )
        return {"kind": "real"}
    images, labels = digits_c.load_digits_images(dp.image_size)
    train_idx, test_idx = digits_c.stratified_split(labels, dp.test_frac, seed)
    logger.info(
        "digits: %d source (train) and %d target (test) images", len(train_idx), len(test_idx)
    )
    return {
        "kind": "digits",
        "X_train": digits_c.to_uint8(images[train_idx]),
        "y_train": labels[train_idx],
        "X_test": digits_c.to_uint8(images[test_idx]),
        "y_test": labels[test_idx],
    }


def _check_digits(dp: DataParams) -> None:
    try:
        dp.check_digits()
    except ValueError as exc:
        raise ParameterError(str(exc)) from None


def make_corrupted_sets(
    source_splits: dict[str, Any], data: dict[str, Any], real: dict[str, Any], seed: int
) -> dict[str, Any]:
    """Preprocess: Digits-C domains (corruption x severity) as uint8 images, or a CIFAR-10-C manifest."""
    dp = validate_params(DataParams, data, "tca.data")
    rp = validate_params(RealDataParams, real, "tca.real_data")
    if rp.enabled:
        manifest = real_data.domain_manifest(
            rp.data_dir, dp.corruptions, dp.severities, rp.max_per_domain, seed
        )
        return {"kind": "real", "domains": manifest}
    _check_digits(dp)
    clean = source_splits["X_test"].astype(np.float32) / 255.0
    domains = {}
    for name in dp.corruptions:
        for severity in dp.severities:
            domains[digits_c.domain_key(name, severity)] = digits_c.corrupt(
                clean, name, severity, seed
            )
        logger.info("Digits-C: generated %s at severities %s", name, dp.severities)
    return {"kind": "digits", "domains": domains, "labels": source_splits["y_test"]}


def _domain(corrupted_sets: dict[str, Any], key: str) -> tuple[np.ndarray, np.ndarray]:
    if corrupted_sets["kind"] == "real":
        return real_data.load_domain(corrupted_sets["domains"][key])
    return corrupted_sets["domains"][key], corrupted_sets["labels"]


def train_source_model(
    source_splits: dict[str, Any],
    source: dict[str, Any],
    real: dict[str, Any],
    runtime: dict[str, Any],
    seed: int,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Train: the Digits-C source CNN (or the user's ResNet checkpoint); returns (model record, training log)."""
    sp = validate_params(SourceParams, source, "tca.source")
    rp = validate_params(RealDataParams, real, "tca.real_data")
    _runtime(runtime)
    seed_everything(seed)
    if rp.enabled:
        model = build_model(rp.arch, rp.num_classes)
        state = torch.load(rp.checkpoint, map_location="cpu", weights_only=True)
        missing, unexpected = model.load_state_dict(map_checkpoint_keys(state), strict=False)
        if missing:
            raise ValueError(
                f"checkpoint {rp.checkpoint} does not fit {rp.arch}: missing keys {missing[:5]}..."
            )
        record = {
            "arch": rp.arch,
            "num_classes": rp.num_classes,
            "in_channels": 3,
            "input_size": rp.input_size,
            "mean": rp.mean,
            "std": rp.std,
            "state_dict": model.state_dict(),
        }
        return record, {"checkpoint": rp.checkpoint, "unexpected_keys": list(unexpected)}
    model = SmallCNN(in_channels=1, width=sp.width, num_classes=DIGITS_CLASSES)
    log = train_source(
        model,
        source_splits["X_train"],
        source_splits["y_train"],
        epochs=sp.epochs,
        lr=sp.lr,
        weight_decay=sp.weight_decay,
        batch_size=sp.batch_size,
        shift_px=sp.shift_px,
        seed=seed,
    )
    log["clean_test_accuracy"] = _clean_accuracy(model, source_splits)
    logger.info("source model: clean test accuracy %.2f%%", log["clean_test_accuracy"])
    record = {
        "arch": sp.arch,
        "num_classes": DIGITS_CLASSES,
        "width": sp.width,
        "in_channels": 1,
        "input_size": None,
        "mean": [0.5],
        "std": [0.5],
        "state_dict": model.state_dict(),
    }
    return record, log


@torch.no_grad()
def _clean_accuracy(model: torch.nn.Module, splits: dict[str, Any]) -> float:
    model.eval()
    logits = model(normalise(to_float_images(splits["X_test"])))
    return accuracy_of_logits(logits, splits["y_test"])


def collect_tta_outputs(
    source_model: dict[str, Any],
    corrupted_sets: dict[str, Any],
    tta: dict[str, Any],
    linear_tca: dict[str, Any],
    data: dict[str, Any],
    runtime: dict[str, Any],
    seed: int,
) -> dict[str, Any]:
    """Adapt: every TTA method over every domain's stream; stores z, logits and time per sample set."""
    tp = validate_params(TTAParams, tta, "tca.tta")
    lp = validate_params(LinearTCAParams, linear_tca, "tca.linear_tca")
    dp = validate_params(DataParams, data, "tca.data")
    device = _runtime(runtime)
    seed_everything(seed)
    num_classes = int(source_model["num_classes"])
    _check_batch(tp.batch_size, num_classes)
    model = model_from_record(source_model, device)
    prepare = make_prepare(source_model)
    keys = list(corrupted_sets["domains"])
    outputs: dict[str, Any] = {"domains": {}, "labels": {}, "num_classes": num_classes}
    for i, key in enumerate(keys, 1):
        images, labels = _domain(corrupted_sets, key)
        outputs["domains"][key] = collect_domain(
            model,
            images,
            key,
            list(tp.methods),
            batch_size=tp.batch_size,
            shuffle=tp.shuffle,
            tent_lr=tp.tent_lr,
            steps=tp.steps,
            t3a_filter_k=tp.t3a_filter_k,
            prepare=prepare,
            device=device,
            seed=seed,
            num_classes=num_classes,
        )
        outputs["labels"][key] = labels
        accs = {
            m: round(accuracy_of_logits(o["logits"], labels), 1)
            for m, o in outputs["domains"][key].items()
        }
        logger.info("[%d/%d] %s: %s", i, len(keys), key, accs)
    if tp.memory_probe and "tent" in tp.methods:
        key = next(k for k in keys if k.endswith(f"@{dp.metric_severity}"))
        images, _ = _domain(corrupted_sets, key)
        outputs["memory"] = probe_memory(
            model,
            images,
            batch_size=tp.batch_size,
            tent_lr=tp.tent_lr,
            steps=tp.steps,
            tca_kwargs=_tca_kwargs(lp, lp.w_solver),
            prepare=prepare,
            device=device,
            num_classes=num_classes,
        )
        logger.info("peak extra tensor memory on %s: %s", key, outputs["memory"])
    return outputs


def _tca_kwargs(lp: LinearTCAParams, solver: str) -> dict[str, Any]:
    return {
        "filter_k": lp.filter_k,
        "w_solver": solver,
        "w_iters": lp.w_iters,
        "w_lr": lp.w_lr,
        "eig_eps": lp.eig_eps,
        "chunk": lp.chunk,
    }


def apply_linear_tca(
    tta_outputs: dict[str, Any],
    source_model: dict[str, Any],
    linear_tca: dict[str, Any],
    runtime: dict[str, Any],
) -> dict[str, Any]:
    """LinearTCA (on Source) and LinearTCA+ (on BN/Tent/T3A) once per domain, weights untouched."""
    lp = validate_params(LinearTCAParams, linear_tca, "tca.linear_tca")
    device = _runtime(runtime)
    model = model_from_record(source_model, device)
    before = state_fingerprint(model)
    solvers = [lp.w_solver] + (
        [lp.extra_solver] if lp.extra_solver and lp.extra_solver != lp.w_solver else []
    )
    rows: dict[str, Any] = {}
    for key, outputs in tta_outputs["domains"].items():
        rows[key] = tca_on_outputs(
            outputs,
            tta_outputs["labels"][key],
            int(tta_outputs["num_classes"]),
            plug_into=list(lp.plug_into),
            solvers=solvers,
            filter_k=lp.filter_k,
            proportions=lp.proportions,
            w_iters=lp.w_iters,
            w_lr=lp.w_lr,
            eig_eps=lp.eig_eps,
            chunk=lp.chunk,
            device=device,
            source_classifier=model.classifier,
        )
    after = state_fingerprint(model)
    logger.info("TCA applied to %d domains; weights unchanged: %s", len(rows), before == after)
    infos = [row["info"] for domain in rows.values() for row in domain.values()]
    singular = sum(1 for i in infos if i.get("singular_target") or i.get("singular_pseudo_source"))
    if singular:
        logger.warning(
            "%d of %d TCA steps met a singular covariance (e.g. dead ReLU channels or fewer "
            "pseudo-source rows than dimensions); regularised with shrinkage eig_eps=%g",
            singular,
            len(infos),
            lp.eig_eps,
        )
    return {"domains": rows, "fingerprint_before": before, "fingerprint_after": after}


def forgetting_check(
    source_model: dict[str, Any],
    tca_outputs: dict[str, Any],
    corrupted_sets: dict[str, Any],
    source_splits: dict[str, Any],
    tta: dict[str, Any],
    data: dict[str, Any],
    forgetting: dict[str, Any],
    runtime: dict[str, Any],
    seed: int,
) -> dict[str, Any]:
    """Clean accuracy after LinearTCA (bit-identical weights) vs after continual Tent over all domains."""
    fp = validate_params(ForgettingParams, forgetting, "tca.forgetting")
    tp = validate_params(TTAParams, tta, "tca.tta")
    dp = validate_params(DataParams, data, "tca.data")
    device = _runtime(runtime)
    seed_everything(seed)
    result: dict[str, Any] = {
        "weights_unchanged_by_tca": tca_outputs["fingerprint_before"]
        == tca_outputs["fingerprint_after"],
        "fingerprint": tca_outputs["fingerprint_after"],
    }
    if not fp.enabled or source_splits.get("kind") != "digits":
        logger.info("forgetting check skipped (disabled or no clean split at paper scale)")
        return result
    model = model_from_record(source_model, device)
    if state_fingerprint(model) != tca_outputs["fingerprint_after"]:
        raise RuntimeError("the source model differs from the one TCA used")
    clean = _clean_accuracy(model, source_splits)
    result["clean_acc_source"] = round(clean, 3)
    result["clean_acc_after_linear_tca"] = round(clean, 3)  # same weights, hence same predictions
    prepare = make_prepare(source_model)
    num_classes = int(source_model["num_classes"])
    tent = Tent(copy.deepcopy(model), lr=tp.tent_lr, steps=tp.steps)
    keys = [k for k in corrupted_sets["domains"] if k.endswith(f"@{dp.metric_severity}")]
    for key in keys:  # continual: no reset between domains
        images, _ = _domain(corrupted_sets, key)
        x = torch.as_tensor(images)
        order = stream_order(len(x), tp.shuffle, seed, key)
        run_stream(
            tent,
            x,
            order,
            batch_size=tp.batch_size,
            min_last=num_classes,
            prepare=prepare,
            device=device,
        )
    # Clean test set through the adapted model in Tent's own inference mode (batch statistics).
    x = torch.as_tensor(source_splits["X_test"]).unsqueeze(1)
    order = np.arange(len(x))
    with torch.no_grad():
        probe = _FrozenTent(tent.model)
        out = run_stream(
            probe,
            x,
            order,
            batch_size=tp.batch_size,
            min_last=num_classes,
            prepare=prepare,
            device=device,
        )
    result["clean_acc_after_continual_tent"] = round(
        accuracy_of_logits(out.logits, source_splits["y_test"]), 3
    )
    result["continual_tent_domains"] = keys
    logger.info("forgetting: %s", result)
    return result


class _FrozenTent:
    """Forward of a Tent-adapted model without further updates."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model

    def __call__(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        z = self.model.featurizer(x)
        return z, self.model.classifier(z)


def build_tables(
    tta_outputs: dict[str, Any],
    tca_outputs: dict[str, Any],
    linear_tca: dict[str, Any],
    data: dict[str, Any],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Evaluate: per-domain per-method accuracy (and seconds), and a per-method cost table."""
    lp = validate_params(LinearTCAParams, linear_tca, "tca.linear_tca")
    dp = validate_params(DataParams, data, "tca.data")
    rows = []
    for key, outputs in tta_outputs["domains"].items():
        name, severity = digits_c.parse_domain_key(key)
        labels = tta_outputs["labels"][key]
        merged = {**outputs, **tca_outputs["domains"][key]}
        for method, out in merged.items():
            rows.append(
                {
                    "corruption": name,
                    "severity": severity,
                    "method": method,
                    "accuracy": accuracy_of_logits(out["logits"], labels),
                    "seconds": float(out["seconds"]),
                    "n": len(labels),
                }
            )
    accuracy = pd.DataFrame(rows)
    at = accuracy[accuracy["severity"] == dp.metric_severity]
    cost = at.groupby("method", as_index=False)["seconds"].sum()
    cost["kind"] = ["tca step" if "+" in m else "tta stream" for m in cost["method"]]
    memory = tta_outputs.get("memory")
    if memory:
        probed = {
            "source": memory["source"],
            "tent": memory["tent"],
            "source+tca": memory["linear_tca_step"],
        }
        cost["peak_bytes"] = [float(probed.get(m, np.nan)) for m in cost["method"]]
    tent_s = float(cost.loc[cost["method"] == "tent", "seconds"].sum()) or np.nan
    cost["time_ratio_to_tent"] = cost["seconds"] / tent_s
    cost["w_solver"] = [lp.w_solver if m.endswith("+tca") else "" for m in cost["method"]]
    return accuracy, cost


def report(
    accuracy_table: pd.DataFrame,
    cost_table: pd.DataFrame,
    forgetting: dict[str, Any],
    training_log: dict[str, Any],
    data: dict[str, Any],
    linear_tca: dict[str, Any],
    tta_outputs: dict[str, Any],
) -> tuple[dict[str, Any], pd.DataFrame, Figure, Figure, Figure]:
    """Evaluate: metrics contract, results table (method x metric) and the three figures."""
    dp = validate_params(DataParams, data, "tca.data")
    lp = validate_params(LinearTCAParams, linear_tca, "tca.linear_tca")
    metrics = evaluation.summary_metrics(
        accuracy_table, cost_table, forgetting, dp.metric_severity, lp.w_solver
    )
    if "clean_test_accuracy" in training_log:
        metrics["clean_acc_source_training"] = round(float(training_log["clean_test_accuracy"]), 3)
    memory = tta_outputs.get("memory")
    if memory:
        metrics["tca_peak_bytes"] = memory["linear_tca_step"]
        metrics["tent_peak_bytes"] = memory["tent"]
        metrics["embedding_bytes"] = memory["embedding_bytes"]
        metrics["embedding_dim"] = memory["d"]
    results = evaluation.results_table(accuracy_table, cost_table, dp.metric_severity)
    return (
        metrics,
        results,
        evaluation.accuracy_plot(accuracy_table, dp.metric_severity),
        evaluation.severity_plot(accuracy_table),
        evaluation.cost_plot(cost_table),
    )
