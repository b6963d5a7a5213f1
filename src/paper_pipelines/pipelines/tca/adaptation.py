"""Protocol of the official scripts: per target domain, run a TTA method over the shuffled stream, store
every sample's (z, logits), then apply TCA once to the stored set (LinearTCA+ = any method + TCA)."""

from __future__ import annotations

import copy
import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from paper_pipelines.common.progress import progress
from paper_pipelines.pipelines.tca import data
from paper_pipelines.pipelines.tca.baselines import FrozenTent, Tent, make_method, run_stream
from paper_pipelines.pipelines.tca.linear_tca import class_proportions, linear_tca
from paper_pipelines.pipelines.tca.metrics import (
    accuracy_of_logits,
    peak_tensor_bytes,
    state_fingerprint,
)
from paper_pipelines.pipelines.tca.source_model import (
    FeaturizerClassifier,
    build_model,
    clean_accuracy,
    to_float_images,
)

logger = logging.getLogger(__name__)


def model_from_record(record: dict[str, Any], device: str = "cpu") -> FeaturizerClassifier:
    """Rebuild the source model from its versioned record (arch, sizes, state dict)."""
    model = build_model(
        record["arch"],
        int(record["num_classes"]),
        int(record.get("width", 16)),
        int(record.get("in_channels", 1)),
    )
    model.load_state_dict(record["state_dict"])
    return model.to(device).eval()


def make_prepare(record: dict[str, Any]) -> Callable[[torch.Tensor], torch.Tensor]:
    """uint8 batch -> model input: [0, 1], optional resize (224 for the paper's ResNets), mean/std."""
    size = record.get("input_size")
    mean = torch.tensor(record["mean"], dtype=torch.float32).view(1, -1, 1, 1)
    std = torch.tensor(record["std"], dtype=torch.float32).view(1, -1, 1, 1)

    def prepare(x: torch.Tensor) -> torch.Tensor:
        x = to_float_images(x)
        if size and x.shape[-1] != size:
            x = F.interpolate(x, size=(size, size), mode="bilinear", align_corners=False)
        return (x - mean.to(x.device)) / std.to(x.device)

    return prepare


def stream_order(n: int, shuffle: bool, seed: int, key: str) -> np.ndarray:
    """The sample order of one domain; every method sees the same stream."""
    if not shuffle:
        return np.arange(n)
    digest = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
    return np.random.default_rng([seed, digest]).permutation(n)


def collect_domain(
    source: FeaturizerClassifier,
    images: np.ndarray,
    key: str,
    methods: list[str],
    *,
    batch_size: int,
    shuffle: bool,
    tent_lr: float,
    steps: int,
    t3a_filter_k: int,
    prepare: Callable[[torch.Tensor], torch.Tensor],
    device: str,
    seed: int,
    num_classes: int,
) -> dict[str, dict[str, Any]]:
    """Every method on one domain: {method: {z, logits, seconds}}; each method starts from the source model."""
    x = torch.as_tensor(images)
    order = stream_order(len(x), shuffle, seed, key)
    outputs = {}
    for name in methods:
        adapter = make_method(name, source, tent_lr=tent_lr, steps=steps, t3a_filter_k=t3a_filter_k)
        out = run_stream(
            adapter,
            x,
            order,
            batch_size=batch_size,
            min_last=num_classes,
            prepare=prepare,
            device=device,
        )
        outputs[name] = {
            "z": out.z.cpu(),
            "logits": out.logits.cpu(),
            "seconds": out.seconds,
            # The head TCA classifies with: the adapted model's linear classifier (never updated
            # by these methods; T3A's prototypes are not used by TCA, as in the official code).
            "head": {
                "weight": adapter.classifier.weight.detach().cpu().clone(),
                "bias": adapter.classifier.bias.detach().cpu().clone(),
            },
        }
    return outputs


