"""TorchDataset: round trips, versions, and what it refuses."""

import pytest
import torch
from kedro.io.core import DatasetError, Version

from paper_pipelines.datasets import TorchDataset


def test_module_is_saved_as_state_dict_and_reloads(tmp_path):
    layer = torch.nn.Linear(3, 2)
    dataset = TorchDataset(filepath=str(tmp_path / "model.pt"))
    dataset.save(layer)
    loaded = dataset.load()
    assert set(loaded) == {"weight", "bias"}
    torch.testing.assert_close(loaded["weight"], layer.weight.data)
    fresh = torch.nn.Linear(3, 2)
    fresh.load_state_dict(loaded)
    torch.testing.assert_close(fresh.bias, layer.bias)


def test_versions_are_kept_and_any_can_be_reloaded(tmp_path):
    path = str(tmp_path / "masks.pt")
    TorchDataset(filepath=path, version=Version(None, "2026-01-01T00.00.00.000Z")).save(
        {"m": torch.zeros(2), "names": ["a"]}
    )
    TorchDataset(filepath=path, version=Version(None, "2026-01-02T00.00.00.000Z")).save(
        {"m": torch.ones(2), "names": ["b"]}
    )
    latest = TorchDataset(filepath=path, version=Version(None, None)).load()
    first = TorchDataset(filepath=path, version=Version("2026-01-01T00.00.00.000Z", None)).load()
    assert latest["names"] == ["b"] and first["names"] == ["a"]
    assert torch.equal(first["m"], torch.zeros(2))


def test_refuses_objects_that_are_not_tensors_or_modules(tmp_path):
    with pytest.raises(DatasetError, match="nn.Module or a dict"):
        TorchDataset(filepath=str(tmp_path / "x.pt")).save([1, 2, 3])


def test_loading_never_unpickles_code(tmp_path):
    path = tmp_path / "evil.pt"
    torch.save({"obj": object()}, path)  # an arbitrary pickled object is not weights
    with pytest.raises(Exception, match="[Ww]eights only load failed|Unsupported"):
        TorchDataset(filepath=str(path)).load()


def test_missing_file_reports_the_path(tmp_path):
    dataset = TorchDataset(filepath=str(tmp_path / "absent.pt"))
    assert not dataset.exists()
    with pytest.raises(DatasetError, match="absent.pt"):
        dataset.load()
