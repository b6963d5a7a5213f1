"""The comparison grid's memory rule and its equivalence to pruning fresh dense copies (issue 29)."""

import copy
import gc
import weakref

import pandas as pd
import torch

from paper_pipelines.common.lm import CausalLM
from paper_pipelines.pipelines.dlp import grid
from paper_pipelines.pipelines.dlp.memory import PeakProbe, model_bytes
from paper_pipelines.pipelines.dlp.metrics import perplexity
from paper_pipelines.pipelines.dlp.parameters import AllocationParams, PrunerParams
from paper_pipelines.pipelines.dlp.sequential import prune_sequentially
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
