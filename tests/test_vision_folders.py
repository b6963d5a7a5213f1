"""CifarFolderDataset and ResNetCheckpointDataset: a tiny fake CIFAR-100 folder and tiny ResNet files
written in tmp_path (no download), what they load and what they refuse."""

import pickle

import numpy as np
import pytest
import torch
from kedro.io.core import DatasetError

from paper_pipelines.datasets import CifarFolderDataset, ResNetCheckpointDataset


def write_fake_cifar(root, n_train=40, n_test=12, n_classes=4, seed=0):
    """The python-version layout: pickles with bytes keys, data uint8 (N, 3072), fine labels, meta."""
    folder = root / "cifar-100-python"
    folder.mkdir(parents=True)
    rng = np.random.default_rng(seed)
    out = {}
    for split, n in (("train", n_train), ("test", n_test)):
        data = rng.integers(0, 256, (n, 3072), dtype=np.uint8)
        labels = [i % n_classes for i in range(n)]
        batch = {b"data": data, b"fine_labels": labels, b"coarse_labels": [0] * n}
        # the test writes the archive's own format; the project never writes pickles
        (folder / split).write_bytes(pickle.dumps(batch, protocol=2))
        out[split] = (data, labels)
    names = [f"class_{c}".encode() for c in range(n_classes)]
    (folder / "meta").write_bytes(pickle.dumps({b"fine_label_names": names}, protocol=2))
    return out


def test_cifar_folder_loads_images_labels_and_names(tmp_path):
    written = write_fake_cifar(tmp_path)
    for path in (tmp_path, tmp_path / "cifar-100-python"):
        out = CifarFolderDataset(path=str(path)).load()
        assert out["classes"] == ["class_0", "class_1", "class_2", "class_3"]
        train = out["train"]
        assert train["images"].shape == (40, 3, 32, 32) and train["images"].dtype == np.uint8
        np.testing.assert_array_equal(train["images"].reshape(40, -1), written["train"][0])
        assert train["labels"].tolist() == written["train"][1]
        assert out["test"]["labels"].dtype == np.int64 and len(out["test"]["labels"]) == 12


def test_exists_lets_the_input_check_refuse_a_placeholder_path_before_any_node(tmp_path):
    assert not CifarFolderDataset(path=str(tmp_path)).exists()
    assert not ResNetCheckpointDataset(path=str(tmp_path / "none.pth")).exists()
    write_fake_cifar(tmp_path)
    torch.save({}, tmp_path / "r50.pth")
    assert CifarFolderDataset(path=str(tmp_path)).exists()
    assert ResNetCheckpointDataset(path=str(tmp_path / "r50.pth")).exists()


def test_cifar_folder_refuses_what_it_cannot_read(tmp_path):
    with pytest.raises(DatasetError, match="no train, test and meta"):
        CifarFolderDataset(path=str(tmp_path)).load()
    with pytest.raises(DatasetError, match="needs path"):
        CifarFolderDataset(path="")
    with pytest.raises(DatasetError, match="read-only"):
        CifarFolderDataset(path=str(tmp_path)).save({"train": None})
    write_fake_cifar(tmp_path)
    folder = tmp_path / "cifar-100-python"
    # a pickle naming any other global is refused before it can run
    (folder / "test").write_bytes(pickle.dumps({b"data": print}, protocol=2))
    with pytest.raises(DatasetError, match=r"may not name (__builtin__|builtins)\.print"):
        CifarFolderDataset(path=str(tmp_path)).load()
    bad = {b"data": np.zeros((2, 10), np.uint8), b"fine_labels": [0, 1]}
    (folder / "test").write_bytes(pickle.dumps(bad, protocol=2))
    with pytest.raises(DatasetError, match=r"expected \(N, 3072\)"):
        CifarFolderDataset(path=str(tmp_path)).load()


def _tiny_resnet():
    from transformers import ResNetConfig, ResNetModel

    torch.manual_seed(0)
    config = ResNetConfig(embedding_size=8, hidden_sizes=[8, 16, 32, 64], depths=[1, 1, 1, 1])
    return ResNetModel(config).eval()


def test_resnet_checkpoint_reads_a_transformers_folder_and_a_state_dict_file(tmp_path):
    model = _tiny_resnet()
    model.save_pretrained(tmp_path / "hf")
    loaded = ResNetCheckpointDataset(path=str(tmp_path / "hf")).load()["model"]
    x = torch.rand(1, 3, 32, 32)
    torch.testing.assert_close(loaded(x).pooler_output, model(x).pooler_output, rtol=0, atol=0)
    torch.save({"state_dict": {"conv1.weight": torch.ones(1)}}, tmp_path / "r50.pth")
    out = ResNetCheckpointDataset(path=str(tmp_path / "r50.pth")).load()
    assert torch.equal(out["state_dict"]["state_dict"]["conv1.weight"], torch.ones(1))


def test_resnet_checkpoint_refuses_what_it_cannot_do(tmp_path):
    with pytest.raises(DatasetError, match="neither a transformers folder"):
        ResNetCheckpointDataset(path=str(tmp_path / "missing.pth")).load()
    with pytest.raises(DatasetError, match="needs path"):
        ResNetCheckpointDataset(path="")
    with pytest.raises(DatasetError, match="read-only"):
        ResNetCheckpointDataset(path=str(tmp_path)).save({"state_dict": {}})
    torch.save([torch.ones(1)], tmp_path / "list.pth")
    with pytest.raises(DatasetError, match="holds no state dict"):
        ResNetCheckpointDataset(path=str(tmp_path / "list.pth")).load()
