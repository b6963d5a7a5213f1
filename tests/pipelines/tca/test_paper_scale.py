"""The paper-scale path (CIFAR-10-C folder + ResNet checkpoint, both catalog inputs) runs the same code,
here on a tiny synthetic folder and a random ResNet-18 at 32x32 so that it fits in a CPU test."""

from __future__ import annotations

import os
import shutil

import numpy as np
import pytest
import torch
from kedro.framework.session import KedroSession
from PIL import Image

from paper_pipelines.pipelines.tca.data import CifarCFolderDataset, domain_manifest, load_domain
from paper_pipelines.pipelines.tca.source_model import ResNet
from tests.kedro_helpers import PROJECT_ROOT, files_under, latest_json, run_session

# Pipeline runs take tens of seconds each: like test_pipeline.py (which `make mutate` leaves out),
# they are not rerun for every mutant; mutmut sets MUTANT_UNDER_TEST in the processes it runs.
pipeline_run = pytest.mark.skipif(
    "MUTANT_UNDER_TEST" in os.environ, reason="a pipeline run: too slow to rerun per mutant"
)


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


def _paper_catalog_env(project, name="paper_cpu"):
    """An environment with fast sizes on the CPU and conf/paper/catalog/tca.yml verbatim."""
    env = project / "conf" / name
    shutil.copytree(project / "conf" / "fast", env)
    (env / "catalog").mkdir(exist_ok=True)
    shutil.copy(PROJECT_ROOT / "conf/paper/catalog/tca.yml", env / "catalog" / "tca.yml")
    return name


PAPER_PARAMS = {
    "tca": {
        "real_data": {"enabled": True, "arch": "resnet18", "input_size": 32},
        "data": {"corruptions": ["gaussian_noise", "snow"], "severities": [3]},
        "tta": {"batch_size": 16, "memory_probe": False},
    }
}


@pipeline_run
def test_paper_scale_path_end_to_end(project_copy):
    # the paths conf/paper/catalog/tca.yml names, under the fast data root
    raw = project_copy / "data/fast/01_raw/tca"
    _cifar_c_folder(raw / "CIFAR-10-C", ["gaussian_noise", "snow"])
    torch.manual_seed(0)
    state = ResNet(18, 10).state_dict()
    # torchvision naming, as a user's checkpoint would have it
    torch.save(
        {k.replace("featurizer.", "").replace("classifier.", "fc."): v for k, v in state.items()},
        raw / "source_checkpoint.pt",
    )
    env = _paper_catalog_env(project_copy)
    run_session(project_copy, "tca", env=env, runtime_params=PAPER_PARAMS)
    metrics = latest_json(project_copy / "data/fast/08_reporting/tca/metrics.json")
    assert metrics["n_corruptions"] == 2
    for key in ("acc_source", "acc_linear_tca", "acc_mean_only", "acc_tent"):
        assert 0.0 <= metrics[key] <= 100.0
    assert metrics["weights_unchanged_by_tca"] is True
    assert metrics["clean_acc_after_continual_tent"] is None  # no clean split at paper scale


@pipeline_run
def test_real_data_without_catalog_inputs_fails_first(project_copy):
    """real_data.enabled in an environment whose catalog supplies no folder: the first node says how."""
    before = files_under(project_copy / "data")
    with pytest.raises(Exception, match=r"tca.cifar_c_folder supplies no CIFAR-10-C folder"):
        run_session(project_copy, "tca", env="fast", runtime_params=PAPER_PARAMS)
    written = files_under(project_copy / "data") - before
    assert not [p for p in written if "run_record" not in str(p)], written


def test_missing_folder_names_the_catalog_entry(tmp_path):
    with pytest.raises(Exception, match=r"tca.cifar_c_folder.*not a directory"):
        CifarCFolderDataset(path=str(tmp_path / "absent")).load()
    folder = CifarCFolderDataset(path=str(tmp_path)).load()
    assert folder.root == str(tmp_path)


@pipeline_run
def test_paper_environment_resolves_the_user_inputs(project_copy):
    """conf/paper: real data on, the catalog entries typed as TorchDataset and the folder dataset."""
    with KedroSession.create(project_path=project_copy, env="paper") as session:
        context = session.load_context()
        params = context.config_loader["parameters"]["tca"]
        catalog = context.catalog
        assert params["real_data"]["enabled"] is True and params["runtime"]["device"] == "cuda"
        assert type(catalog.get("tca.source_checkpoint")).__name__ == "TorchDataset"
        assert isinstance(catalog.get("tca.cifar_c_folder"), CifarCFolderDataset)