def tca_on_outputs(
    outputs: dict[str, dict[str, Any]],
    labels: np.ndarray,
    num_classes: int,
    *,
    plug_into: list[str],
    solvers: list[str],
    filter_k: int,
    proportions: str,
    w_iters: int,
    w_lr: float,
    eig_eps: float,
    chunk: int,
    device: str,
    source_classifier: Callable[[torch.Tensor], torch.Tensor] | None = None,
) -> dict[str, dict[str, Any]]:
    """LinearTCA(+) on the stored outputs of each base method, plus the mean-only ablation (W = I) on Source.

    Returns {row name: {logits, seconds, info}} with row names ``<base>+tca`` (primary solver),
    ``source+tca_<solver>`` (other solvers) and ``source+mean_only``.
    """
    rows = {}
    y = torch.as_tensor(labels)
    jobs = []
    for base in plug_into:
        if base not in outputs:
            continue
        jobs.append((f"{base}+tca", base, solvers[0]))
    if "source" in outputs:
        jobs += [(f"source+tca_{s}", "source", s) for s in solvers[1:]]
        jobs.append(("source+mean_only", "source", "identity"))
    for row, base, solver in jobs:
        z = outputs[base]["z"].to(device)
        logits = outputs[base]["logits"].to(device)
        head = {k: v.to(device) for k, v in outputs[base]["head"].items()}

        def classifier(h: torch.Tensor, head: dict = head) -> torch.Tensor:
            return F.linear(h, head["weight"], head["bias"])

        if base == "source" and source_classifier is not None:
            classifier = source_classifier  # the live source head: its weights must stay unchanged

        proportion = class_proportions(proportions, num_classes, logits=logits, labels=y)
        sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
        sync()
        start = time.perf_counter() if device.startswith("cuda") else time.process_time()
        result = linear_tca(
            z,
            logits,
            classifier,
            num_classes,
            filter_k=filter_k,
            proportion=proportion,
            w_solver=solver,
            w_iters=w_iters,
            w_lr=w_lr,
            eig_eps=eig_eps,
            chunk=chunk,
        )
        sync()
        seconds = (
            time.perf_counter() if device.startswith("cuda") else time.process_time()
        ) - start
        rows[row] = {"logits": result.logits.cpu(), "seconds": seconds, "info": result.info}
    return rows


def probe_memory(
    source: FeaturizerClassifier,
    images: np.ndarray,
    *,
    batch_size: int,
    tent_lr: float,
    steps: int,
    tca_kwargs: dict[str, Any],
    prepare: Callable[[torch.Tensor], torch.Tensor],
    device: str,
    num_classes: int,
) -> dict[str, int]:
    """Peak extra tensor bytes of the source stream, Tent's stream and the TCA step on one domain."""
    x = torch.as_tensor(images)
    order = np.arange(len(x))
    kwargs = {
        "batch_size": batch_size,
        "min_last": num_classes,
        "prepare": prepare,
        "device": device,
    }
    src = make_method("source", source, tent_lr=tent_lr, steps=steps, t3a_filter_k=100)
    out, source_bytes = peak_tensor_bytes(lambda: run_stream(src, x, order, **kwargs), device)
    tent = Tent(_copy(source, device), lr=tent_lr, steps=steps)
    _, tent_bytes = peak_tensor_bytes(lambda: run_stream(tent, x, order, **kwargs), device)
    z, logits = out.z.to(device), out.logits.to(device)
    _, tca_bytes = peak_tensor_bytes(
        lambda: linear_tca(z, logits, src.classifier, num_classes, **tca_kwargs), device
    )
    return {
        "source": source_bytes,
        "tent": tent_bytes,
        "linear_tca_step": tca_bytes,
        "embedding_bytes": int(z.numel() * z.element_size()),
        "d": int(z.shape[1]),
        "n": int(z.shape[0]),
    }


def _copy(model: FeaturizerClassifier, device: str) -> FeaturizerClassifier:
    return copy.deepcopy(model).to(device)


def domain_data(corrupted_sets: dict[str, Any], key: str) -> tuple[np.ndarray, np.ndarray]:
    """(uint8 images, labels) of one target domain: generated Digits-C, or read from the CIFAR-10-C folder."""
    if corrupted_sets["kind"] == "real":
        return data.load_domain(corrupted_sets["domains"][key])
    return corrupted_sets["domains"][key], corrupted_sets["labels"]


def tca_kwargs(linear_tca_params: Any, solver: str) -> dict[str, Any]:
    """The TCA step's keyword arguments from the `linear_tca` block, with ``solver`` for W."""
    lp = linear_tca_params
    return {
        "filter_k": lp.filter_k,
        "w_solver": solver,
        "w_iters": lp.w_iters,
        "w_lr": lp.w_lr,
        "eig_eps": lp.eig_eps,
        "chunk": lp.chunk,
    }


