"""The paper-scale path (CIFAR-10-C folder + ResNet checkpoint) runs the same code, here on a tiny
synthetic folder and a random ResNet-18 at 32x32 so that it fits in a CPU test."""

from __future__ import annotations

import numpy as np
import torch
from PIL import Image

from paper_pipelines.pipelines.tca.real_data import domain_manifest, load_domain
from paper_pipelines.pipelines.tca.source_model import ResNet
from tests.kedro_helpers import latest_json, run_session


def _cifar_c_folder(root, corruptions, n_per_class=3, classes=10):
    rng = np.random.default_rng(0)
    for name in corruptions:
        for c in range(classes):
            d = root / name / "3" / f"class_{c:02d}"
            d.mkdir(parents=True)
            for i in range(n_per_class):
                pixels = rng.integers(0, 256, size=(32, 32, 3), dtype=np.uint8)
                Image.fromarray(pixels).save(d / f"{i}.png")


def test_npy_layout_rows_per_severity(tmp_path):
    images = np.arange(5 * 10_000, dtype=np.uint32).reshape(-1, 1, 1, 1)
    images = np.broadcast_to(images % 251, (50_000, 2, 2, 3)).astype(np.uint8)
    np.save(tmp_path / "fog.npy", images)
    np.save(tmp_path / "labels.npy", np.arange(50_000) % 10)
    manifest = domain_manifest(str(tmp_path), ["fog"], [2], max_per_domain=5, seed=0)
    x, y = load_domain(manifest["fog@2"])
    assert x.shape == (5, 3, 2, 2)
    rows = np.asarray(manifest["fog@2"]["rows"])
    assert np.all((rows >= 10_000) & (rows < 20_000))  # severity 2 = second block of 10000
    assert np.array_equal(y, rows % 10)


def test_paper_scale_path_end_to_end(project_copy, tmp_path):
    data_dir = tmp_path / "cifar10c"
    _cifar_c_folder(data_dir, ["gaussian_noise", "snow"])
    torch.manual_seed(0)
    checkpoint = tmp_path / "resnet18.pt"
    state = ResNet(18, 10).state_dict()
    # torchvision naming, as a user's checkpoint would have it
    torch.save(
        {k.replace("featurizer.", "").replace("classifier.", "fc."): v for k, v in state.items()},
        checkpoint,
    )
    params = {
        "tca": {
            "real_data": {
                "enabled": True,
                "data_dir": str(data_dir),
                "checkpoint": str(checkpoint),
                "arch": "resnet18",
                "input_size": 32,
            },
            "data": {"corruptions": ["gaussian_noise", "snow"], "severities": [3]},
            "tta": {"batch_size": 16, "memory_probe": False},
        }
    }
    run_session(project_copy, "tca", env="fast", runtime_params=params)
    metrics = latest_json(project_copy / "data/fast/08_reporting/tca/metrics.json")
    assert metrics["n_corruptions"] == 2
    for key in ("acc_source", "acc_linear_tca", "acc_mean_only", "acc_tent"):
        assert 0.0 <= metrics[key] <= 100.0
    assert metrics["weights_unchanged_by_tca"] is True
    assert "clean_acc_after_continual_tent" not in metrics  # no clean split at paper scale
