"""dlp end to end in the fast environment, through a real KedroSession in a project copy."""

import shutil

import numpy as np
import pytest
import torch
from kedro.io.core import Version

from paper_pipelines.common.params import ParameterError
from paper_pipelines.datasets import TorchDataset
from tests.kedro_helpers import (
    block_network,
    files_under,
    latest_json,
    make_project_copy,
    run_session,
    versions_of,
)

CONTRACT = {
    "dense_ppl",
    "ppl_uniform",
    "ppl_owl",
    "ppl_dlp",
    "actual_sparsity_dlp",
    "target_sparsity",
    "model_name",
}


@pytest.fixture(scope="module")
def fast_run(tmp_path_factory):
    """One fast run shared by the checks below (about 15 s of pipeline time), with sockets blocked."""
    project = make_project_copy(tmp_path_factory.mktemp("dlp") / "project")
    pyproject = (project / "pyproject.toml").read_text()
    with block_network() as attempts:
        run_session(project, "dlp", env="fast")
    assert attempts == [], f"the fast run tried to reach the network: {attempts}"
    # telemetry is off: kedro-telemetry would otherwise append a project id to pyproject.toml
    assert (project / "pyproject.toml").read_text() == pyproject
    return project


def test_fast_run_writes_versioned_outputs(fast_run):
    root = fast_run / "data/fast"
    metrics = latest_json(root / "08_reporting/dlp/metrics.json")
    assert set(metrics) >= CONTRACT
    assert metrics["target_sparsity"] == 0.5
    # the fast environment prunes in bfloat16 (dlp.model.dtype): the half-precision path end to end
    assert metrics["model_dtype"] == "bfloat16"
    # spec check 2 at fast scale: every allocation within rounding of the target (C_in = 64 here)
    assert abs(metrics["actual_sparsity_dlp"] - 0.5) < 0.02
    assert metrics["lora_masks_intact"] is True
    for name in (
        "08_reporting/dlp/results.parquet",
        "08_reporting/dlp/claims.parquet",
        "08_reporting/dlp/allocation_plot.png",
        "08_reporting/dlp/perplexity_plot.png",
        "07_model_output/dlp/layer_scores_table.parquet",
        "07_model_output/dlp/layer_sparsities.json",
        "07_model_output/dlp/pruning_runs_table.parquet",
        "06_models/dlp/pruning_masks.pt",
        "05_model_input/dlp/calibration_windows.pt",
    ):
        assert len(versions_of(root / name)) == 1, name


def _latest_parquet(path):
    import pandas as pd

    return pd.read_parquet(path / versions_of(path)[-1] / path.name)


def test_pruning_runs_table_covers_every_allocation_and_base(fast_run):
    runs = _latest_parquet(fast_run / "data/fast/07_model_output/dlp/pruning_runs_table.parquet")
    assert len(runs) == 12  # 4 allocations x 3 base pruners (conf/fast/parameters/dlp.yml)
    assert set(runs["allocation"]) == {"uniform", "owl", "dlp", "dlp_mean"}
    assert set(runs["base"]) == {"wanda", "sparsegpt", "magnitude"}
    # (a perplexity is >= 1 by construction; what can fail, in bfloat16 above all, is a NaN or inf)
    assert np.isfinite(runs["perplexity"]).all()
    assert (runs["actual_sparsity"].between(0.45, 0.55)).all()
    assert set(runs["dtype"]) == {"bfloat16"}
    # measured per run on Linux (memory.py); a tiny model's figure is noise, so only its presence
    assert runs["peak_memory_model_copies"].notna().all()


def test_results_have_one_row_per_method_at_the_headline_setting(fast_run):
    results = _latest_parquet(fast_run / "data/fast/08_reporting/dlp/results.parquet")
    metrics = latest_json(fast_run / "data/fast/08_reporting/dlp/metrics.json")
    assert list(results["method"]) == ["uniform", "owl", "dlp", "dlp_mean"]
    assert set(results["base"]) == {"wanda"} and set(results["target_sparsity"]) == {0.5}
    by_method = results.set_index("method")
    for method in ("uniform", "owl", "dlp", "dlp_mean"):
        assert by_method.loc[method, "perplexity"] == metrics[f"ppl_{method}"]
    assert (results["dense_perplexity"] == metrics["dense_ppl"]).all()


def test_metrics_keep_the_contract_and_every_claim_is_checked(fast_run):
    from paper_pipelines.pipelines.dlp.report import CLAIMS, METRICS

    metrics = latest_json(fast_run / "data/fast/08_reporting/dlp/metrics.json")
    assert set(METRICS) <= set(metrics)
    claims = _latest_parquet(fast_run / "data/fast/08_reporting/dlp/claims.parquet")
    # one row per claim with a bool verdict; the fast scale decides no claim, so none is asserted
    assert list(claims["claim"]) == [c.id for c in CLAIMS]
    assert claims["holds"].dtype == bool and claims["gates"].dtype == bool
    assert list(claims["gates"]) == [c.gates for c in CLAIMS]
    assert (claims["ours"] != "").all()
    by_claim = claims.set_index("claim")
    assert by_claim.loc["dlp_beats_owl", "paper"] == "ppl_owl = 30.58, ppl_dlp = 22.79"


