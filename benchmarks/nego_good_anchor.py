"""Side-by-side anchor: GOOD's own GIN + ERM (divelab/GOOD, PyPI graph-ood 0.1.0) and GSAT's reference
extractor (Graph-COM/GSAT) against our ERM and GSAT-lite, on our generated basis split.

The basis split is built exactly as the default run builds it (conf/base/parameters/nego.yml, the
``basis`` generator sub-stream, the same run seeds), and every method is selected on OOD-validation
accuracy (the best epoch, ties to the earlier) and scored on the OOD test part:

- GOOD ERM: GOOD's ``GIN`` and ``ERM`` from its registry and its own ``kernel.train.train`` loop
  (Adam, MultiStepLR, its batch filter and its best-checkpoint logic), configured by GOOD's
  ``GOODMotif/basis/covariate/ERM.yaml`` (hidden 300, dropout 0.5, batch 32, lr 1e-3, 200 epochs,
  milestone 150), with the epochs and the milestone scaled to ``--epochs``. GOOD is given no
  id_val loader, so its checkpoint rule reduces to "best OOD-validation score", which is ours.
- GSAT: GSAT's ``GIN``, ``ExtractorMLP`` and ``GSAT`` module (its concrete sampling, its
  info loss with the r schedule, its ``run_one_epoch``) with ``src/configs/GIN-spmotif.yml`` (the
  synthetic-motif setting), epochs and r-decay interval scaled to ``--epochs``; selected by our rule.
- ours: ``nego.training.fit`` for ``erm`` and ``gsat_lite`` with the default parameters.
- ``--matched``: ours again, with the other side's settings put into our parameter blocks
  (:func:`matched_blocks`): ERM with GOOD's width, layers, pooling, dropout, read-out, batch, lr;
  GSAT-lite with GSAT's. What our blocks cannot express is printed under ``unmatched``
  (:data:`UNMATCHED`).

Neither repository is part of this one and nothing is fetched here. Install GOOD outside the project
(``pip install --no-deps graph-ood==0.1.0`` plus the small packages it imports), give it a stand-in
``torch_sparse`` (GOOD only uses ``SparseTensor`` in isinstance checks; GSAT uses ``transpose``) and a
``torch_scatter`` forwarding to ``torch_geometric.utils.scatter`` on PYTHONPATH, and pass a checkout of
divelab/GOOD (for its configs/) with --good and a checkout of Graph-COM/GSAT with --gsat. GOOD 0.1.0's
GINConv calls MessagePassing internals of PyG 2.0 (``__check_input__``, ``__collect__``,
``inspector.distribute``); :func:`good_compat` points those names at PyG 2.8's equivalents (and restores
``np.float``); GSAT's conv layers get PyG's generic propagate (:func:`gsat_compat`). Without
GOOD or --good it prints why and exits 0; without --gsat it skips the GSAT pair.

    PYTHONPATH=<stand-ins> <venv with GOOD>/bin/python benchmarks/nego_good_anchor.py \\
        --good ~/src/GOOD --gsat ~/src/GSAT --seeds 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from paper_pipelines.common.runtime import substream_seed  # noqa: E402
from paper_pipelines.pipelines.nego import metrics, nodes, study, training  # noqa: E402
from paper_pipelines.pipelines.nego import parameters as P  # noqa: E402

SPLIT = "basis"
GOOD_CONFIG = Path("configs/GOOD_configs/GOODMotif/basis/covariate/ERM.yaml")
GSAT_CONFIG = Path("src/configs/GIN-spmotif.yml")


def default_blocks() -> dict:
    """The default run's typed parameter blocks (conf/base/parameters/nego.yml)."""
    raw = yaml.safe_load((ROOT / "conf/base/parameters/nego.yml").read_text())["nego"]
    models = {"data": P.DataParams, "split": P.SplitParams, "model": P.ModelParams,
              "prompt": P.PromptParams, "extractor": P.ExtractorParams, "loss": P.LossParams,
              "train": P.TrainParams}  # fmt: skip
    blocks = {k: m(**raw[k]) for k, m in models.items()}
    return {**blocks, "seed": int(raw["seed"])}


