"""The experiment grid: every split seed x every method (CPL-IQA, its ablations and the supervised
controls) with the same network, labels and schedule. Wiring only; the maths is in labels.py,
propagation.py and training.py (excluded from mutation testing in tests/pipelines/cpl_iqa/mutation.toml).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from paper_pipelines.common.progress import progress
from paper_pipelines.common.runtime import substream_seed

from . import baselines
from . import features as nss
from .labels import expected_score, unscale_score
from .model import build_network
from .training import Stage2Setting, predict_distribution, run_stage2, train_supervised

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Variant:
    """One Stage-2 method: which Stage-1 conversion it starts from and what it does with U."""

    name: str
    conversion: str
    setting: Stage2Setting


def stage2_variants(labels, stage2, ablations, baselines) -> list[Variant]:
    """CPL-IQA, the supervised controls and the ablations the parameters ask for."""
    main = labels.conversion
    out = [
        Variant("cpl", main, Stage2Setting("cpl", stage2.gamma, stage2.confidence)),
        Variant("supervised", main, Stage2Setting("supervised", stage2.gamma, "none")),
    ]
    if baselines.supervised_all_labels:
        out.append(
            Variant("supervised_all_labels", main, Stage2Setting("oracle", stage2.gamma, "none"))
        )
    if ablations.unit_weights:
        out.append(Variant("cpl_unit_weights", main, Stage2Setting("cpl", stage2.gamma, "none")))
    if ablations.paper_gamma is not None and ablations.paper_gamma != stage2.gamma:
        name = f"cpl_gamma_{ablations.paper_gamma:g}"
        out.append(
            Variant(name, main, Stage2Setting("cpl", ablations.paper_gamma, stage2.confidence))
        )
    for conversion in ablations.conversions:
        if conversion != main:
            setting = Stage2Setting("cpl", stage2.gamma, stage2.confidence)
            out.append(Variant(f"cpl_{conversion}", conversion, setting))
    return out


def warmup_conversions(labels, ablations) -> list[str]:
    return list(dict.fromkeys([labels.conversion, *ablations.conversions]))


def network_inputs(images: np.ndarray, features: np.ndarray, split: dict, backbone: str):
    """uint8 NCHW images, or NSS features standardised on the split's labelled + unlabelled rows."""
    if backbone == "feature_mlp":
        train = np.concatenate([split["labeled"], split["unlabeled"]])
        return torch.as_tensor(nss.standardise(features, features[train]), dtype=torch.float32)
    return torch.from_numpy(np.ascontiguousarray(images.transpose(0, 3, 1, 2)))


def _network(model_p, bins, in_dim, seed, *stream, backbone_state=None):
    torch.manual_seed(substream_seed(seed, "init", *stream))
    return build_network(
        model_p.backbone, model_p.embed_dim, bins, model_p.channels, model_p.hidden, in_dim,
        backbone_state,
    )  # fmt: skip


def _predictions(model, x, idx, method, k, device, bins, low, high) -> list[dict]:
    probs = predict_distribution(model, x[idx], device)
    scores = unscale_score(expected_score(probs, bins), low, high, bins)
    return [
        {"method": method, "split": k, "image_id": int(i), "prediction": float(s)}
        for i, s in zip(idx, scores, strict=True)
    ]


