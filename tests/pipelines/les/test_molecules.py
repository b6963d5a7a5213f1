"""les_molecules: the SELFIES data, objective and quality functions, and the fast run end to end."""

import math

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.common.params import ParameterError
from paper_pipelines.pipelines.les.molecules import chem
from tests.kedro_helpers import files_under, latest_json, make_project_copy, run_session

PIPELINE = "les_molecules"


def test_moses_file_is_found_in_the_installed_wheel():
    path = chem.moses_path()
    assert path.name == "train.csv.gz" and path.parts[-3:-1] == ("dataset", "data")
    assert "moses" not in __import__("sys").modules  # found without importing moses


def test_a_missing_molsets_package_names_the_fix(monkeypatch):
    monkeypatch.setattr(chem.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(FileNotFoundError, match=r"pip install --no-deps molsets==0\.3\.1"):
        chem.moses_path()


def test_selfies_tokens_round_trip_with_nop_padding():
    strings = chem.to_selfies(["CCO", "c1ccccc1"])
    vocab = chem.vocabulary(strings)
    assert vocab[0] == chem.PAD and vocab[1:] == sorted(vocab[1:])
    tokens = chem.tokenize(strings, vocab, 12)
    assert tokens.shape == (2, 12) and (tokens[0, 3:] == 0).all()
    assert [chem.to_smiles(chem.detokenize(r, vocab)) for r in tokens] == ["CCO", "C1=CC=CC=C1"]
    with pytest.raises(ValueError, match="more than 2"):
        chem.tokenize(strings, vocab, 2)
    with pytest.raises(ValueError, match=r"symbol '\[N\]'"):
        chem.tokenize(["[C][N]"], vocab, 4)


def test_quality_needs_a_sanitised_molecule_without_alerts():
    assert chem.is_quality("CCO")
    assert not chem.is_quality("")  # SELFIES of only [nop] decode to nothing
    assert not chem.is_quality("C(C)(C)(C)(C)C")  # pentavalent carbon does not sanitise
    assert not chem.is_quality("O=C(C=Cc1ccccc1)c1ccccc1")  # chalcone: a Brenk Michael acceptor
    assert chem.is_quality("c1ccccc1O") != chem.is_quality(
        "Oc1ccc(O)cc1"
    )  # hydroquinone: PAINS/Brenk


def test_penalised_logp_and_qed_by_hand():
    from rdkit import Chem
    from rdkit.Chem import QED, Crippen

    mol = Chem.MolFromSmiles("C1CCCCCCCC1")  # a 9-ring: penalty 3
    assert chem.ring_penalty(mol) == 3 and chem.ring_penalty(Chem.MolFromSmiles("CCO")) == 0
    sa = chem._sascorer().calculateScore(mol)
    assert 1 <= sa <= 10
    assert chem.penalised_logp(mol) == pytest.approx(Crippen.MolLogP(mol) - sa - 3)
    assert chem.objective("CCO", "qed") == pytest.approx(QED.qed(Chem.MolFromSmiles("CCO")))
    assert math.isnan(chem.objective("C(C)(C)(C)(C)C", "qed"))


def test_the_black_box_scores_only_quality_molecules():
    vocab = chem.vocabulary(chem.to_selfies(["CCO", "O=C(C=Cc1ccccc1)c1ccccc1"]))
    evaluate = chem.evaluator(vocab, "qed")
    good = chem.tokenize(chem.to_selfies(["CCO"]), vocab, 30)[0]
    smiles, valid, value = evaluate(good)
    assert (smiles, valid) == ("CCO", True) and 0 < value < 1
    bad = chem.tokenize(chem.to_selfies(["O=C(C=Cc1ccccc1)c1ccccc1"]), vocab, 30)[0]
    assert evaluate(bad)[1] is False and math.isnan(evaluate(bad)[2])
    smiles, valid, value = evaluate(np.zeros(30, dtype=np.int64))  # only [nop]: no molecule
    assert (smiles, valid) == ("", False) and math.isnan(value)


def test_molecules_table_samples_distinct_short_molecules():
    smiles = pd.Series(["CCO", "CCO", "OCC", "CCCCCCCCCCCCCCCCCCCC", "c1ccccc1", "CC(=O)O"])
    table = chem.molecules_table(smiles, 3, 10, "qed", np.random.default_rng(0))
    assert len(table) == 3 and table["selfies"].is_unique and (table["length"] <= 10).all()
    assert "CCCCCCCCCCCCCCCCCCCC" not in set(table["smiles"])
    assert table["quality"].dtype == bool and table["objective"].notna().all()
    with pytest.raises(ValueError, match="fewer than les_molecules.data.n = 5"):
        chem.molecules_table(smiles, 5, 10, "qed", np.random.default_rng(0))
    splits = chem.split(table, 10, 0.34, np.random.default_rng(0))
    assert len(splits["test_index"]) == 1 and splits["train_tokens"].shape == (2, 10)
    assert list(splits["vocab"]) == chem.vocabulary(list(table["selfies"]))


def test_a_users_table_comes_through_the_catalog_entry():
    from paper_pipelines.pipelines.les.molecules import nodes
    from paper_pipelines.pipelines.les.molecules.parameters import LSOParams, MoleculeDataParams

    smiles = ["C" * k + "O" for k in range(1, 61)]  # 60 distinct alcohols
    data = MoleculeDataParams(source="catalog", n=50, max_len=64, objective="qed")
    table = nodes.load_molecules(pd.DataFrame({"SMILES": smiles}), data, LSOParams(n_init=10), 0)
    assert len(table) == 50 and set(table["smiles"]) <= set(smiles)
    with pytest.raises(ValueError, match=r"les_molecules\.smiles_input.*got: \['smi'\]"):
        nodes.load_molecules(pd.DataFrame({"smi": smiles}), data, LSOParams(n_init=10), 0)
    with pytest.raises(ValueError, match=r"les_molecules\.smiles_input.*got: NoneType"):
        nodes.load_molecules(None, data, LSOParams(n_init=10), 0)
    with pytest.raises(ValueError, match=r"n_init = 41 exceeds the 40 training molecules"):
        nodes.load_molecules(pd.DataFrame({"SMILES": smiles}), data, LSOParams(n_init=41), 0)


def test_fast_run_writes_the_standard_outputs(tmp_path):
    project = make_project_copy(tmp_path / "project")
    run_session(project, PIPELINE, env="fast")
    root = project / "data/fast"
    metrics = latest_json(root / "08_reporting/les_molecules/metrics.json")
    assert 0 <= metrics["valid_frac_les"] <= 1 and 0 <= metrics["data_quality_frac"] <= 1
    for name in ("results.parquet", "claims.parquet", "auroc_plot.png", "lso_plot.png"):
        assert files_under(root / "08_reporting/les_molecules" / name), name
    runs = pd.read_parquet(
        next(
            iter(files_under(root / "07_model_output/les_molecules/lso_trajectories_table.parquet"))
        )
    )
    assert list(dict.fromkeys(runs["method"])) == ["none", "les", "likelihood", "prior", "turbo"]
    # bad input: source = catalog with the entry left empty stops the run in its first node, so
    # nothing of les_molecules is written; a misspelt source is refused with the parameters
    before = files_under(project / "data")
    with pytest.raises(Exception, match=r"les_molecules\.smiles_input"):
        run_session(project, PIPELINE, env="fast",
                    runtime_params={"les_molecules.data.source": "catalog"})  # fmt: skip
    with pytest.raises(ParameterError, match=r"les_molecules\.data"):
        run_session(project, PIPELINE, env="fast",
                    runtime_params={"les_molecules.data.source": "csv"})  # fmt: skip
    new = files_under(project / "data") - before
    assert all("les_molecules" not in str(p) for p in new), new