def basis_parts(blocks: dict) -> dict[str, list]:
    """The basis split's five parts as Data lists; only the ``basis`` plan is generated, from its own
    sub-stream, so the graphs are those of the default run's basis split."""
    split = blocks["split"].model_copy(update={"kinds": [SPLIT]})
    graphs = nodes.generate_motif_graphs(None, blocks["data"], split, blocks["seed"])
    ids = nodes.make_ood_splits(graphs, split)
    return study.build_datasets(graphs.set_index("graph_id"), ids)[SPLIT]


def ours(method: str, blocks: dict, sets: dict, run_seed: int, epochs: int) -> dict:
    """Our method as the default run trains it (nego.training.fit), scored on the OOD test part."""
    b = blocks
    train = b["train"].model_copy(update={"epochs": epochs})
    cfg = study.run_config(method, b["data"], b["model"], b["prompt"], b["extractor"], b["loss"],
                           train, SPLIT, len(b["data"].motifs))  # fmt: skip
    val = {"id_val": sets["id_val"], "ood_val": sets["ood_val"]}
    fitted = training.fit(cfg, sets["train"], val, run_seed)
    out = training.predict(fitted["model"], sets["ood_test"], 256, "cpu")
    y = training.labels_of(sets["ood_test"])
    auc = metrics.mask_auc(out["mask"], out["edge_gt"]) if "mask" in out else float("nan")
    return {"ood_test": metrics.accuracy(y, out["pred"]), "mask_auc": auc,
            "epoch": fitted["epoch"], "seconds": fitted["seconds"]}  # fmt: skip


# Settings of the other side that our parameter blocks cannot express (printed with --matched).
UNMATCHED = {
    "ours_erm_matched": [
        "GOOD's MultiStepLR (lr x 0.1 at the scaled milestone); ours keeps lr constant",
        "GOOD's GIN MLPs are hidden -> 2 hidden -> hidden; PyG's GIN (ours) hidden -> hidden -> hidden",
        "GOOD applies batch norm and dropout after the last GIN layer too; PyG's GIN does not",
        "GOOD keeps the ragged last batch; ours drops it (2000 = 62 x 32 + 16)",
    ],
    "ours_gsat_lite_matched": [
        "GSAT's r schedule (0.9 down to final_r); ours holds r at final_r from the first epoch",
        "GSAT's extractor reads the classifier GIN's embeddings (one GIN); ours has its own GIN",
        "GSAT's extractor MLP (2h -> 4h -> h -> 1, instance norm, dropout 0.5); ours 2h -> h -> 1",
        "GSAT's GIN: a Linear node encoder, batch norm only inside each conv MLP, ReLU and dropout "
        "after every layer; ours: PyG's GIN with batch norm inside and between layers",
        "GSAT's info loss on the edge scores before symmetrising; ours on the symmetrised mask",
    ],
}


def matched_blocks(blocks: dict, settings: dict) -> dict:
    """The default blocks with the other side's settings (hidden, layers, pool, dropout, norm,
    head, batch, lr, weight decay; GSAT also r and the info-loss weight) put into them."""
    model = blocks["model"].model_copy(
        update={k: settings[k] for k in ("hidden", "layers", "pool", "dropout", "norm", "head")}
    )
    train = blocks["train"].model_copy(
        update={
            "batch_size": settings["batch"],
            "lr": settings["lr"],
            "weight_decay": settings["weight_decay"],
        }  # fmt: skip
    )
    out = {**blocks, "model": model, "train": train}
    if "final_r" in settings:
        out["extractor"] = blocks["extractor"].model_copy(
            update={
                "r": settings["final_r"],
                "sampling": "concrete",
                "temperature": 1.0,
                "symmetric": True,
            }  # fmt: skip
        )
        out["loss"] = blocks["loss"].model_copy(update={"lambda_ib": settings["info_coef"]})
    return {k: (type(v).model_validate(v.model_dump()) if hasattr(v, "model_dump") else v)
            for k, v in out.items()}  # fmt: skip


