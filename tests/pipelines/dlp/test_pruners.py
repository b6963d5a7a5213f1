"""Within-layer pruners on hand-checkable matrices (spec check 2: mask exactness)."""

import pytest
import torch

from paper_pipelines.pipelines.dlp.calibration import InputStatistics
from paper_pipelines.pipelines.dlp.importance import block_score, outlier_ratio, wanda_importance
from paper_pipelines.pipelines.dlp.pruners import (
    block_mask,
    nm_mask,
    parse_sparsity_type,
    prune_magnitude,
    prune_sparsegpt,
    prune_wanda,
    row_mask,
    wanda_variant_mask,
)


def linear_with(weight: torch.Tensor) -> torch.nn.Linear:
    layer = torch.nn.Linear(weight.shape[1], weight.shape[0], bias=False)
    layer.weight.data = weight.clone()
    return layer


def test_wanda_on_a_2x3_matrix():
    # |W| * sqrt(s) with s = [1, 4, 0.25] -> row 0: [1, 2*2, 3*0.5] = [1, 4, 1.5]; row 1: [2, 2, 0.5]
    w = torch.tensor([[1.0, -2.0, 3.0], [-2.0, 1.0, 1.0]])
    s = torch.tensor([1.0, 4.0, 0.25])
    torch.testing.assert_close(
        wanda_importance(w, s), torch.tensor([[1.0, 4.0, 1.5], [2.0, 2.0, 0.5]])
    )
    layer = linear_with(w)
    mask = prune_wanda(layer, s, sparsity=0.34)  # floor(3 * 0.34) = 1 weight per row
    assert mask.tolist() == [[True, False, False], [False, False, True]]
    assert layer.weight.data.tolist() == [[0.0, -2.0, 3.0], [-2.0, 1.0, 0.0]]


def test_row_mask_is_exact_per_row_and_stable_on_ties():
    metric = torch.ones(4, 10)  # all tied: the lowest indices go first
    mask = row_mask(metric, 0.7)
    assert mask.sum(dim=1).tolist() == [7] * 4
    assert mask[:, :7].all() and not mask[:, 7:].any()
    metric = torch.rand(5, 576)
    assert row_mask(metric, 0.7).sum(dim=1).tolist() == [int(576 * 0.7)] * 5


def test_magnitude_prunes_exact_count_even_with_ties():
    w = torch.tensor([[0.5, -0.5, 0.5, 2.0], [0.5, 1.0, -3.0, 0.5]])
    layer = linear_with(w)
    mask = prune_magnitude(layer, 0.5)  # 4 of 8; six weights tie at 0.5
    assert int(mask.sum()) == 4
    assert (layer.weight.data == 0).sum() == 4
    assert not mask[0, 3] and not mask[1, 2]


def test_nm_mask_two_of_four():
    metric = torch.tensor([[4.0, 1.0, 3.0, 2.0, 0.1, 0.2, 0.3, 0.4]])
    assert nm_mask(metric, 2, 4).tolist() == [[False, True, False, True, True, True, False, False]]
    assert parse_sparsity_type("2:4") == (2, 4) and parse_sparsity_type("unstructured") is None


def test_wanda_variant_hits_target_within_tolerance():
    torch.manual_seed(0)
    metric = torch.rand(64, 256)
    mask = wanda_variant_mask(metric, 0.5)
    assert abs(mask.float().mean().item() - 0.5) < 0.01


def test_sparsegpt_with_identity_hessian_is_magnitude_without_updates():
    # H = I: [H^-1]_jj = 1/(1+damp) for all j and no off-diagonal terms, so SparseGPT masks the
    # smallest |w| in each 128-column block and leaves the kept weights unchanged.
    torch.manual_seed(0)
    w = torch.randn(8, 16)
    layer = linear_with(w)
    mask = prune_sparsegpt(layer, torch.eye(16), 0.5, blocksize=16)
    assert int(mask.sum()) == 64
    torch.testing.assert_close(layer.weight.data, w * ~mask)
    expected = torch.zeros(128, dtype=torch.bool)
    expected[torch.sort(w.abs().flatten(), stable=True).indices[:64]] = True
    assert torch.equal(mask, expected.reshape(8, 16))


