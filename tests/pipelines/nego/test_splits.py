"""OOD split plans and their part checks (spec check 6: disjoint splits)."""

import pandas as pd
import pytest

from paper_pipelines.pipelines.nego import splits
from paper_pipelines.pipelines.nego.parameters import DataParams, SplitParams

DATA = DataParams(
    num_train=30, num_val=12, num_test=15, width_centre=8, width_spread=2, severe_factor=2.5
)
SPLIT = SplitParams(kinds=["bias", "basis", "size"], bias=0.8, bias_sweep=[0.5, 0.8])


def test_severe_widths():
    assert splits.severe_widths([10, 15], 2.0) == (20, 30)
    assert splits.severe_widths([10], 2.5) == (25,)


def test_bias_plan():
    plan = {p.part: p for p in splits.bias_plan(DATA, SPLIT, 0.8)}
    assert list(plan) == list(splits.PARTS)
    assert plan["train"].bias == plan["id_val"].bias == 0.8
    assert (
        plan["ood_val"].bias
        == plan["ood_test"].bias
        == plan["severe_test"].bias
        == pytest.approx(1 / 3)
    )
    assert plan["ood_test"].widths == (8,) and plan["severe_test"].widths == (20,)
    assert plan["train"].n == 30 and plan["id_val"].n == 12 and plan["ood_test"].n == 15
    assert plan["severe_test"].n == 15 and plan["ood_val"].n == 12
    assert all(p.spread == 2 for p in plan.values())


def test_basis_plan_uses_disjoint_bases():
    plan = {p.part: p for p in splits.basis_plan(DATA, SPLIT)}
    assert plan["train"].bases == plan["id_val"].bases == ("wheel", "tree", "ladder")
    assert plan["ood_val"].bases == ("star",)
    assert plan["ood_test"].bases == plan["severe_test"].bases == ("path",)
    assert plan["severe_test"].widths == (20,) and plan["ood_test"].widths == (8,)
    assert all(p.bias is None for p in plan.values())
    assert [p.n for p in plan.values()] == [30, 12, 12, 15, 15]


def test_size_plan_grows_the_widths():
    plan = {p.part: p for p in splits.size_plan(DATA, SPLIT)}
    assert plan["train"].widths == plan["id_val"].widths == (6, 10, 15)
    assert plan["ood_val"].widths == (30,) and plan["ood_test"].widths == (50,)
    assert plan["severe_test"].widths == (125,)
    assert all(p.spread == 1 for p in plan.values())
    assert plan["train"].bases == plan["id_val"].bases == tuple(SPLIT.size_bases)
    assert [p.n for p in plan.values()] == [30, 12, 12, 15, 15]


def test_split_plans_names():
    plans = splits.split_plans(DATA, SPLIT)
    assert list(plans) == ["bias", "basis", "size", "bias0.5", "bias0.8"]
    assert plans["bias0.5"][0].bias == 0.5 and plans["bias"][0].bias == 0.8
    assert plans["basis"][2].bases == ("star",) and plans["size"][2].widths == (30,)


def _toy(kind="basis"):
    import numpy as np

    plan = splits.basis_plan(DATA, SPLIT)
    frame = splits.generate_split(kind, plan, DATA, np.random.default_rng(0))
    return frame


def test_generate_split_parts_and_bases():
    frame = _toy()
    assert list(frame.columns[:2]) == ["split", "part"] and set(frame.split) == {"basis"}
    assert frame.part.value_counts().to_dict() == {
        "train": 30,
        "ood_test": 15,
        "severe_test": 15,
        "id_val": 12,
        "ood_val": 12,
    }
    assert set(frame[frame.part == "ood_test"].base) == {"path"}
    assert frame[frame.part == "severe_test"].width.between(18, 22).all()
    splits.check_environment_shift(frame, "basis")


def test_split_indices_are_disjoint_and_complete():
    frame = _toy()
    ids = splits.split_indices(frame)["basis"]
    assert sum(len(v) for v in ids.values()) == len(frame)
    assert len({i for v in ids.values() for i in v}) == len(frame)
    assert ids["train"] == list(range(30))


def test_split_indices_fail_on_an_empty_part():
    frame = _toy()
    with pytest.raises(ValueError, match=r"split 'basis' has empty parts \['ood_val'\]"):
        splits.split_indices(frame[frame.part != "ood_val"])


def test_split_indices_fail_on_a_graph_in_two_parts():
    frame = _toy().iloc[[0, 1, 30, 42, 43, 58, 70]].copy()
    frame.index = [0, 1, 2, 3, 4, 5, 0]  # graph 0 also in severe_test
    with pytest.raises(ValueError, match="a graph is in two parts"):
        splits.split_indices(frame)


def test_environment_shift_check_catches_a_leak():
    frame = _toy()
    frame.loc[frame.part == "severe_test", "base"] = "wheel"
    with pytest.raises(ValueError, match=r"severe_test reuses training bases \['wheel'\]"):
        splits.check_environment_shift(frame, "basis")
    frame = _toy()
    frame.loc[frame.part == "ood_val", "base"] = "tree"
    with pytest.raises(ValueError, match="ood_val reuses"):
        splits.check_environment_shift(frame, "basis")
    frame = _toy()
    frame.loc[frame.part == "ood_test", "base"] = "ladder"
    with pytest.raises(ValueError, match="ood_test reuses"):
        splits.check_environment_shift(frame, "basis")
    assert isinstance(frame, pd.DataFrame)


def test_generate_split_applies_the_bias_and_keeps_split_order():
    import numpy as np

    tied = splits.bias_plan(DATA, SPLIT, 1.0)
    frame = splits.generate_split("bias", tied, DATA, np.random.default_rng(0))
    train = frame[frame.part == "train"]
    assert (train.base == train.y.map(dict(enumerate(SPLIT.bias_bases)))).all() or (
        (train.base == train.y_clean.map(dict(enumerate(SPLIT.bias_bases)))).all()
    )
    both = pd.concat([frame, _toy()], ignore_index=True)
    assert list(splits.split_indices(both)) == ["bias", "basis"]  # order of appearance, not sorted
