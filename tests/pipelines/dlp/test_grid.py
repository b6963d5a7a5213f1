"""The comparison grid's memory rule and its equivalence to pruning fresh dense copies (issue 29)."""

import copy
import gc
import weakref

import numpy as np
import pandas as pd
import pytest
import torch

from paper_pipelines.common.lm import CausalLM
from paper_pipelines.pipelines.dlp import grid
from paper_pipelines.pipelines.dlp.memory import PeakProbe, model_bytes
from paper_pipelines.pipelines.dlp.metrics import perplexity
from paper_pipelines.pipelines.dlp.parameters import AllocationParams, PrunerParams
from paper_pipelines.pipelines.dlp.sequential import prune_sequentially
from tests.kedro_helpers import log_messages
from tests.pipelines.dlp.test_calibration import tiny_llama

ALLOCATION = AllocationParams(target_sparsity=0.5)
SPARSITIES = {
    "uniform@0.5": [0.5, 0.5, 0.5], "owl@0.5": [0.6, 0.5, 0.4], "dlp@0.5": [0.3, 0.5, 0.7],
    "dlp_mean@0.5": [0.4, 0.5, 0.6],
}  # fmt: skip


def _setup():
    torch.manual_seed(1)
    calib, evaluation = torch.randint(0, 64, (4, 16)), torch.randint(0, 64, (2, 16))
    return CausalLM(tiny_llama(), None, "tiny"), calib, evaluation


def test_run_order_puts_the_default_last_and_keeps_the_rest():
    cells = [(0.5, "wanda", m) for m in ("uniform", "owl", "dlp", "dlp_mean")]
    assert grid.run_order(cells, (0.5, "wanda", "dlp")) == [0, 1, 3, 2]
    assert grid.run_order(cells, (0.5, "wanda", "dlp_mean")) == [0, 1, 2, 3]


def test_grid_holds_the_dense_model_and_at_most_one_pruned_copy(monkeypatch):
    """Count the models alive at every prune (the dense one and every deep copy the grid made): the
    dense model and one working copy. Keeping the default run's copy while the loop goes on (the
    default is the third of four allocations) would make it three."""
    base, calib, evaluation = _setup()
    models = weakref.WeakSet([base.model])
    alive = []
    real_deepcopy = copy.deepcopy

    def tracked_deepcopy(obj, *args):
        out = real_deepcopy(obj, *args)
        if isinstance(out, torch.nn.Module):
            models.add(out)
            gc.collect()
            alive.append(len(models))  # a fresh copy per run would be the third model here
        return out

    def counting(*args, **kwargs):
        gc.collect()
        alive.append(len(models))
        return prune_sequentially(*args, **kwargs)

    monkeypatch.setattr(grid.copy, "deepcopy", tracked_deepcopy)
    monkeypatch.setattr(grid, "prune_sequentially", counting)
    pruner = PrunerParams(bases=["magnitude"])
    grid.prune_grid(base, calib, evaluation, SPARSITIES, pruner, ALLOCATION, 2, 2)
    assert alive == [2, 2, 2, 2, 2], alive  # the one deep copy, then the four runs


def test_grid_equals_pruning_a_fresh_dense_copy_per_cell_and_leaves_the_dense_model():
    base, calib, evaluation = _setup()
    dense = copy.deepcopy(base.model.state_dict())
    pruner = PrunerParams(bases=["sparsegpt", "magnitude"])  # SparseGPT rebinds weight.data
    runs, masks, pruned = grid.prune_grid(
        base, calib, evaluation, SPARSITIES, pruner, ALLOCATION, 2, 2
    )
    # rows in grid order (sparsity, base, allocation), whatever order they ran in
    assert list(zip(runs["base"], runs["allocation"], strict=True)) == [
        (b, m) for b in ("sparsegpt", "magnitude") for m in ("uniform", "owl", "dlp", "dlp_mean")
    ]
    for row in runs.itertuples():
        fresh = copy.deepcopy(base.model)
        prune_sequentially(
            fresh, calib, SPARSITIES[f"{row.allocation}@0.5"], row.base, batch_size=2
        )
        assert row.perplexity == perplexity(fresh, evaluation, 2), (row.base, row.allocation)
        if (row.base, row.allocation) == ("sparsegpt", "dlp"):  # the default: returned as it is
            for (n, p), q in zip(
                pruned.model.state_dict().items(), fresh.state_dict().values(), strict=True
            ):
                assert torch.equal(p, q), n
    for name, tensor in base.model.state_dict().items():
        assert torch.equal(tensor, dense[name]), name
    assert pruned.model is not base.model and len(masks["names"]) == 3 * 7
    assert set(runs["dtype"]) == {"float32"}


