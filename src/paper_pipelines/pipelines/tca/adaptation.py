"""Protocol of the official scripts: per target domain, run a TTA method over the shuffled stream, store
every sample's (z, logits), then apply TCA once to the stored set (LinearTCA+ = any method + TCA)."""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import torch
from torch.nn import functional as F

from paper_pipelines.pipelines.tca.cost import peak_tensor_bytes
from paper_pipelines.pipelines.tca.linear_tca import class_proportions, linear_tca
from paper_pipelines.pipelines.tca.source_model import (
    FeaturizerClassifier,
    build_model,
    to_float_images,
)
from paper_pipelines.pipelines.tca.tta_methods import (
    Tent,
    make_method,
    run_stream,
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


def state_fingerprint(model: torch.nn.Module) -> str:
    """sha256 of every parameter and buffer: proves that TCA leaves the weights bit-identical."""
    digest = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        digest.update(name.encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


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
    import copy

    return copy.deepcopy(model).to(device)


@torch.no_grad()
def accuracy_of_logits(logits: torch.Tensor, labels: np.ndarray) -> float:
    """Top-1 accuracy in percent."""
    return 100.0 * float((logits.argmax(1).cpu() == torch.as_tensor(labels)).float().mean())
