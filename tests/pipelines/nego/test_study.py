"""The experiment grid and the evaluate-stage measurements on a tiny generated split (no Kedro)."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.nego import splits, study, training
from paper_pipelines.pipelines.nego.parameters import (
    DataParams,
    EvaluationParams,
    ExtractorParams,
    LossParams,
    ModelParams,
    PromptParams,
    SplitParams,
    TrainParams,
)

DATA = DataParams(num_train=24, num_val=12, num_test=12, width_centre=6, width_spread=1)
BLOCKS = (DATA, ModelParams(hidden=8, layers=2), PromptParams(), ExtractorParams(), LossParams())
TRAIN = TrainParams(epochs=2, batch_size=8, seeds=2, methods=["erm", "nego_r", "gsat_lite"])


@pytest.fixture(scope="module")
def tiny():
    plan = splits.bias_plan(DATA, SplitParams(), 0.9)
    graphs = splits.generate_split("bias", plan, DATA, np.random.default_rng(0))
    graphs.index.name = "graph_id"
    ids = splits.split_indices(graphs)
    datasets = study.build_datasets(graphs, ids)
    states, logs = {}, []
    for run in study.run_grid(ids, TRAIN):
        cfg = study.run_config(run["method"], *BLOCKS, TRAIN)
        sets = datasets[run["split"]]
        out = study.fit(cfg, sets["train"], {"ood_val": sets["ood_val"]}, run["seed"])
        states[study.run_key(run)] = out["model"].state_dict()
        logs.append(out["log"].assign(**run, seconds=out["seconds"], selected_epoch=out["epoch"]))
    return graphs, ids, datasets, states, pd.concat(logs, ignore_index=True)


def test_run_grid_seeds_per_split():
    ids = {"bias": {}, "basis": {}}
    train = TrainParams(methods=["erm", "nego_r"], seeds=3, seeds_other_splits=1)
    grid = study.run_grid(ids, train)
    assert len(grid) == 3 * 2 + 1 * 2
    assert {(r["split"], r["seed"]) for r in grid} == {
        ("bias", 0),
        ("bias", 1),
        ("bias", 2),
        ("basis", 0),
    }
    assert study.run_key({"split": "bias", "method": "erm", "seed": 2}) == "bias/erm/seed2"


def test_run_config_carries_every_block():
    loss = LossParams(lambda_neg=0.2, lambda_inv=0.3, lambda_ib=0.4, lambda_cov=0.5, lambda_div=0.6,
                      vrex=True, lambda_vrex=0.7, num_pseudo_envs=4, lambda_vrex_oracle=0.8)  # fmt: skip
    extractor = ExtractorParams(
        r=0.25, condition="film", sampling="deterministic", temperature=0.5, symmetric=False
    )
    prompt = PromptParams(
        num_prompts=3, residual=True, neg_mode="entropy", encoder="shared_detached"
    )
    model = ModelParams(hidden=16, layers=4, pool="sum", dropout=0.1, norm="none", head="linear")
    train = TrainParams(
        epochs=7,
        batch_size=9,
        lr=0.02,
        weight_decay=0.1,
        eval_every=2,
        patience=3,
        select_on="id_val",
    )
    cfg = study.run_config(
        "nego_r", DataParams(motifs=["house", "cycle"]), model, prompt, extractor, loss, train
    )
    assert cfg.num_classes == 2 and (cfg.hidden, cfg.layers, cfg.pool, cfg.dropout, cfg.norm) == (
        16,
        4,
        "sum",
        0.1,
        "none",
    )
    assert cfg.head == "linear" and ModelParams().head == "mlp"  # default: the run as before
    assert (cfg.epochs, cfg.batch_size, cfg.lr, cfg.weight_decay) == (7, 9, 0.02, 0.1)
    assert (cfg.eval_every, cfg.patience, cfg.select_on) == (2, 3, "id_val")
    assert (cfg.num_prompts, cfg.residual, cfg.encoder) == (3, True, "shared_detached")
    assert (cfg.condition, cfg.sampling, cfg.temperature, cfg.symmetric) == (
        "film",
        "deterministic",
        0.5,
        False,
    )
    w = cfg.weights
    assert (w.lambda_neg, w.lambda_inv, w.lambda_ib, w.lambda_cov, w.lambda_div) == (
        0.2,
        0.3,
        0.4,
        0.5,
        0.6,
    )
    assert (w.vrex, w.lambda_vrex, w.num_pseudo_envs, w.r, w.neg_mode) == (
        True,
        0.7,
        4,
        0.25,
        "entropy",
    )
    assert cfg.lambda_vrex_oracle == 0.8
    net = training.build_model(cfg)
    assert (
        net.prompts.out is not None and net.env_encoder is None and net.scorer.condition == "film"
    )


def test_build_datasets_indexes_bases_over_all_five(tiny):
    graphs, ids, datasets, _, _ = tiny
    d = datasets["bias"]["train"][0]
    row = graphs.loc[ids["bias"]["train"][0]]
    assert int(d.env) == ["wheel", "tree", "ladder", "star", "path"].index(row.base)
    assert int(d.y) == row.y and d.num_nodes == row.num_nodes
    assert d.edge_index.shape[1] == 2 * len(row.edge_src) and float(d.edge_gt.sum()) == 2 * sum(
        row.edge_motif
    )
    assert [len(v) for v in datasets["bias"].values()] == [24, 12, 12, 12, 12]


def test_evaluate_runs_rows(tiny):
    graphs, ids, datasets, states, logs = tiny
    runs = study.evaluate_runs(states, logs, datasets, *BLOCKS, TRAIN, "cpu")
    assert len(runs) == 6 and set(runs.method) == {"erm", "nego_r", "gsat_lite"}
    for part in splits.PARTS:
        assert runs[f"acc_{part}"].between(0, 1).all()
    assert np.allclose(runs.severe_drop, runs.acc_ood_test - runs.acc_severe_test)
    assert runs[runs.method == "erm"].mask_auc.isna().all()
    assert runs[runs.method != "erm"].mask_auc.between(0, 1).all()
    first = runs.iloc[0]
    log = logs[(logs.method == first.method) & (logs.seed == first.seed)]
    assert first.selected_epoch == log.selected_epoch.iloc[0] and first.epochs_run == 2
    assert first.seconds == pytest.approx(log.seconds.iloc[0])
    # accuracies match a direct prediction with the reloaded model
    cfg = study.run_config(first.method, *BLOCKS, TRAIN)
    net = study.load_model(states[f"bias/{first.method}/seed{first.seed}"], cfg, "cpu")
    test = datasets["bias"]["ood_test"]
    assert first.acc_ood_test == pytest.approx(training.accuracy(net, test, 5, "cpu"))


def test_probe_and_explanations(tiny):
    graphs, ids, _, states, _ = tiny
    probe = study.probe_environment(
        states, graphs, ids, *BLOCKS, TRAIN, EvaluationParams(), np.random.default_rng(0), "cpu"
    )
    assert probe["split"] == "bias" and probe["runs"] == 2
    assert 0 <= probe["probe_y_acc"] <= 1 and 0 <= probe["probe_base_acc"] <= 1
    assert 1 / 3 <= probe["majority_y"] <= 1
    none = study.probe_environment(
        {}, graphs, ids, *BLOCKS, TRAIN, EvaluationParams(), np.random.default_rng(0), "cpu"
    )
    assert none["runs"] == 0 and np.isnan(none["probe_y_acc"])
    ex = study.explain(
        states, graphs, ids, *BLOCKS, TRAIN, EvaluationParams(explain_graphs=2), "cpu"
    )
    assert [g["graph_id"] for g in ex["graphs"]] == ids["bias"]["ood_test"][:2]
    g = ex["graphs"][0]
    assert set(g["masks"]) == {"nego_r", "gsat_lite"}
    assert len(g["masks"]["nego_r"]) == len(g["edge_gt"]) == len(g["edge_index"][0])
    assert g["motif"] == graphs.loc[g["graph_id"], "motif"]