def test_restore_dense_copies_every_weight_back_in_place():
    dense, working = tiny_llama(0), tiny_llama(1)
    storage = working.model.layers[0].mlp.down_proj.weight.data_ptr()
    grid.restore_dense(working, dense)
    for (n, p), q in zip(working.state_dict().items(), dense.state_dict().values(), strict=True):
        assert torch.equal(p, q), n
    assert working.model.layers[0].mlp.down_proj.weight.data_ptr() == storage


def test_model_bytes_counts_tied_weights_once():
    model = tiny_llama()
    n = sum(p.numel() for p in model.parameters()) + sum(b.numel() for b in model.buffers())
    assert model_bytes(model) == 4 * n
    assert model_bytes(model.to(torch.bfloat16)) == 2 * n


def test_peak_probe_counts_an_extra_copy():
    """The probe's figure goes up by about one when the run holds one more model-sized buffer."""
    model = torch.nn.Linear(2048, 2048)  # 16 MiB of float32
    probe = PeakProbe(model)
    if probe.baseline is None:  # no /proc: the figure is None, never a guess
        probe.start()
        assert probe.model_copies() is None
        return
    probe.start()
    quiet = probe.model_copies()
    probe.start()
    extra = torch.ones(2048, 2048)  # written, so resident
    loud = probe.model_copies()
    del extra
    assert 0.8 < loud - quiet < 1.3, (quiet, loud)
    assert isinstance(pd.Series([loud]).iloc[0], float)


# ---------------------------------------------------------------- pinned by mutation testing (#29)
def test_allocation_keys_are_the_released_ratio_names():
    assert grid.allocation_key("dlp", 0.7) == "dlp@0.7"
    assert (
        grid.allocation_key("owl", 0.55) == "owl@0.55"
        and grid.allocation_key("uniform", 0.5) == "uniform@0.5"
    )


def test_allocate_reads_the_statistic_each_method_needs():
    scores = pd.DataFrame(
        {
            "median_score": [1.0, 2.0, 3.0],
            "mean_score": [3.0, 2.0, 1.0],
            "outlier_ratio": [1.0, 3.0, 2.0],
        }
    )
    params = AllocationParams(
        target_sparsity=0.5, dlp={"alpha": 0.1, "score_stat": "median"}, owl={"lam": 0.08},
        min_layer_sparsity=0.02,
    )  # fmt: skip
    assert grid.allocate("uniform", scores, 0.5, params).tolist() == [0.5, 0.5, 0.5]
    # test_allocation's hand cases: U = [1, 2, 3] at S = 0.5, a = 0.1 -> [0.4, 0.5, 0.6]
    np.testing.assert_allclose(grid.allocate("dlp", scores, 0.5, params), [0.4, 0.5, 0.6])
    np.testing.assert_allclose(grid.allocate("dlp_mean", scores, 0.5, params), [0.6, 0.5, 0.4])
    np.testing.assert_allclose(grid.allocate("owl", scores, 0.7, params), [0.78, 0.62, 0.70])
    mean_stat = params.model_copy(
        update={"dlp": params.dlp.model_copy(update={"score_stat": "mean"})}
    )
    np.testing.assert_allclose(grid.allocate("dlp", scores, 0.5, mean_stat), [0.6, 0.5, 0.4])
    # the minimum block sparsity reaches both spreads: at S = 0.1 the densest block is lifted
    np.testing.assert_allclose(
        grid.allocate("dlp", scores, 0.1, params), [0.02, 0.1, 0.2], atol=1e-12
    )
    np.testing.assert_allclose(
        grid.allocate("owl", scores, 0.08, params), [0.16, 0.02, 0.08], atol=1e-12
    )