def good_compat() -> None:
    """Let GOOD 0.1.0 run on NumPy 2 (its annotations name ``np.float``) and its GINConv.propagate
    (written for PyG 2.0) find PyG 2.8's MessagePassing internals."""
    if "float" not in np.__dict__:
        np.float = float  # removed in NumPy 2; GOOD.kernel.evaluation uses it in a type hint
    from GOOD.networks.models import GINs
    from torch_geometric.inspector import Inspector
    from torch_geometric.nn.conv import MessagePassing

    conv = GINs.GINConv
    conv.__check_input__ = MessagePassing._check_input
    conv.__collect__ = MessagePassing._collect
    conv.__user_args__ = property(lambda self: self._user_args)
    conv.__fused_user_args__ = property(lambda self: self._fused_user_args)
    if not hasattr(Inspector, "distribute"):
        Inspector.distribute = Inspector.collect_param_data


def good_erm(good: Path, sets: dict, run_seed: int, epochs: int, workdir: Path) -> dict:
    """GOOD's GIN + ERM through GOOD's config reader, data loaders and training loop."""
    good_compat()
    from GOOD import config_summoner
    from GOOD.data import create_dataloader
    from GOOD.kernel.train import train
    from GOOD.networks.model_manager import load_model
    from GOOD.ood_algorithms.ood_manager import load_ood_alg
    from GOOD.utils.args import args_parser
    from GOOD.utils.initial import init

    raw = yaml.safe_load((good / GOOD_CONFIG).read_text())
    milestone = max(1, round(raw["train"]["mile_stones"][0] * epochs / raw["train"]["max_epoch"]))
    argv = ["--config_path", str(good / GOOD_CONFIG), "--max_epoch", str(epochs),
            "--mile_stones", str(milestone), "--ckpt_root", str(workdir / "good"),
            "--random_seed", str(run_seed)]  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        config = config_summoner(args_parser(argv))
    config.device = torch.device("cpu")
    # What GOOD's dataset loader would set from GOODMotif's meta information.
    config.dataset.update(dataset_type="syn", dim_node=1, dim_edge=0, num_envs=3, num_classes=3)
    config.model.model_level = "graph"
    config.metric.set_score_func("Accuracy")
    config.metric.set_loss_func("Multi-label classification")
    init(config)
    loader = create_dataloader({"train": sets["train"], "val": sets["ood_val"],
                                "test": sets["ood_test"]}, config)  # fmt: skip
    loader["eval_train"] = None  # only logged into GOOD's checkpoints; skipped to save CPU
    model = load_model(config.model.model_name, config)
    algorithm = load_ood_alg(config.ood.ood_alg, config)
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        train(model, loader, algorithm, config)
    seconds = time.perf_counter() - start
    best = torch.load(Path(config.ckpt_dir) / "best.ckpt", map_location="cpu", weights_only=False)
    return {"ood_test": float(best["test_score"]), "ood_val": float(best["val_score"]),
            "epoch": int(best["epoch"]) + 1, "seconds": seconds,
            "settings": {"hidden": config.model.dim_hidden, "layers": config.model.model_layer,
                         "pool": config.model.global_pool, "dropout": config.model.dropout_rate,
                         "norm": "batch_norm", "head": "linear",
                         "batch": config.train.train_bs, "lr": config.train.lr,
                         "weight_decay": config.train.weight_decay,
                         "epochs": epochs, "milestone": milestone}}  # fmt: skip


