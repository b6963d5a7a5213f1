"""Project hooks: clear errors before anything runs, and nothing saved is touched."""

import shutil
from pathlib import Path

import pytest
from kedro.config import MissingConfigException
from kedro.framework.hooks import hook_impl

from tests.kedro_helpers import files_under, latest_json, make_project_copy, run_session


@pytest.fixture(scope="module")
def sliced_once(tmp_path_factory):
    """A project after one good run of dlp up to allocate_sparsity (the state both tests below
    start from); each test works on its own copy of it, so the slice runs once, not twice."""
    project = make_project_copy(tmp_path_factory.mktemp("hooks") / "project")
    run_session(project, "dlp", env="fast", to_nodes=["dlp.allocate_sparsity"])
    return project


@pytest.fixture
def sliced_copy(sliced_once, tmp_path):
    return Path(shutil.copytree(sliced_once, tmp_path / "project", symlinks=True))


def test_missing_parameter_file_names_the_file_and_writes_nothing(project_copy):
    (project_copy / "conf/base/parameters/dlp.yml").unlink()
    (project_copy / "conf/fast/parameters/dlp.yml").unlink()
    with pytest.raises(ValueError, match=r"conf/base/parameters/dlp\.yml"):
        run_session(project_copy, "dlp", env="fast")
    assert files_under(project_copy / "data/fast") == set()


def test_missing_input_file_says_what_to_run(project_copy):
    with pytest.raises(
        FileNotFoundError, match=r"Input dataset 'dlp\.\w+' has no data.*kedro run --pipeline=dlp"
    ):
        run_session(project_copy, "dlp", env="fast", from_nodes=["dlp.allocate_sparsity"])
    assert files_under(project_copy / "data/fast") == set()


def test_unknown_environment_names_the_missing_folder(project_copy):
    with pytest.raises(MissingConfigException, match=r"conf/nosuchenv"):
        run_session(project_copy, "dlp", env="nosuchenv")


def test_failed_run_is_recorded_and_keeps_earlier_versions(sliced_copy):
    # a run that completes, then one that fails in a node: the first run's outputs stay the latest
    project_copy = sliced_copy
    before = {p: p.read_bytes() for p in files_under(project_copy / "data")}
    shutil.rmtree(project_copy / "data/fast/05_model_input")  # input of the next slice
    with pytest.raises(FileNotFoundError):
        run_session(project_copy, "dlp", env="fast", from_nodes=["dlp.score_layers"])
    for path, content in before.items():
        if "05_model_input" not in str(path):
            assert path.read_bytes() == content
    record = latest_json(project_copy / "data/fast/09_tracking/run_record.json")
    assert record["status"] == "success"  # checked before any node ran: no failed record needed


def test_node_failure_writes_a_failed_run_record(project_copy):
    # a valid value that only a node can find too large for the corpus: the run fails mid-way
    with pytest.raises(Exception, match="dlp.data.eval_windows"):
        run_session(project_copy, "dlp", env="fast", runtime_params={"dlp.data.eval_windows": 5000})
    record = latest_json(project_copy / "data/fast/09_tracking/run_record.json")
    assert record["status"] == "failed" and "dlp.data.eval_windows" in record["error"]
    assert not (project_copy / "data/fast/08_reporting").exists()


def test_a_gpu_device_without_a_gpu_fails_before_any_node(project_copy):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match=r"tca.runtime.device = 'cuda'.*no CUDA GPU"):
        run_session(project_copy, "tca", env="fast", runtime_params={"tca.runtime.device": "cuda"})
    assert not files_under(project_copy / "data/fast")


class _FailAfter:
    """A node that fails after the run has already saved earlier nodes' versioned outputs."""

    def __init__(self, name: str) -> None:
        self.name = name

    @hook_impl
    def after_node_run(self, node) -> None:
        if node.name == self.name:
            raise RuntimeError(f"injected failure in {node.name}")


def test_a_failed_run_never_becomes_latest(sliced_copy):
    from kedro.framework.session import KedroSession

    project_copy = sliced_copy
    data = project_copy / "data/fast"
    good = {p: p.read_bytes() for p in files_under(data) if "09_tracking" not in p.parts}
    with KedroSession.create(project_path=project_copy, env="fast") as session:
        session._hook_manager.register(_FailAfter("dlp.allocate_sparsity"))
        with pytest.raises(RuntimeError, match="injected failure"):
            session.run(pipeline_names=["dlp"], to_nodes=["dlp.allocate_sparsity"])
    record = latest_json(data / "09_tracking/run_record.json")
    assert record["status"] == "failed"
    assert record["quarantined"], "the failed run saved versions before failing"
    now = {p: p.read_bytes() for p in files_under(data) if "09_tracking" not in p.parts}
    assert now == good  # every dataset's newest version is still the good run's, byte for byte
    quarantine = data / "09_tracking/quarantine/manual" / record["save_version"]
    assert all((quarantine / q).exists() for q in record["quarantined"])