def test_pack_masks_lists_names_shapes_and_bits():
    bits = torch.tensor([5], dtype=torch.uint8)
    packed = grid.pack_masks({"block0.q": {"shape": [2, 3], "bits": bits}})
    assert packed == {"names": ["block0.q"], "shapes": [[2, 3]], "mask.block0.q": bits}


def test_restore_dense_refuses_a_different_model():
    with pytest.raises(ValueError, match="working copy and dense model differ"):
        grid.restore_dense(torch.nn.Linear(2, 3), torch.nn.Linear(3, 2))


def test_n_m_grid_ignores_the_block_ratios():
    base, calib, evaluation = _setup()
    pruner = PrunerParams(bases=["magnitude"], sparsity_type="2:4")
    runs, _, pruned = grid.prune_grid(base, calib, evaluation, SPARSITIES, pruner, ALLOCATION, 2, 2)
    assert (
        runs["actual_sparsity"].tolist() == [0.5] * 4
    )  # 2:4 in every block, whatever the allocation
    assert list(runs.columns) == [
        "model", "dtype", "allocation", "base", "target_sparsity", "actual_sparsity", "perplexity",
        "prune_seconds", "peak_memory_model_copies", "cuda_peak_model_copies",
    ]  # fmt: skip
    assert set(runs["model"]) == {"tiny"} and (runs["prune_seconds"] > 0).all()
    assert runs["cuda_peak_model_copies"].isna().all()  # no CUDA here
    assert pruned.name == "tiny"


def test_status_fields_are_read_from_proc(tmp_path, monkeypatch):
    from paper_pipelines.pipelines.dlp import memory

    status = tmp_path / "status"
    status.write_text("Name:\tpython\nVmHWM:\t  2048 kB\nVmRSS:\t  1024 kB\n")
    monkeypatch.setattr(memory, "STATUS", status)
    assert memory.rss_bytes() == 1024 * 1024 and memory.peak_bytes() == 2048 * 1024
    assert memory._status_kb("VmSwap") is None
    assert memory._status_kb("VmHW") is None  # a prefix of a field is not the field
    monkeypatch.setattr(memory, "STATUS", tmp_path / "missing")
    assert memory.rss_bytes() is None and memory.peak_bytes() is None


def test_peak_reset_and_the_model_copies_formula(tmp_path, monkeypatch):
    from paper_pipelines.pipelines.dlp import memory

    clear = tmp_path / "clear_refs"
    monkeypatch.setattr(memory, "CLEAR_REFS", clear)
    assert memory.reset_peak() and clear.read_text() == "5"  # 5 resets the peak RSS mark
    monkeypatch.setattr(memory, "CLEAR_REFS", tmp_path / "no" / "such" / "file")
    assert memory.reset_peak() is False
    monkeypatch.setattr(memory, "CLEAR_REFS", clear)
    monkeypatch.setattr(memory, "rss_bytes", lambda: 1000)
    probe = PeakProbe(torch.nn.Linear(10, 10, bias=False))  # 100 float32 = 400 bytes
    assert probe.model_bytes == 400 and probe.baseline == 1000
    probe.start()
    monkeypatch.setattr(memory, "peak_bytes", lambda: 1600)
    assert probe.model_copies() == 1 + 600 / 400  # the dense model plus what the run added
    monkeypatch.setattr(memory, "peak_bytes", lambda: None)
    assert probe.model_copies() is None
    monkeypatch.setattr(memory, "CLEAR_REFS", tmp_path / "no" / "such" / "file")
    probe.start()  # cannot reset: the peak would be the process's, so no figure
    monkeypatch.setattr(memory, "peak_bytes", lambda: 1600)
    assert probe.model_copies() is None
    assert probe.cuda_model_copies() is None  # no CUDA here