def gsat_compat() -> None:
    """GSAT's conv layers pass ``edge_atten`` to propagate but declare ``# propagate_type: (x: ...)``,
    which PyG >= 2.5 compiles into a propagate without it; route them to the generic propagate."""
    from models import conv_layers
    from torch_geometric.nn.conv import MessagePassing

    def generic_propagate(self, *args, **kwargs):
        return MessagePassing.propagate(self, *args, **kwargs)

    for conv in (conv_layers.GINConv, conv_layers.GINEConv):
        conv.propagate = generic_propagate


class _NoWriter:
    """GSAT logs to tensorboard on every batch; nothing is kept here."""

    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def gsat_reference(gsat: Path, sets: dict, run_seed: int, epochs: int, workdir: Path) -> dict:
    """GSAT's GIN + extractor + loss (its own run_one_epoch), selected on OOD-validation accuracy."""
    sys.path.insert(0, str(gsat / "src"))
    import run_gsat
    from utils import get_model, set_seed

    gsat_compat()

    local = yaml.safe_load((gsat / GSAT_CONFIG).read_text())
    model_cfg, shared, method = local["model_config"], local["shared_config"], local["GSAT_config"]
    interval = max(1, round(method["decay_interval"] * epochs / method["epochs"]))
    method = {**method, "epochs": epochs, "decay_interval": interval}
    shared = {**shared, "num_viz_samples": 0}
    batch = local["data_config"]["batch_size"]

    def labelled(part: str) -> list:
        out = []
        for d in sets[part]:
            d = d.clone()
            d.edge_label = d.edge_gt  # GSAT's explanation ground truth: the motif edges
            out.append(d)
        return out

    from torch_geometric.loader import DataLoader

    set_seed(run_seed)
    loaders = {"train": DataLoader(labelled("train"), batch_size=batch, shuffle=True),
               "valid": DataLoader(labelled("ood_val"), batch_size=batch, shuffle=False),
               "test": DataLoader(labelled("ood_test"), batch_size=batch, shuffle=False)}  # fmt: skip
    with contextlib.redirect_stdout(io.StringIO()):
        clf = get_model(1, 0, 3, False, model_cfg, "cpu")
        extractor = run_gsat.ExtractorMLP(model_cfg["hidden_size"], shared)
        params = list(extractor.parameters()) + list(clf.parameters())
        optimiser = torch.optim.Adam(params, lr=method["lr"], weight_decay=0)
        model = run_gsat.GSAT(clf, extractor, optimiser, None, _NoWriter(), "cpu", workdir,
                              "nego_basis", 3, False, run_seed, method, shared)  # fmt: skip
    best = {"ood_val": -1.0}
    start = time.perf_counter()
    for epoch in range(epochs):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            model.run_one_epoch(loaders["train"], epoch, "train", False)
            val = model.run_one_epoch(loaders["valid"], epoch, "valid", False)
            test = model.run_one_epoch(loaders["test"], epoch, "test", False)
        if val[2] > best["ood_val"]:  # (att_auroc, precision@k, clf_acc, clf_roc, loss)
            best = {"ood_val": val[2], "ood_test": test[2], "mask_auc": test[0], "epoch": epoch + 1}
    return {**best, "seconds": time.perf_counter() - start,
            "settings": {"hidden": model_cfg["hidden_size"], "layers": model_cfg["n_layers"],
                         "pool": "sum", "dropout": model_cfg["dropout_p"], "norm": "batch_norm",
                         "head": "linear", "batch": batch, "lr": method["lr"],
                         "weight_decay": 0.0, "epochs": epochs, "final_r": method["final_r"],
                         "r": f"{method.get('init_r', 0.9)} -{method['decay_r']} every {interval}"
                              f" epochs to {method['final_r']}",
                         "info_coef": method["info_loss_coef"]}}  # fmt: skip


