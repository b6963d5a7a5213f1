"""The society across replicates: experts trained per replicate, CentralModels built from saved states,
features and probe scores (the glue between the concept modules and the thin nodes)."""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import torch

from paper_pipelines.common.runtime import substream, substream_seed

from . import baselines, resnet
from .collaboration import CentralModel
from .experts import load_specialist, pooled_features, train_specialist
from .probes import probe_boxes, probe_classification
from .socialisation import selective_weight_values, train_central


def train_experts(pools: list[dict], task: str, expert: Any, seed: int, device: str) -> dict:
    """One specialist per replicate on its own pool (expert_c: classifier, expert_d: detector)."""
    pool_name = "expert_c" if task == "cls" else "expert_d"
    states, seconds = [], []
    for r, society in enumerate(pools):
        started = time.perf_counter()
        model = train_specialist(
            society[pool_name],
            task,
            expert.stem,
            expert.channels,
            expert.epochs,
            expert.lr,
            expert.batch,
            expert.det_cls_weight,
            expert.box_beta,
            substream(seed + r, "expert", task),
            device,
        )
        states.append({k: v.cpu() for k, v in model.state_dict().items()})
        seconds.append(time.perf_counter() - started)
    return {"task": task, "states": states, "seconds": seconds}


TASKS = ("cls", "box")


def checkpoint_expert(
    checkpoint: Any, task: str, pools: list[dict], expert: Any, seed: int
) -> dict:
    """A frozen ResNet specialist from a catalog checkpoint (key-mapped), one state for every replicate;
    its class head (sized to the data's classes) starts from seed alone."""
    entry = "disc.cls_checkpoint" if task == "cls" else "disc.det_checkpoint"
    if checkpoint is None:
        raise ValueError(
            f"disc.expert.source = checkpoint needs the catalog entry {entry} (a "
            "ResNetCheckpointDataset with a local path, conf/paper/catalog/disc.yml)"
        )
    started = time.perf_counter()
    labels = np.concatenate([p["downstream"]["labels"] for p in pools])
    spec = {
        "backbone": "resnet50",
        "task": task,
        "config": resnet.config_values(checkpoint, expert.resnet.model_dump()),
        "n_classes": int(labels.max()) + 1,
        "input_size": expert.input_size,
        "mean": list(expert.mean),
        "std": list(expert.std),
        "dtype": expert.dtype,
    }
    torch.manual_seed(substream_seed(seed, "expert_head", task))
    model = resnet.ResNetSpecialist(
        resnet.resnet_config(spec["config"]), task, spec["n_classes"], spec["input_size"],
        spec["mean"], spec["std"], spec["dtype"],
    )  # fmt: skip
    resnet.load_backbone_(model, checkpoint)
    state = {k: v.cpu() for k, v in model.state_dict().items()}
    return {**spec, "states": [state], "seconds": [time.perf_counter() - started]}


def specialist(record: dict, r: int, expert: Any):
    if record.get("backbone") == "resnet50":
        # one checkpoint serves every replicate
        return resnet.build_resnet_specialist(
            record, record["states"][min(r, len(record["states"]) - 1)]
        )
    return load_specialist(record["states"][r], expert.stem, expert.channels, record["task"])


def tasks_of(pools: list[dict]) -> tuple[str, ...]:
    """The main tasks the pools support (CIFAR-100: classification only)."""
    return tuple(pools[0].get("tasks", TASKS)) if pools else TASKS


def build_central(main_record, aux_record, r, expert, variant, device) -> CentralModel:
    """The replicate-r CentralModel of a variant (the partner is whatever aux record is wired in)."""
    main, aux = specialist(main_record, r, expert), specialist(aux_record, r, expert)
    return CentralModel(main, aux, variant.transfer_levels, variant.selective).to(device)


def social_state(central: CentralModel, main_record: dict) -> dict:
    """The CentralModel's state; for checkpoint specialists without the frozen experts' weights (they
    stay in the expert records: a ResNet-50 pair would cost 200 MB per variant and replicate)."""
    state = {k: v.cpu() for k, v in central.state_dict().items()}
    if main_record.get("backbone") == "resnet50":
        state = {k: v for k, v in state.items() if not k.startswith(("main.", "aux."))}
    return state


