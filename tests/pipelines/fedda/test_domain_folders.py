"""A user's <domain>/<class>/<image> folders: keys in any separator, grey images, the clients' size rule."""

import numpy as np
import pytest
from PIL import Image

from paper_pipelines.pipelines.fedda import data


def _image(value, mode="RGB"):
    return Image.fromarray(np.full((6, 6, 3), value, np.uint8)).convert(mode)


def test_partition_keys_with_backslashes_or_slashes_at_either_end_read_alike():
    parts = {
        "photo\\dog\\000.png": _image(10),
        "/photo/cat/000.png/": _image(20),
        "photo/cat/001.png": _image(30, "L"),  # a grey image is read as RGB
    }
    out = data.load_domain_folders(parts, ["photo"], 4)
    assert out["class_names"] == ("cat", "dog")
    photo = out["domains"]["photo"]
    assert photo["labels"].tolist() == [0, 0, 1] and photo["labels"].dtype == np.int64
    assert photo["images"].shape == (3, 3, 4, 4)
    assert photo["images"][:, :, 0, 0].tolist() == [[20, 20, 20], [30, 30, 30], [10, 10, 10]]


def test_domain_clients_accept_exactly_two_training_and_one_test_image():
    folders = {"a": {"images": np.arange(3)[:, None], "labels": np.array([0, 1, 2])}}
    clients = data.split_domain_clients(folders, 2 / 3, 0.0, np.random.default_rng(0))
    assert len(clients["a"]["train_labels"]) == 2 and len(clients["a"]["test_labels"]) == 1
    with pytest.raises(ValueError, match="would get 3 training and 0 test"):
        data.split_domain_clients(folders, 1.0, 0.0, np.random.default_rng(0))


def test_domain_clients_apply_the_label_skew_inside_each_folder():
    labels = np.repeat(np.arange(4), 10)
    folders = {"a": {"images": np.arange(40)[:, None], "labels": labels}}
    clients = data.split_domain_clients(folders, 0.5, 0.3, np.random.default_rng(1))
    rng = np.random.default_rng(1)
    kept = data.label_skew(np.arange(40), labels, 0.3, rng)
    train, test = data.train_test_split(kept, 0.5, rng)
    assert clients["a"]["train_images"][:, 0].tolist() == train.tolist()
    assert clients["a"]["test_images"][:, 0].tolist() == test.tolist()
    assert len(kept) < 40  # the skew dropped digits of the rarer classes


def test_folder_names_are_kept_as_they_are_and_errors_say_how_to_fix_them():
    out = data.load_domain_folders({"Xray/Xcat/X.png": _image(5)}, ["Xray"], 4)
    assert list(out["domains"]) == ["Xray"] and out["class_names"] == ("xcat",)
    with pytest.raises(ValueError, match="that holds one sub-folder per domain$"):
        data.load_domain_folders({"photo/dog.jpg": _image(5)}, ["photo"], 4)


def test_a_client_too_small_says_every_way_out():
    plan = {"photo": (np.arange(1), np.arange(1, 2))}
    with pytest.raises(ValueError, match=r"or use fewer fedda\.data\.domains; move fedda\.data\."
                       r"train_frac away from 0 and 1$"):  # fmt: skip
        data.check_plan(plan, 1, 0.5)