def summarise(rows: list[dict]) -> dict:
    keys = ("ood_test", "mask_auc", "seconds", "epoch")
    out = {}
    for k in keys:
        vals = [r[k] for r in rows if k in r]
        if vals:
            out[k] = round(float(np.mean(vals)), 4)
            out[f"{k}_std"] = round(float(np.std(vals)), 4)
    out["per_seed_ood_test"] = [round(float(r["ood_test"]), 4) for r in rows]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--good", type=Path, default=None, help="a checkout of divelab/GOOD")
    parser.add_argument("--gsat", type=Path, default=None, help="a checkout of Graph-COM/GSAT")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=None, help="default: nego.train.epochs")
    parser.add_argument(
        "--matched", action="store_true", help="also train ours with the other side's settings"
    )
    args = parser.parse_args()
    try:
        import GOOD  # noqa: F401
    except ImportError as error:
        print(f"skipped: GOOD is not importable ({error}); see this script's docstring")
        return 0
    if args.good is None or not (args.good / GOOD_CONFIG).is_file():
        print(f"skipped: pass --good <a checkout of divelab/GOOD holding {GOOD_CONFIG}>")
        return 0
    torch.set_num_threads(1)
    blocks = default_blocks()
    epochs = args.epochs or blocks["train"].epochs
    sets = basis_parts(blocks)
    runs: dict[str, list[dict]] = {"good_erm": [], "ours_erm": []}
    use_gsat = args.gsat is not None and (args.gsat / GSAT_CONFIG).is_file()
    if args.matched:
        runs["ours_erm_matched"] = []
    if use_gsat:
        runs.update(gsat_reference=[], ours_gsat_lite=[])
        if args.matched:
            runs["ours_gsat_lite_matched"] = []
    with tempfile.TemporaryDirectory() as tmp:
        for k in range(args.seeds):
            run_seed = substream_seed(blocks["seed"], "train", SPLIT, k)  # the default run's seeds
            work = Path(tmp) / f"seed{k}"
            work.mkdir()
            runs["good_erm"].append(good_erm(args.good, sets, run_seed, epochs, work))
            runs["ours_erm"].append(ours("erm", blocks, sets, run_seed, epochs))
            if args.matched:
                matched = matched_blocks(blocks, runs["good_erm"][-1]["settings"])
                runs["ours_erm_matched"].append(
                    {**ours("erm", matched, sets, run_seed, epochs),
                     "settings": {**matched["model"].model_dump(),
                                  **matched["train"].model_dump(include={"batch_size", "lr"})}}
                )  # fmt: skip
            if use_gsat:
                runs["gsat_reference"].append(
                    gsat_reference(args.gsat, sets, run_seed, epochs, work)
                )
                runs["ours_gsat_lite"].append(ours("gsat_lite", blocks, sets, run_seed, epochs))
                if args.matched:
                    matched = matched_blocks(blocks, runs["gsat_reference"][-1]["settings"])
                    run = ours("gsat_lite", matched, sets, run_seed, epochs)
                    run["settings"] = {**matched["model"].model_dump(),
                                       **matched["train"].model_dump(include={"batch_size", "lr"}),
                                       "r": matched["extractor"].r,
                                       "lambda_ib": matched["loss"].lambda_ib}  # fmt: skip
                    runs["ours_gsat_lite_matched"].append(run)
            print(json.dumps({m: r[-1] for m, r in runs.items()}, default=str), flush=True)
    result = {"split": SPLIT, "seeds": args.seeds, "epochs": epochs,
              "sizes": {p: len(d) for p, d in sets.items()},
              "settings": {m: r[0].get("settings", "conf/base/parameters/nego.yml")
                           for m, r in runs.items()},
              **{m: summarise(r) for m, r in runs.items()}}  # fmt: skip
    if args.matched:
        result["unmatched"] = {m: UNMATCHED[m] for m in runs if m in UNMATCHED}
    if not use_gsat:
        result["gsat"] = (
            f"skipped: pass --gsat <a checkout of Graph-COM/GSAT holding {GSAT_CONFIG}>"
        )
    print(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