def test_allocation_json_has_mean_sparsity_equal_to_target(fast_run):
    sparsities = latest_json(fast_run / "data/fast/07_model_output/dlp/layer_sparsities.json")
    for key in ("uniform@0.5", "owl@0.5", "dlp@0.5", "dlp_mean@0.5"):
        assert abs(sum(sparsities[key]) / len(sparsities[key]) - 0.5) < 1e-9


def test_saved_masks_reload_and_match_the_target(fast_run):
    path = fast_run / "data/fast/06_models/dlp/pruning_masks.pt"
    masks = TorchDataset(filepath=str(path), version=Version(None, None)).load()
    total = pruned = 0
    for name, shape in zip(masks["names"], masks["shapes"], strict=True):
        bits = masks[f"mask.{name}"].numpy()
        mask = np.unpackbits(bits)[: int(np.prod(shape))]
        total, pruned = total + mask.size, pruned + int(mask.sum())
    assert abs(pruned / total - 0.5) < 0.02
    assert isinstance(masks[f"mask.{masks['names'][0]}"], torch.Tensor)


def test_run_record_names_inputs_outputs_and_timings(fast_run):
    record = latest_json(fast_run / "data/fast/09_tracking/run_record.json")
    assert record["status"] == "success" and record["pipelines"] == ["dlp"]
    assert record["env"] == "fast" and record["runner"] == "SequentialRunner"
    assert "dlp" in record["params_hash"]
    assert "dlp.metrics" in record["outputs"] and "dlp.calibration_windows" in record["outputs"]
    assert record["node_seconds"]["dlp.prune_and_measure"] > 0
    assert record["peak_memory_mb"]["self"] > 100


def test_same_seed_same_metrics(fast_run, project_copy):
    run_session(project_copy, "dlp", env="fast")
    first = latest_json(fast_run / "data/fast/08_reporting/dlp/metrics.json")
    second = latest_json(project_copy / "data/fast/08_reporting/dlp/metrics.json")
    assert first == second


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"dlp.allocation.target_sparsity": 1.2}, r"dlp\.allocation\.target_sparsity = 1\.2"),
        ({"dlp.allocation.methods": ["uniform", "magic"]}, r"dlp\.allocation\.methods\.1"),
        ({"dlp.allocation.dlp.alpha": 0.45}, r"dlp\.allocation\.dlp\.alpha is too large"),
        ({"dlp.pruner.bases": ["obs"]}, r"dlp\.pruner\.bases\.0"),
        ({"dlp.data.eval_windows": 5000}, r"lower dlp\.data\.eval_windows"),
        ({"dlp.model.source": "hf"}, r"dlp\.model\.source = 'hf'"),
        (
            {"dlp.allocation.methods": ["uniform", "owl", "dlp"]},
            r"must include uniform, owl, dlp, dlp_mean.*\['dlp_mean'\] missing",
        ),
        ({"dlp.data.source": "c4_wikitext2"}, r"dlp\.c4_train, dlp\.wikitext2_test.*--env paper"),
    ],
)
def test_bad_input_fails_clearly_and_keeps_earlier_outputs(fast_run, override, message):
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    with pytest.raises(Exception, match=message) as info:
        run_session(fast_run, "dlp", env="fast", runtime_params=override)
    assert isinstance(info.value, (ParameterError, ValueError, FileNotFoundError))
    after = files_under(fast_run / "data")
    # nothing earlier is touched; a failed run may add only its run record
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in after - set(before)}
    assert all("metrics" not in str(p) and "results" not in str(p) for p in new), new


def test_missing_model_folder_names_the_catalog_entry_and_keeps_earlier_outputs(fast_run):
    """The pretrained LM is a catalog entry: a folder that is not there fails clearly, writes no result."""
    env = fast_run / "conf/no_model"
    shutil.rmtree(env, ignore_errors=True)
    shutil.copytree(fast_run / "conf/fast", env)
    (env / "catalog/dlp.yml").write_text(
        "dlp.pretrained_lm:\n  type: paper_pipelines.datasets.CausalLMDataset\n"
        "  source: hf_folder\n  path: /no/such/model\n"
    )
    before = {p: p.stat().st_mtime_ns for p in files_under(fast_run / "data")}
    try:
        with pytest.raises(FileNotFoundError, match=r"'dlp\.pretrained_lm' has no data") as info:
            run_session(fast_run, "dlp", env="no_model")
    finally:
        shutil.rmtree(env)
    assert "path='/no/such/model'" in str(info.value)
    assert "nothing was run or written" in str(info.value)
    assert all(p.stat().st_mtime_ns == t for p, t in before.items())
    new = {p.relative_to(fast_run) for p in files_under(fast_run / "data") - set(before)}
    assert all("metrics" not in str(p) and "results" not in str(p) for p in new), new