def test_sparsegpt_reconstructs_better_than_wanda_on_correlated_inputs():
    torch.manual_seed(0)
    base = torch.randn(2048, 8)
    x = base @ torch.randn(8, 32) + 0.05 * torch.randn(2048, 32)  # strongly correlated columns
    w = torch.randn(16, 32)
    stats = InputStatistics(32, with_hessian=True)
    stats.add_batch(x.unsqueeze(0))
    dense_out = x @ w.t()
    wanda_layer, sgpt_layer = linear_with(w), linear_with(w)
    prune_wanda(wanda_layer, stats.scaler_row, 0.5)
    prune_sparsegpt(sgpt_layer, stats.hessian, 0.5, blocksize=32)
    err_wanda = (x @ wanda_layer.weight.data.t() - dense_out).pow(2).mean()
    err_sgpt = (x @ sgpt_layer.weight.data.t() - dense_out).pow(2).mean()
    assert (sgpt_layer.weight.data == 0).float().mean() == 0.5
    assert err_sgpt < 0.5 * err_wanda


def test_block_statistics():
    scores = torch.tensor([1.0, 2.0, 3.0, 4.0, 100.0])
    assert block_score(scores, "median") == 3.0
    assert block_score(scores, "mean") == 22.0
    # mean 22, M = 2 -> threshold 44: one of five scores is an outlier = 20 %
    assert outlier_ratio(scores, 2.0) == 20.0


# ---------------------------------------------------------------- SparseGPT's mask rule (issue 29)
def test_block_mask_exact_takes_k_and_released_takes_everything_up_to_sorted_k():
    # 6 saliencies, s = 0.5 -> k = 3. Sorted: 1, 2, 2, 2, 3, 4.
    saliency = torch.tensor([[1.0, 2.0, 2.0], [2.0, 3.0, 4.0]])
    exact = block_mask(saliency, 0.5, "exact")
    assert exact.tolist() == [[True, True, True], [False, False, False]]  # ties to the lower index
    # the released fasterprune: threshold sorted[3] = 2, mask every value <= 2 -> four weights
    released = block_mask(saliency, 0.5, "released")
    assert released.tolist() == [[True, True, True], [True, False, False]]
    # without ties the released rule still masks one more than k (sorted[k] itself)
    distinct = torch.tensor([[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]])
    assert int(block_mask(distinct, 0.5, "released").sum()) == 4
    assert int(block_mask(distinct, 0.5, "exact").sum()) == 3
    # at s = 0 the released rule still masks the smallest weight of the block
    assert int(block_mask(distinct, 0.0, "released").sum()) == 1
    assert int(block_mask(distinct, 0.0, "exact").sum()) == 0


def test_sparsegpt_mask_rules_count_per_column_block():
    torch.manual_seed(0)
    w = torch.randn(8, 32)
    x = torch.randn(256, 32)
    stats = InputStatistics(32, with_hessian=True)
    stats.add_batch(x.unsqueeze(0))
    for rule, per_block in (("exact", 51), ("released", 52)):  # floor(0.4 * 8 * 16) = 51
        layer = linear_with(w)
        mask = prune_sparsegpt(layer, stats.hessian, 0.4, blocksize=16, mask_rule=rule)
        assert [int(mask[:, i : i + 16].sum()) for i in (0, 16)] == [per_block] * 2, rule
        assert torch.equal(layer.weight.data == 0, mask)
    with pytest.raises(ValueError, match="mask_rule"):
        prune_sparsegpt(linear_with(w), stats.hessian, 0.4, mask_rule="loose")


def test_masked_weights_keep_dtype_and_become_zero_in_bfloat16():
    w = torch.tensor([[1.0, -2.0, 3.0], [-2.0, 1.0, 1.0]], dtype=torch.bfloat16)
    layer = linear_with(w)
    prune_wanda(layer, torch.tensor([1.0, 4.0, 0.25]), sparsity=0.34)
    assert layer.weight.dtype == torch.bfloat16
    assert layer.weight.data.float().tolist() == [[0.0, -2.0, 3.0], [-2.0, 1.0, 0.0]]


def test_median_on_any_device_is_numpys():
    import numpy as np

    from paper_pipelines.pipelines.dlp.importance import median

    for values in ([3.0, 1.0, 2.0], [4.0, 1.0, 3.0, 2.0], [5.0], [0.1, 0.2]):
        tensor = torch.tensor(values)
        assert median(tensor) == float(np.median(tensor.numpy())), values
