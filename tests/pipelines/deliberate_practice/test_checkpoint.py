"""The catalog datasets for what a user supplies: defaults offline, folders checked before a run."""

import numpy as np
import pytest
from kedro.io import DatasetError

from paper_pipelines.pipelines.deliberate_practice.checkpoint import (
    DiffusionCheckpointDataset,
    RealImagesDataset,
)


def test_digits_source_loads_the_shipped_images():
    ds = RealImagesDataset()
    assert ds.exists()
    out = ds.load()
    assert out["x"].shape == (1797, 1, 8, 8) and out["class_names"][3] == "3"


def test_image_folder_source_reads_class_folders(tmp_path):
    from PIL import Image

    for name, value in (("cat", 0), ("dog", 255)):
        (tmp_path / name).mkdir()
        for i in range(2):
            Image.new("RGB", (5, 7), (value, value, value)).save(tmp_path / name / f"{i}.png")
    (tmp_path / "dog" / "notes.txt").write_text("not an image")
    ds = RealImagesDataset(source="folder", path=str(tmp_path), image_size=4, max_per_class=1)
    out = ds.load()
    assert out["class_names"] == ["cat", "dog"]
    assert out["x"].shape == (2, 3, 4, 4) and out["y"].tolist() == [0, 1]
    assert np.allclose(out["x"][0], -1.0) and np.allclose(out["x"][1], 1.0)


def test_missing_folders_do_not_exist_and_bad_sources_are_refused(tmp_path):
    assert not RealImagesDataset(source="folder", path=str(tmp_path / "none")).exists()
    assert DiffusionCheckpointDataset().exists() and DiffusionCheckpointDataset().load() is None
    missing = DiffusionCheckpointDataset(source="diffusers_folder", path=str(tmp_path))
    assert not missing.exists()
    (tmp_path / "model_index.json").write_text("{}")
    assert missing.exists()
    with pytest.raises(DatasetError, match="source"):
        RealImagesDataset(source="imagenet")
    with pytest.raises(DatasetError, match="needs path"):
        DiffusionCheckpointDataset(source="diffusers_folder")
    with pytest.raises(DatasetError, match="read-only"):
        DiffusionCheckpointDataset().save({"unet": 1})
