"""Versioned saves are atomic: a process killed while saving leaves no broken "latest" version.

Each kind of dataset the project saves is written once, then a second save runs in a child process
that is SIGKILLed at the worst moment: the whole file written to its temporary name, the rename not
done (every earlier moment leaves only a shorter temporary file, i.e. the same state). "Latest" must
still load the first version, and loading a damaged version must name the file, the version and the fix.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest
from kedro.io import DatasetError

from paper_pipelines.catalog import AtomicDataCatalog

KINDS = {
    "json": ("json.JSONDataset", "x.json"),
    "parquet": ("pandas.ParquetDataset", "x.parquet"),
    "png": ("matplotlib.MatplotlibDataset", "x.png"),
    "pickle": ("pickle.PickleDataset", "x.pkl"),
    "torch": ("paper_pipelines.datasets.TorchDataset", "x.pt"),
    "arrays": ("paper_pipelines.datasets.ArrayTreeDataset", "x.npz"),
    "skops": ("paper_pipelines.datasets.SkopsDataset", "x.skops"),
    "text": ("text.TextDataset", "x.txt"),
}

# The child builds the same catalog, makes the value for its kind and saves it with os.replace
# replaced by a SIGKILL of itself.
CHILD = textwrap.dedent(
    """
    import os, signal, sys
    sys.path.insert(0, {tests!r})
    from test_atomic_saves import catalog_for, value_for
    kind, folder, value = sys.argv[1], sys.argv[2], int(sys.argv[3])
    os.replace = lambda *a, **k: os.kill(os.getpid(), signal.SIGKILL)
    catalog_for(kind, folder).save("x", value_for(kind, value))
    """
)


def catalog_for(kind: str, folder: str) -> AtomicDataCatalog:
    type_, name = KINDS[kind]
    config = {"x": {"type": type_, "filepath": f"{folder}/{name}", "versioned": True}}
    return AtomicDataCatalog.from_config(config)


def value_for(kind: str, value: int):
    if kind == "json":
        return {"value": value}
    if kind == "parquet":
        return pd.DataFrame({"value": [value]})
    if kind == "png":
        from matplotlib.figure import Figure

        fig = Figure()
        fig.add_subplot().set_title(str(value))
        return fig
    if kind in ("pickle", "arrays", "skops"):
        return {"value": value}
    if kind == "torch":
        import torch

        return {"value": torch.tensor([value])}
    return str(value)


def read_back(kind: str, loaded) -> int:
    """The integer a loaded value carries."""
    if kind in ("json", "pickle", "arrays", "skops"):
        return loaded["value"]
    if kind == "parquet":
        return int(loaded["value"].iloc[0])
    if kind == "torch":
        return int(loaded["value"][0])
    return int(loaded)  # text


def _versions(folder: Path, kind: str) -> list[str]:
    name = KINDS[kind][1]
    root = folder / name
    return sorted(p.parent.name for p in root.glob(f"*/{name}"))


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_save_killed_before_its_rename_leaves_the_previous_version_latest(kind, tmp_path):
    folder = tmp_path / "data"
    catalog_for(kind, str(folder)).save("x", value_for(kind, 1))
    first = _versions(folder, kind)
    script = tmp_path / "child.py"
    script.write_text(CHILD.format(tests=str(Path(__file__).parent)))
    child = subprocess.run(
        [sys.executable, str(script), kind, str(folder), "2"], capture_output=True, timeout=120
    )
    assert child.returncode == -signal.SIGKILL, child.stderr.decode()[-2000:]
    # the killed save's version folder holds no file under the dataset's name: not a version
    assert _versions(folder, kind) == first
    leftovers = [p for p in (folder / KINDS[kind][1]).rglob("*") if p.is_file()]
    assert any(".partial" in p.name for p in leftovers)  # it got as far as the whole temporary file
    fresh = catalog_for(kind, str(folder))
    assert fresh.get("x").resolve_load_version() == first[0]
    if kind != "png":  # MatplotlibDataset is write-only
        assert read_back(kind, fresh.load("x")) == 1


def test_an_error_while_saving_leaves_nothing_behind(tmp_path):
    catalog = catalog_for("json", str(tmp_path))
    with pytest.raises(DatasetError):
        catalog.save("x", {"not json": object()})
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_a_save_is_complete_and_leaves_no_temporary_file(tmp_path):
    catalog = catalog_for("parquet", str(tmp_path))
    catalog.save("x", value_for("parquet", 3))
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert len(files) == 1 and files[0].name == "x.parquet"
    assert read_back("parquet", catalog_for("parquet", str(tmp_path)).load("x")) == 3


def test_a_damaged_latest_version_names_the_file_the_version_and_the_fix(tmp_path):
    catalog_for("json", str(tmp_path)).save("x", {"value": 1})
    old = _versions(tmp_path, "json")[0]
    damaged = tmp_path / "x.json" / "2999-01-01T00.00.00.000Z" / "x.json"
    damaged.parent.mkdir()
    damaged.write_bytes(b"")  # what a kill mid-write left before saves were atomic
    with pytest.raises(DatasetError) as info:
        catalog_for("json", str(tmp_path)).load("x")
    message = str(info.value)
    assert "2999-01-01T00.00.00.000Z" in message and str(damaged) in message
    assert f"--load-versions=x:{old}" in message and "mv " in message


def test_a_pinned_version_that_does_not_exist_is_named_with_the_versions_there(tmp_path):
    catalog_for("json", str(tmp_path)).save("x", {"value": 1})
    (only,) = _versions(tmp_path, "json")
    with pytest.raises(
        DatasetError, match=rf"version 2001-01-01T00.00.00.000Z does not exist.*{only}"
    ):
        catalog_for("json", str(tmp_path)).load("x", version="2001-01-01T00.00.00.000Z")


def test_the_project_uses_the_atomic_catalog():
    from paper_pipelines import settings

    assert settings.DATA_CATALOG_CLASS is AtomicDataCatalog
