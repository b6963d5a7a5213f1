"""ArrayTreeDataset and SkopsDataset: what they store comes back equal, and a file cannot run code."""

from __future__ import annotations

import dataclasses
import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest
import torch
from kedro.io.core import DatasetError, Version
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from paper_pipelines.datasets import ArrayTreeDataset, SkopsDataset
from paper_pipelines.pipelines.srca.srca import SRCAModel


@dataclasses.dataclass
class Foreign:  # defined outside paper_pipelines: refused
    x: int


class Opaque:
    def __init__(self):
        self.x = 1


def test_nested_containers_come_back_equal_with_their_types(tmp_path):
    data = {
        "splits": {0: np.arange(5), 1: np.linspace(0, 1, 4, dtype=np.float32)},
        ("noise", 0.5): [torch.arange(3, dtype=torch.int64), torch.ones(2, dtype=torch.bfloat16)],
        "meta": ("name", 3, 2.5, None, True, float("nan"), float("-inf")),
        "table": pd.DataFrame({"a": [1, 2], "s": ["u", "v"]}, index=[10, 20]),
        "series": pd.Series([0.5, 1.5], name="w"),
        "scalar": np.float32(3.0),
        "labels": np.array(["x", "yy"]),
    }
    ds = ArrayTreeDataset(filepath=str(tmp_path / "t.npz"))
    ds.save(data)
    back = ds.load()
    assert set(back) == set(data)
    assert back["splits"][1].dtype == np.float32 and np.array_equal(back["splits"][0], np.arange(5))
    ints, bf16 = back[("noise", 0.5)]
    assert ints.dtype == torch.int64 and torch.equal(ints, torch.arange(3))
    assert bf16.dtype == torch.bfloat16 and torch.equal(bf16, torch.ones(2, dtype=torch.bfloat16))
    meta = back["meta"]
    assert isinstance(meta, tuple) and meta[:5] == ("name", 3, 2.5, None, True)
    assert np.isnan(meta[5]) and meta[6] == float("-inf")
    pd.testing.assert_frame_equal(back["table"], data["table"], check_dtype=False)
    assert list(back["table"].index) == [10, 20]
    assert back["series"].name == "w" and list(back["series"]) == [0.5, 1.5]
    assert back["scalar"].dtype == np.float32 and back["scalar"] == 3.0
    assert list(back["labels"]) == ["x", "yy"]


def test_a_project_dataclass_is_rebuilt_field_by_field(tmp_path):
    model = SRCAModel(
        mean=np.arange(3.0),
        rotation=np.eye(3),
        axes=(0, 2),
        center_rotated=np.ones(2),
        radius=1.5,
        loss=0.25,
        k=2,
        search="exhaustive",
        n_subsets=3,
    )
    ds = ArrayTreeDataset(filepath=str(tmp_path / "m.npz"))
    ds.save({"co2": model})
    back = ds.load()["co2"]
    assert isinstance(back, SRCAModel)
    for f in dataclasses.fields(SRCAModel):
        ours, theirs = getattr(back, f.name), getattr(model, f.name)
        assert type(ours) is type(theirs) and np.array_equal(ours, theirs), f.name


@pytest.mark.parametrize(
    ("value", "fix"),
    [
        (Foreign(1), "only dataclasses defined in paper_pipelines"),
        (Opaque(), "SkopsDataset"),
        (np.array([{"a": 1}], dtype=object), "object array"),
        ({object(): 1}, "use str or int"),
    ],
)
def test_what_only_a_pickle_could_hold_is_refused_on_save_with_the_fix(tmp_path, value, fix):
    ds = ArrayTreeDataset(filepath=str(tmp_path / "x.npz"))
    with pytest.raises(DatasetError, match=fix):
        ds.save({"v": value})
    assert not (tmp_path / "x.npz").exists()


def _rewrite_tree(path, tree):
    with np.load(path, allow_pickle=False) as stored:
        arrays = {k: stored[k] for k in stored.files}
    arrays["__tree__"] = np.array(json.dumps(tree))
    np.savez(path, **arrays)


def test_a_file_naming_a_foreign_class_or_holding_a_pickle_is_refused_on_load(tmp_path):
    path = tmp_path / "x.npz"
    ds = ArrayTreeDataset(filepath=str(path))
    ds.save({"v": 1})
    _rewrite_tree(path, {"dataclass": "os:system", "fields": {"command": {"value": "true"}}})
    with pytest.raises(DatasetError, match="not a paper_pipelines dataclass"):
        ds.load()
    # an object array inside the .npz is a pickle: numpy refuses to unpickle it
    buffer = io.BytesIO()
    np.savez(buffer, a0=np.array([Foreign(1)], dtype=object), __tree__=np.array('{"array": "a0"}'))
    path.write_bytes(buffer.getvalue())
    with pytest.raises((DatasetError, ValueError), match="allow_pickle"):
        ds.load()


def test_versions_are_kept_and_each_reloads(tmp_path):
    first = ArrayTreeDataset(
        filepath=str(tmp_path / "v.npz"), version=Version(None, "2026-01-01T00.00.00.000Z")
    )
    first.save({"x": np.zeros(2)})
    second = ArrayTreeDataset(
        filepath=str(tmp_path / "v.npz"), version=Version(None, "2026-01-02T00.00.00.000Z")
    )
    second.save({"x": np.ones(2)})
    latest = ArrayTreeDataset(filepath=str(tmp_path / "v.npz"), version=Version(None, None)).load()
    pinned = ArrayTreeDataset(
        filepath=str(tmp_path / "v.npz"), version=Version("2026-01-01T00.00.00.000Z", None)
    ).load()
    assert np.array_equal(latest["x"], np.ones(2)) and np.array_equal(pinned["x"], np.zeros(2))


def test_skops_round_trips_estimators_and_refuses_a_foreign_type(tmp_path):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 3))
    y = (x[:, 0] > 0).astype(int)
    models = {"lr": make_pipeline(StandardScaler(), LogisticRegression()).fit(x, y)}
    ds = SkopsDataset(filepath=str(tmp_path / "m.skops"))
    ds.save(models)
    back = ds.load()
    assert np.array_equal(back["lr"].predict_proba(x), models["lr"].predict_proba(x))
    # a zip that names a class outside sklearn / numpy / scipy / paper_pipelines
    ds.save({"opaque": Opaque()})
    with zipfile.ZipFile(tmp_path / "m.skops") as z:
        assert "Opaque" in z.read("schema.json").decode()
    with pytest.raises(DatasetError, match="refusing to load"):
        ds.load()
    # nor is a builtin function such as eval trusted because it is a builtin
    ds.save({"f": eval})
    with pytest.raises(DatasetError, match="builtins.eval"):
        ds.load()