def load_social_state(central: CentralModel, state: dict, main_record: dict) -> None:
    if main_record.get("backbone") != "resnet50":
        central.load_state_dict(state)
        return
    result = central.load_state_dict(state, strict=False)
    missing = [k for k in result.missing_keys if not k.startswith(("main.", "aux."))]
    if missing or result.unexpected_keys:
        raise KeyError(
            f"social state mismatch: missing {missing}, unexpected {result.unexpected_keys}"
        )


def train_variant(
    main_record: dict, aux_record: dict, pools: list[dict], variant, social, expert, seed, device
) -> dict:
    """Collaboration modules of one variant trained on every replicate's socialisation pool."""
    task = main_record["task"]
    states, lams, seconds = [], [], []
    if task not in tasks_of(pools):
        return {"task": task, "skipped": True, "states": [], "lam": [], "seconds": [0.0]}
    for r, society in enumerate(pools):
        started = time.perf_counter()
        # the transfer blocks' and ConfidNets' initial weights come from seed + r alone, not from
        # whatever drew from torch's global generator earlier in the process (node order, --nodes)
        torch.manual_seed(substream_seed(seed + r, "social_init", task))
        central = build_central(main_record, aux_record, r, expert, variant, device)
        fit = train_central(
            central,
            society["social"],
            task,
            variant,
            social.epochs,
            social.lr,
            social.batch,
            expert.det_cls_weight,
            expert.box_beta,
            substream(seed + r, "social", task),
        )
        states.append(social_state(central, main_record))
        lams.append(float(fit["lam"]))
        seconds.append(time.perf_counter() - started)
    return {"task": task, "states": states, "lam": lams, "seconds": seconds}


def probe_scores(features: np.ndarray, pool: dict, task: str, probe: Any) -> float:
    """The downstream probe of the task on frozen features (labelled fraction -> the rest)."""
    if task == "cls":
        return probe_classification(
            features, pool["labels"], pool["labelled"], probe.cls_C, probe.max_iter
        )
    return probe_boxes(features, pool["boxes"], pool["labelled"], probe.box_alpha, probe.iou_thr)


def score_variant(
    social_record: dict, main_record, aux_record, pools, variant, probe, expert, device
) -> dict:
    """Probe scores of a trained variant on each replicate's downstream pool, and its w_main values."""
    task = social_record["task"]
    scores, w_main = [], []
    if social_record.get("skipped"):
        nan = [float("nan")] * len(pools)
        return {"task": task, "scores": nan, "w_main": [], "train_seconds": [0.0]}
    for r, society in enumerate(pools):
        central = build_central(main_record, aux_record, r, expert, variant, device)
        load_social_state(central, social_record["states"][r], main_record)
        central.lam = social_record["lam"][r]
        down = society["downstream"]
        scores.append(probe_scores(pooled_features(central, down["images"]), down, task, probe))
        w = selective_weight_values(central, down["images"][~down["labelled"]])
        w_main.extend(np.round(w, 5).tolist())
    return {
        "task": task,
        "scores": scores,
        "w_main": w_main,
        "train_seconds": social_record["seconds"],
    }


def score_baselines(expert_c: dict, expert_d: dict, pools: list[dict], probe, expert) -> dict:
    """Up-E and concat on both tasks from the frozen experts' pooled features."""
    out: dict[str, list[float]] = {
        k: [] for k in ("upe_cls", "concat_cls", "upe_box", "concat_box")
    }
    for r, society in enumerate(pools):
        down = society["downstream"]
        f_c = pooled_features(specialist(expert_c, r, expert), down["images"])
        f_d = pooled_features(specialist(expert_d, r, expert), down["images"])
        for task, main, aux in (("cls", f_c, f_d), ("box", f_d, f_c)):
            if task not in tasks_of(pools):
                out[f"upe_{task}"].append(float("nan"))
                out[f"concat_{task}"].append(float("nan"))
                continue
            out[f"upe_{task}"].append(probe_scores(baselines.upe_features(main), down, task, probe))
            out[f"concat_{task}"].append(
                probe_scores(baselines.concat_features(main, aux), down, task, probe)
            )
    out["expert_c_seconds"] = expert_c["seconds"]
    out["expert_d_seconds"] = expert_d["seconds"]
    return out
