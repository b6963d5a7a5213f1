"""Ingest: the digits images, the CIFAR-10-C folder layouts and the catalog input's errors."""

from __future__ import annotations

import numpy as np
import pytest
from kedro.io import DatasetError
from PIL import Image

from paper_pipelines.pipelines.tca import data


def test_digits_at_native_size_are_the_pixels_over_16():
    from sklearn.datasets import load_digits

    images, labels = data.load_digits_images(8)
    raw = load_digits()
    assert images.shape == (1797, 8, 8) and images.dtype == np.float32
    np.testing.assert_allclose(images, raw.images / 16.0, atol=1e-7)
    assert labels.dtype == np.int64 and np.array_equal(labels, raw.target)
    up, _ = data.load_digits_images(16)
    # bilinear x2: the corner pixels keep their values
    np.testing.assert_allclose(up[:, 0, 0], images[:, 0, 0], atol=1e-6)
    np.testing.assert_allclose(up[:, -1, -1], images[:, -1, -1], atol=1e-6)


def _folder(root, classes=("cat", "dog"), per_class=2, severity=None):
    rng = np.random.default_rng(0)
    for cls in classes:
        d = root / (str(severity) if severity else "") / cls
        d.mkdir(parents=True)
        for i in range(per_class):
            Image.fromarray(rng.integers(0, 256, (4, 4, 3), dtype=np.uint8)).save(d / f"{i}.png")
        (d / "notes.txt").write_text("not an image")


def test_image_folder_layouts_with_and_without_a_severity_level(tmp_path):
    _folder(tmp_path / "fog", severity=2)
    _folder(tmp_path / "snow", classes=("a", "b", "c"), per_class=1)
    m = data.domain_manifest(str(tmp_path), ["fog", "snow"], [2], None, seed=0)
    assert set(m) == {"fog@2", "snow@2"}
    fog = m["fog@2"]
    assert fog["layout"] == "folder" and fog["rows"] == [0, 1, 2, 3]
    assert fog["file_labels"] == [0, 0, 1, 1]  # classes in sorted order, .txt skipped
    assert all(f.endswith(".png") and "/2/" in f for f in fog["files"])
    x, y = data.load_domain(fog)
    assert x.shape == (4, 3, 4, 4) and x.dtype == np.uint8 and y.tolist() == [0, 0, 1, 1]
    first = np.asarray(Image.open(fog["files"][0]).convert("RGB"))
    np.testing.assert_array_equal(x[0], first.transpose(2, 0, 1))
    assert m["snow@2"]["file_labels"] == [0, 1, 2]


def test_manifest_sampling_and_errors(tmp_path):
    _folder(tmp_path / "fog", per_class=5)
    m = data.domain_manifest(str(tmp_path), ["fog"], [1], max_per_domain=4, seed=3)
    rows = m["fog@1"]["rows"]
    expected = np.sort(np.random.default_rng([3, 1, 3]).choice(np.arange(10), 4, replace=False))
    assert rows == expected.tolist()
    x, y = data.load_domain(m["fog@1"])
    assert x.shape[0] == 4 and y.tolist() == [m["fog@1"]["file_labels"][r] for r in rows]
    with pytest.raises(FileNotFoundError, match="no data for corruption 'snow'"):
        data.domain_manifest(str(tmp_path), ["snow"], [1], None, 0)
    with pytest.raises(FileNotFoundError, match="is not a directory"):
        data.domain_manifest(str(tmp_path / "absent"), ["fog"], [1], None, 0)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="no class sub-folders"):
        data.domain_manifest(str(tmp_path), ["empty"], [1], None, 0)


def test_npy_rows_of_each_severity(tmp_path):
    images = (np.arange(5 * 10_000) % 256).astype(np.uint8).reshape(-1, 1, 1, 1)
    np.save(tmp_path / "fog.npy", np.broadcast_to(images, (50_000, 1, 1, 3)))
    np.save(tmp_path / "labels.npy", np.arange(50_000) % 10)
    m = data.CifarCFolder(str(tmp_path)).manifest(["fog"], [1, 5], None, seed=0)
    assert m["fog@1"]["rows"][0] == 0 and m["fog@1"]["rows"][-1] == 9_999
    assert m["fog@5"]["rows"][0] == 40_000 and len(m["fog@5"]["rows"]) == 10_000
    assert m["fog@5"]["labels"] == str(tmp_path / "labels.npy")
    few = data.CifarCFolder(str(tmp_path)).manifest(["fog"], [2], 3, seed=0)["fog@2"]["rows"]
    assert len(few) == 3 and all(10_000 <= r < 20_000 for r in few)


def test_the_catalog_input_is_read_only_and_required_inputs_say_how(tmp_path):
    ds = data.CifarCFolderDataset(path=str(tmp_path), metadata={"kind": "user"})
    assert ds.exists() and ds.metadata == {"kind": "user"}
    assert str(tmp_path) in str(ds)
    with pytest.raises(DatasetError, match="read-only input \\(the user's CIFAR-10-C folder\\)"):
        ds.save(np.zeros(1))
    assert not data.CifarCFolderDataset(path=str(tmp_path / "no")).exists()
    assert data.require_input(5, "tca.x", "thing") == 5
    with pytest.raises(
        ValueError, match="catalog entry tca.x supplies no thing: run with --env paper"
    ):
        data.require_input(None, "tca.x", "thing")