# ---------------------------------------------------------------- pinned by mutation testing (#29)
def test_grid_passes_the_sparsegpt_block_size():
    """SparseGPT picks its mask per block of `blocksize` columns (floor(s * n) of the n weights in
    the block): at blocksize 16, every 16-column slice of a linear in block 1 (sparsity 0.5 in the
    default dlp allocation) is exactly half zeros. The default 128 would take each 32- or 64-column
    linear as one block, and its 16-column slices would not all be at exactly 0.5."""
    from paper_pipelines.pipelines.dlp.parameters import SparseGPTParams

    base, calib, evaluation = _setup()
    pruner = PrunerParams(bases=["sparsegpt"], sparsegpt=SparseGPTParams(blocksize=16))
    _, _, pruned = grid.prune_grid(base, calib, evaluation, SPARSITIES, pruner, ALLOCATION, 2, 2)
    for name, module in pruned.model.model.layers[1].named_modules():
        if isinstance(module, torch.nn.Linear):
            w = module.weight
            for j in range(0, w.shape[1], 16):
                assert int((w[:, j : j + 16] == 0).sum()) == w.shape[0] * 8, (name, j)


def test_grid_logs_each_run(caplog, monkeypatch):
    import logging

    caplog.set_level(logging.INFO, logger="paper_pipelines.pipelines.dlp.grid")
    monkeypatch.setattr(PeakProbe, "model_copies", lambda self: None)  # no peak-RSS reading here
    base, calib, evaluation = _setup()
    runs, _, _ = grid.prune_grid(
        base, calib, evaluation, SPARSITIES, PrunerParams(bases=["magnitude"]), ALLOCATION, 2, 2
    )
    rows = {row.allocation: row for row in runs.itertuples()}
    lines = log_messages(caplog, "paper_pipelines.pipelines.dlp.grid")
    assert lines == [
        f"{method} + magnitude @ 0.50: actual sparsity {rows[method].actual_sparsity:.4f}, "
        f"perplexity {rows[method].perplexity:.2f}, peak memory n/a model copies"
        for method in ("uniform", "owl", "dlp_mean", "dlp")  # run order: the default (dlp) last
    ]


def test_restore_dense_refuses_a_model_with_an_extra_parameter():
    # the same weight shape, but the working copy has a bias the dense model lacks
    with pytest.raises(ValueError, match=r"zip\(\) argument 2 is shorter than argument 1"):
        grid.restore_dense(torch.nn.Linear(2, 2), torch.nn.Linear(2, 2, bias=False))


def test_grid_passes_every_sparsegpt_setting():
    """The default run's pruned model is SparseGPT with the configured block size, damping and
    mask rule (each changes the result on this model), as pruning a fresh dense copy gives it."""
    from paper_pipelines.pipelines.dlp.parameters import SparseGPTParams

    base, calib, evaluation = _setup()
    settings = {"blocksize": 16, "percdamp": 0.5, "mask_rule": "released"}
    pruner = PrunerParams(bases=["sparsegpt"], sparsegpt=SparseGPTParams(**settings))
    _, _, pruned = grid.prune_grid(base, calib, evaluation, SPARSITIES, pruner, ALLOCATION, 2, 2)
    fresh = copy.deepcopy(base.model)
    prune_sequentially(fresh, calib, SPARSITIES["dlp@0.5"], "sparsegpt", batch_size=2, **settings)
    for (n, p), q in zip(
        pruned.model.state_dict().items(), fresh.state_dict().values(), strict=True
    ):
        assert torch.equal(p, q), n
    for changed in ({"blocksize": 128}, {"percdamp": 0.01}, {"mask_rule": "exact"}):
        other = copy.deepcopy(base.model)
        prune_sequentially(
            other,
            calib,
            SPARSITIES["dlp@0.5"],
            "sparsegpt",
            batch_size=2,
            **{**settings, **changed},
        )
        assert not all(
            torch.equal(p, q)
            for p, q in zip(other.state_dict().values(), fresh.state_dict().values(), strict=True)
        ), changed


def test_only_the_default_run_keeps_its_masks(monkeypatch):
    # the other runs' masks (an 8th of a byte per weight each) are never built
    kept = []

    def recording(*args, **kwargs):
        masks = prune_sequentially(*args, **kwargs)
        kept.append(len(masks))
        return masks

    monkeypatch.setattr(grid, "prune_sequentially", recording)
    base, calib, evaluation = _setup()
    grid.prune_grid(
        base, calib, evaluation, SPARSITIES, PrunerParams(bases=["magnitude"]), ALLOCATION, 2, 2
    )
    assert kept == [0, 0, 0, 3 * 7]  # uniform, owl, dlp_mean, then the default dlp: 21 linears