def collect_all_domains(
    source_record: dict[str, Any],
    corrupted_sets: dict[str, Any],
    *,
    methods: list[str],
    batch_size: int,
    shuffle: bool,
    tent_lr: float,
    steps: int,
    t3a_filter_k: int,
    memory_probe: bool,
    probe_severity: int,
    tca_step: dict[str, Any],
    device: str,
    seed: int,
) -> dict[str, Any]:
    """Every TTA method over every domain's stream (z, logits, seconds), plus the memory probe."""
    num_classes = int(source_record["num_classes"])
    model = model_from_record(source_record, device)
    prepare = make_prepare(source_record)
    keys = list(corrupted_sets["domains"])
    outputs: dict[str, Any] = {"domains": {}, "labels": {}, "num_classes": num_classes}
    for key in progress(keys, desc="tca: TTA streams per domain", logger=logger):
        images, labels = domain_data(corrupted_sets, key)
        outputs["domains"][key] = collect_domain(
            model,
            images,
            key,
            methods,
            batch_size=batch_size,
            shuffle=shuffle,
            tent_lr=tent_lr,
            steps=steps,
            t3a_filter_k=t3a_filter_k,
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
        logger.info("%s: %s", key, accs)
    if memory_probe and "tent" in methods:
        key = next(k for k in keys if k.endswith(f"@{probe_severity}"))
        images, _ = domain_data(corrupted_sets, key)
        outputs["memory"] = probe_memory(
            model,
            images,
            batch_size=batch_size,
            tent_lr=tent_lr,
            steps=steps,
            tca_kwargs=tca_step,
            prepare=prepare,
            device=device,
            num_classes=num_classes,
        )
        logger.info("peak extra tensor memory on %s: %s", key, outputs["memory"])
    return outputs


def tca_on_all_domains(
    tta_outputs: dict[str, Any],
    source_record: dict[str, Any],
    *,
    solvers: list[str],
    plug_into: list[str],
    filter_k: int,
    proportions: str,
    w_iters: int,
    w_lr: float,
    eig_eps: float,
    chunk: int,
    device: str,
) -> dict[str, Any]:
    """LinearTCA (on Source) and LinearTCA+ (on each base method) once per domain, weights untouched."""
    model = model_from_record(source_record, device)
    before = state_fingerprint(model)
    rows: dict[str, Any] = {}
    for key, outputs in tta_outputs["domains"].items():
        rows[key] = tca_on_outputs(
            outputs,
            tta_outputs["labels"][key],
            int(tta_outputs["num_classes"]),
            plug_into=plug_into,
            solvers=solvers,
            filter_k=filter_k,
            proportions=proportions,
            w_iters=w_iters,
            w_lr=w_lr,
            eig_eps=eig_eps,
            chunk=chunk,
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
            eig_eps,
        )
    return {"domains": rows, "fingerprint_before": before, "fingerprint_after": after}


def forgetting_record(
    source_record: dict[str, Any],
    tca_outputs: dict[str, Any],
    corrupted_sets: dict[str, Any],
    source_splits: dict[str, Any],
    *,
    enabled: bool,
    severity: int,
    batch_size: int,
    shuffle: bool,
    tent_lr: float,
    steps: int,
    device: str,
    seed: int,
) -> dict[str, Any]:
    """Clean accuracy after LinearTCA (bit-identical weights) vs after continual Tent over all domains."""
    result: dict[str, Any] = {
        "weights_unchanged_by_tca": tca_outputs["fingerprint_before"]
        == tca_outputs["fingerprint_after"],
        "fingerprint": tca_outputs["fingerprint_after"],
    }
    if not enabled or source_splits.get("kind") != "digits":
        logger.info("forgetting check skipped (disabled or no clean split at paper scale)")
        return result
    model = model_from_record(source_record, device)
    if state_fingerprint(model) != tca_outputs["fingerprint_after"]:
        raise RuntimeError("the source model differs from the one TCA used")
    clean = clean_accuracy(model, source_splits["X_test"], source_splits["y_test"])
    result["clean_acc_source"] = round(clean, 3)
    result["clean_acc_after_linear_tca"] = round(clean, 3)  # same weights, hence same predictions
    prepare = make_prepare(source_record)
    num_classes = int(source_record["num_classes"])
    tent = Tent(copy.deepcopy(model), lr=tent_lr, steps=steps)
    keys = [k for k in corrupted_sets["domains"] if k.endswith(f"@{severity}")]
    stream = {
        "batch_size": batch_size,
        "min_last": num_classes,
        "prepare": prepare,
        "device": device,
    }
    for key in keys:  # continual: no reset between domains
        images, _ = domain_data(corrupted_sets, key)
        x = torch.as_tensor(images)
        run_stream(tent, x, stream_order(len(x), shuffle, seed, key), **stream)
    # Clean test set through the adapted model in Tent's own inference mode (batch statistics).
    x = torch.as_tensor(source_splits["X_test"]).unsqueeze(1)
    with torch.no_grad():
        out = run_stream(FrozenTent(tent.model), x, np.arange(len(x)), **stream)
    result["clean_acc_after_continual_tent"] = round(
        accuracy_of_logits(out.logits, source_splits["y_test"]), 3
    )
    result["continual_tent_domains"] = keys
    logger.info("forgetting: %s", result)
    return result