def run_warmups(
    images, features, vectors, splits, model_p, labels, stage1, ablations, seed, device,
    low, high, backbone_state=None,
) -> tuple[dict, pd.DataFrame]:  # fmt: skip
    """Stage 1 for every split seed and every conversion used; state dicts and test predictions."""
    states: dict = {}
    rows: list[dict] = []
    jobs = [(c, k) for c in warmup_conversions(labels, ablations) for k in range(len(splits))]
    for conversion, k in progress(jobs, "cpl_iqa stage 1 (warm-up)", logger=logger):
        split = splits[k]
        x = network_inputs(images, features, split, model_p.backbone)
        net = _network(model_p, labels.bins, features.shape[1], seed, k,
                       backbone_state=backbone_state)  # fmt: skip
        generator = torch.Generator().manual_seed(substream_seed(seed, "stage1", k))
        v = torch.as_tensor(vectors[conversion][split["labeled"]], dtype=torch.float32)
        train_supervised(
            net, x[split["labeled"]], v, stage1.epochs, stage1.lr, stage1.weight_decay,
            stage1.batch_size, generator, device,
        )  # fmt: skip
        states.setdefault(conversion, {})[f"split{k}"] = {
            name: t.detach().cpu() for name, t in net.state_dict().items()
        }
        if conversion == labels.conversion:
            rows += _predictions(net, x, split["test"], "stage1_warmup", k, device, labels.bins,
                                 low, high)  # fmt: skip
    return states, pd.DataFrame(rows)


def run_stage2_variants(
    stage1_states, images, features, vectors, mos_scaled, splits, model_p, labels, stage2,
    ablations, baselines, seed, device, low, high,
) -> tuple[dict, pd.DataFrame, pd.DataFrame]:  # fmt: skip
    """Every Stage-2 variant on every split seed, each from its own copy of the Stage-1 model."""
    variants = stage2_variants(labels, stage2, ablations, baselines)
    states: dict = {}
    rows: list[dict] = []
    logs: list[dict] = []
    jobs = [(v, k) for k in range(len(splits)) for v in variants]
    for variant, k in progress(jobs, "cpl_iqa stage 2 (methods x splits)", logger=logger):
        split = splits[k]
        x = network_inputs(images, features, split, model_p.backbone)
        net = _network(model_p, labels.bins, features.shape[1], seed, k)
        net.load_state_dict(stage1_states[variant.conversion][f"split{k}"])
        generator = torch.Generator().manual_seed(substream_seed(seed, "stage2", k))
        lab, unl = split["labeled"], split["unlabeled"]
        graph_extra = None
        if stage2.graph_features != "embedding":
            train = np.concatenate([lab, unl])
            graph_extra = nss.standardise(features, features[train])[train]
        net, log = run_stage2(
            net, x[lab], vectors[variant.conversion][lab], x[unl], variant.setting, stage2,
            labels.bins, mos_scaled[unl], generator, device,
            oracle_u=vectors[variant.conversion][unl], graph_extra=graph_extra,
        )  # fmt: skip
        for row in log:
            logs.append({"method": variant.name, "split": k, **row})
        states.setdefault(variant.name, {})[f"split{k}"] = {
            name: t.detach().cpu() for name, t in net.state_dict().items()
        }
        rows += _predictions(net, x, split["test"], variant.name, k, device, labels.bins, low, high)
    return states, pd.DataFrame(rows), pd.DataFrame(logs)


def run_classical_baselines(
    features, images, mos, splits, baselines_params
) -> tuple[dict, pd.DataFrame]:
    """NSS + SVR fitted on each split's labelled images; BRISQUE (lower = better, negated) if installed."""
    models, rows = {}, []
    brisque = baselines.brisque_scores(images) if baselines_params.brisque_pretrained else None
    for k, split in enumerate(splits):
        test = split["test"]
        if baselines_params.nss_svr:
            models[f"split{k}"] = baselines.fit_nss_svr(
                features[split["labeled"]], mos[split["labeled"]],
                baselines_params.svr_c, baselines_params.svr_gamma,
            )  # fmt: skip
            rows += _rows("nss_svr", k, test, models[f"split{k}"].predict(features[test]))
        if brisque is not None:
            rows += _rows("brisque_pretrained", k, test, -brisque[test])
    return models, pd.DataFrame(rows, columns=["method", "split", "image_id", "prediction"])


def _rows(method: str, k: int, idx: np.ndarray, values: np.ndarray) -> list[dict]:
    return [
        {"method": method, "split": k, "image_id": int(i), "prediction": float(v)}
        for i, v in zip(idx, values, strict=True)
    ]
