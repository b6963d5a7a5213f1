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


# ---------------------------------------------------------------- pinned by mutation testing (#29)
@pytest.mark.parametrize(
    ("sparsity", "expected"),
    [
        # row [1, 2, 3, 4]: sum 10, sorted cumulative sums [1, 3, 6, 10]; a starts at 0.4
        (0.5, [True, True, False, False]),  # a = 0.4: sums <= 4 -> two weights
        (0.25, [True, False, False, False]),  # too many: a = (0.4 + 0) / 2 = 0.2 -> sums <= 2
        (0.75, [True, True, True, False]),  # too few: a = (0.4 + 0.8) / 2 = 0.6 -> sums <= 6
    ],
)
def test_wanda_variant_bisection_by_hand(sparsity, expected):
    metric = torch.tensor([[4.0, 1.0, 3.0, 2.0]])
    mask = wanda_variant_mask(metric, sparsity)
    order = [1, 3, 2, 0]  # the weights in increasing score
    assert [bool(mask[0, j]) for j in order] == expected


def test_wanda_variant_masks_nothing_in_a_row_below_the_fraction():
    # row 0 [10, 1]: sums [1, 11], a * 11 = 4.4 -> only the 1; row 1 [5, 5]: sums [5, 10], a * 10 = 4
    # -> no weight below the fraction, so none is pruned (not the smallest one)
    metric = torch.tensor([[10.0, 1.0], [5.0, 5.0]])
    mask = wanda_variant_mask(metric, 0.25, tol=0.5)
    assert mask.tolist() == [[False, True], [False, False]]


def test_wanda_with_n_m_and_with_the_variant():
    w = torch.tensor([[4.0, -1.0, 3.0, 2.0, 0.1, -0.2, 0.3, 0.4]])
    s = torch.ones(8)
    mask = prune_wanda(linear_with(w), s, sparsity=0.9, nm=(2, 4))  # N:M overrides the sparsity
    assert mask.tolist() == [[False, True, False, True, True, True, False, False]]
    variant = prune_wanda(linear_with(w[:, :4]), s[:4], sparsity=0.25, use_variant=True)
    assert variant.tolist() == [[False, True, False, False]]


def test_magnitude_with_n_m_and_at_zero_sparsity():
    w = torch.tensor([[4.0, -1.0, 3.0, 2.0], [0.1, -0.2, 0.3, 0.4]])
    layer = linear_with(w)
    mask = prune_magnitude(layer, 0.1, nm=(1, 4))  # the smallest |w| of each group of 4
    assert mask.tolist() == [[False, True, False, False], [True, False, False, False]]
    assert torch.equal(layer.weight.data, w * ~mask)
    assert not prune_magnitude(linear_with(w), 0.0).any()
    assert int(prune_magnitude(linear_with(w), 0.3).sum()) == 2  # floor(8 * 0.3)


def test_n_m_needs_the_input_dimension_divisible_by_m():
    with pytest.raises(ValueError, match=r"input dimension \(6\) divisible by M=4"):
        nm_mask(torch.ones(2, 6), 2, 4)


@pytest.mark.parametrize("bad", ["2-4", "2:4:8", "a:b", "4:2", "0:4", "4:4"])
def test_bad_sparsity_types(bad):
    with pytest.raises(ValueError, match="sparsity_type"):
        parse_sparsity_type(bad)


def test_n_m_sparsity():
    from paper_pipelines.pipelines.dlp.pruners import nm_sparsity

    assert nm_sparsity((2, 4)) == 0.5 and nm_sparsity((1, 8)) == 0.125


def test_block_mask_at_full_sparsity():
    saliency = torch.tensor([[3.0, 1.0], [2.0, 4.0]])
    assert block_mask(saliency, 1.0, "exact").all()
    assert block_mask(saliency, 1.0, "released").all()  # k = n: the largest value is the threshold
    assert block_mask(saliency, 0.5).tolist() == [[False, True], [True, False]]  # default: exact


def test_sparsegpt_compensates_a_pruned_weight_by_hand():
    """Two inputs with H = [[2, 1], [1, 2]], no damping, one weight of two pruned. OBS: removing w1 is
    compensated by w2 += w1 * H12 / H22 = 1 + 1 * 1/2 = 1.5. [H^-1]_jj = 2/3 and then 1/2 (Cholesky
    diagonal squared), so the saliencies are 1^2 / (2/3) = 1.5 and 1^2 / (1/2) = 2: w1 goes."""
    layer = linear_with(torch.tensor([[1.0, 1.0]]))
    h = torch.tensor([[2.0, 1.0], [1.0, 2.0]])
    mask = prune_sparsegpt(layer, h, 0.5, blocksize=2, percdamp=0.0)
    assert mask.tolist() == [[True, False]]
    torch.testing.assert_close(layer.weight.data, torch.tensor([[0.0, 1.5]]))
    # two column blocks of one column each, two rows, one weight of each column pruned. Column 1:
    # saliencies 1.5 and 9 / (2/3) = 13.5, row 0 goes and row 0's w2 becomes 1.5 (the update reaches
    # the later block); column 2: saliencies 1.5^2 / (1/2) = 4.5 and 1 / (1/2) = 2, row 1 goes
    layer = linear_with(torch.tensor([[1.0, 1.0], [3.0, 1.0]]))
    mask = prune_sparsegpt(layer, h, 0.5, blocksize=1, percdamp=0.0)
    assert mask.tolist() == [[True, False], [False, True]]
    torch.testing.assert_close(layer.weight.data, torch.tensor([[0.0, 1.5], [3.0, 0.0]]))


def test_sparsegpt_damping_is_a_share_of_the_mean_diagonal():
    # H = diag(1, 3): mean diagonal 2, percdamp 0.5 -> H + I; no coupling, so kept weights stay
    layer = linear_with(torch.tensor([[1.0, 1.1]]))
    mask = prune_sparsegpt(
        layer, torch.diag(torch.tensor([1.0, 3.0])), 0.5, blocksize=2, percdamp=0.5
    )
    # [H^-1]_jj = 1/2 and 1/4: saliencies 1 / (1/4) = 4 and 1.21 / (1/16) = 19.4 -> w1 goes
    assert mask.tolist() == [[True, False]]
    torch.testing.assert_close(layer.weight.data, torch.tensor([[0.0, 1.1]]))


def test_sparsegpt_dead_inputs_are_zeroed():
    # an input that never fires (H_jj = 0) carries no information: its weights are set to zero
    h = torch.diag(torch.tensor([1.0, 0.0, 1.0, 1.0]))
    layer = linear_with(torch.tensor([[1.0, 5.0, 2.0, 3.0]]))
    prune_sparsegpt(layer, h, 0.0, blocksize=4)
    assert layer.weight.data.tolist() == [[1.0, 0.0, 2.0, 3.0]]


def test_sparsegpt_n_m_prunes_n_of_every_m_columns():
    torch.manual_seed(0)
    w = torch.randn(4, 8)
    layer = linear_with(w)
    mask = prune_sparsegpt(layer, torch.eye(8), 0.0, nm=(2, 4), blocksize=8)
    # H = I: no compensation, so the mask is the 2 smallest |w| of each group of 4
    assert torch.equal(mask, nm_mask(w.abs(), 2, 4))
    torch.testing.assert_close(layer.weight.data, w * ~mask)


def test_sparsegpt_keeps_the_weight_dtype():
    layer = linear_with(torch.tensor([[1.0, 2.0]], dtype=torch.float64))
    prune_sparsegpt(layer, torch.eye(2, dtype=torch.float64), 0.5, blocksize=2)
    assert layer.weight.dtype == torch.float64 and layer.weight.data.tolist() == [[0.0, 2.0]]


def test_outliers_are_strictly_above_m_times_the_mean():
    scores = torch.tensor([1.0, 1.0, 1.0, 5.0])  # mean 2: with M = 2.5 the 5 is exactly on the line
    assert outlier_ratio(scores, 2.5) == 0.0
    assert outlier_ratio(scores, 2.0) == 25.0
    assert outlier_ratio(scores.to(torch.bfloat16), 2.0) == 25.0


def test_block_score_of_half_precision_scores_and_unknown_statistics():
    scores = torch.tensor([1.0, 2.0, 3.0, 10.0], dtype=torch.bfloat16)
    assert block_score(scores, "median") == 2.5  # numpy's mean of the two middle values
    assert block_score(scores, "mean") == 4.0
    assert block_score(torch.tensor([-1.0, -3.0]), "mean") == 2.0  # the magnitude of the mean
    with pytest.raises(ValueError, match="score_stat must be 'median' or 'mean', got 'max'"):
        block_score(scores, "max")


def test_wanda_importance_in_float64_and_for_half_weights():
    w = torch.tensor([[1.0, -2.0]], dtype=torch.float64)
    out = wanda_importance(w, torch.tensor([4.0, 9.0], dtype=torch.float64))
    assert out.dtype == torch.float64 and out.tolist() == [[2.0, 6.0]]
    half = wanda_importance(w.to(torch.bfloat16), torch.tensor([4.0, 9.0]))
    assert half.dtype == torch.float32 and half.tolist() == [[2.0, 6.0]]


def test_median_of_nothing_is_an_error():
    from paper_pipelines.pipelines.dlp.importance import median

    with pytest.raises(ValueError, match="empty"):
        median(torch.tensor([]))
    assert median(torch.tensor([[4.0, 1.0], [3.0, 2.0]])) == 2.5  # of all entries, flattened


def test_wanda_variant_stops_once_within_the_tolerance():
    # row [1, 2, 3, 4] at target 0.25 with tol 0.25: a = 0.4 gives 0.5, |0.5 - 0.25| = tol is
    # within the tolerance, so the bisection stops there (two weights), one step short of 0.25
    metric = torch.tensor([[4.0, 1.0, 3.0, 2.0]])
    assert int(wanda_variant_mask(metric, 0.25, tol=0.25).sum()) == 2
    assert int(wanda_variant_mask(metric, 0.25, tol=0.2).sum()) == 1


def test_masks_are_boolean():
    metric = torch.tensor([[4.0, 1.0, 3.0, 2.0]])
    for mask in (nm_mask(metric, 2, 4), row_mask(metric, 0.5), wanda_variant_mask(metric, 0.5)):
        assert mask.dtype == torch.bool


def test_wanda_importance_follows_the_weights_dtype_not_the_statistics():
    # float32 weights with float64 statistics: the score is float32, as accumulated for the weight
    out = wanda_importance(
        torch.tensor([[1.0, -2.0]]), torch.tensor([4.0, 9.0], dtype=torch.float64)
    )
    assert out.dtype == torch.float32 and out.tolist() == [[2.0, 6.0]]


def test_block_score_defaults_to_the_median():
    # the paper's U_l is the median: 2 for [1, 2, 9] (the mean would be 4)
    assert block_score(torch.tensor([1.0, 9.0, 2.0])) == 2.0


def test_block_score_keeps_the_digits_of_its_scores():
    # float64 scores stay float64: the median of [1, 1 + 1e-12, 3] is 1 + 1e-12 (float32 would give 1)
    scores = torch.tensor([1.0, 1.0 + 1e-12, 3.0], dtype=torch.float64)
    assert block_score(scores) == 1.0 + 1e-12
    # float16 scores are taken in float32: the mean of the middle values 1 and 1 + 2**-10 is
    # 1 + 2**-11, which float16 cannot hold (it would round to 1)
    half = torch.tensor([1.0, 1.0 + 2**-10], dtype=torch.float16)
    assert block_score(half) == 1.0 + 2**-11


@pytest.mark.timeout(30)
def test_wanda_variant_stops_when_ties_make_the_target_unreachable():
    """Row [1, 2, 2, 2] (sum 7, sorted cumulative sums [1, 3, 5, 7]): the three tied 2s are pruned
    together, so the sparsity jumps from 0.25 to 1 at a = 3/7 and 0.5 is unreachable. At tol 0.08:
    a = 0.4 (sums <= 2.8: 0.25, too few) -> 0.6 (4.2: all, too many) -> 0.5 (3.5: all) -> 0.45
    (3.15: all) -> 0.425 (2.975: 0.25); [lo, hi] = [0.4, 0.45] is now narrower than tol, so the
    bisection stops with the mask of the last a tried: only the 1."""
    metric = torch.tensor([[2.0, 1.0, 2.0, 2.0]])
    assert wanda_variant_mask(metric, 0.5, tol=0.08).tolist() == [[False, True, False, False]]


def test_wanda_variant_stops_at_once_on_the_target():
    # row [9, 1, 4, 2]: sorted [1, 2, 4, 9], cumulative [1, 3, 7, 16]; a = 0.4 gives sums <= 6.4, so
    # the 1 and the 2 are pruned: exactly 0.5, and the bisection stops there (a larger a would add the 4)
    metric = torch.tensor([[9.0, 1.0, 4.0, 2.0]])
    assert wanda_variant_mask(metric, 0.5, tol=0.1).tolist() == [[False, True, False, True]]


def test_wanda_variant_keeps_a_fifth_of_each_row_score():
    """Wanda searches the fraction a in [0, 0.8]: the pruned weights of a row never sum to more than
    80 % of its total. Row 10, 11, ..., 19 (total 145, 0.8 * 145 = 116): the 8 smallest sum to 108,
    the 9 smallest to 126 > 116, so a target of 0.9 stops at 8 of 10 weights."""
    metric = torch.arange(10.0, 20.0).reshape(1, -1)
    assert wanda_variant_mask(metric, 0.9).tolist() == [[True] * 8 + [False] * 2]


def test_one_of_four_is_an_n_m_pattern():
    assert parse_sparsity_type("1:4") == (1, 4)  # 0 < N = 1 < M = 4


def test_sparsegpt_n_m_saliency_weighs_each_weight_by_its_hessian_diagonal():
    """With a diagonal H, [H^-1]_jj = 1 / H_jj and the OBS saliency w^2 / [H^-1]_jj is w^2 * H_jj
    (here H_jj + 1 % damping): weights (1, 0.6, 1, 0.6) with H = diag(1, 4, 1, 4) have saliencies
    (1, 1.44, 1, 1.44), so 2:4 prunes the two larger weights, whose inputs are four times weaker."""
    layer = linear_with(torch.tensor([[1.0, 0.6, 1.0, 0.6]]))
    mask = prune_sparsegpt(layer, torch.diag(torch.tensor([1.0, 4.0, 1.0, 4.0])), 0.0, nm=(2, 4))
    assert mask.tolist() == [[True, False, True, False]]
    # no error to spread (H^-1 is diagonal): the kept weights are unchanged
    assert layer.weight.data.tolist() == [[0.0, pytest.approx(0.6), 0.0, pytest.approx(0.6)]]


def test_exact_block_mask_breaks_ties_toward_the_lower_index():
    # 64 equal saliencies at 0.5: the exact rule prunes the first 32 in row-major order (a stable
    # sort), i.e. the whole first row; an unstable sort would scatter them
    mask = block_mask(torch.zeros(2, 32), 0.5)
    assert mask.tolist() == [[True] * 32, [False] * 32]


def test_block_mask_stays_on_the_saliency_device():
    assert block_mask(torch.zeros(2, 4, device="meta"), 0.5).device.type == "meta"


def test_sparsegpt_obs_update_in_float64_by_hand():
    """Weight [0.1, 1] with H = [[2, 1], [1, 2]] at sparsity 0.5: w0 (the smaller) is pruned and
    OBS moves w1 by w0 * H01 / (H11 + damp) with damp = 1 % of the mean diagonal = 0.02, so
    w1 = 1 + 0.1 / 2.02, to float64 precision for a float64 layer."""
    layer = torch.nn.Linear(2, 1, bias=False, dtype=torch.float64)
    layer.weight.data = torch.tensor([[0.1, 1.0]], dtype=torch.float64)
    hessian = torch.tensor([[2.0, 1.0], [1.0, 2.0]], dtype=torch.float64)
    prune_sparsegpt(layer, hessian, 0.5)
    assert layer.weight.data[0, 0] == 0.0
    assert float(layer.weight.data[0, 1]) == pytest.approx(1 + 0.1 / 2.02, rel=1e-13, abs=0)


def test_outlier_ratio_of_float64_scores_keeps_their_digits():
    # mean of [1, 1, 1, 1 + 1e-12] is 1 + 2.5e-13: only the last score is above it (25 %); in float32
    # all four would be 1 and none above
    scores = torch.tensor([1.0, 1.0, 1.0, 1.0 + 1e-12], dtype=torch.float64)
    assert outlier_ratio(scores, 1.0) == 25.0


def test_row_and_magnitude_masks_break_ties_toward_the_lower_index():
    # 64 equal scores at 0.5: the first 32 go (stable sort); an unstable sort would scatter them
    assert row_mask(torch.zeros(1, 64), 0.5).tolist() == [[True] * 32 + [False] * 32]
    layer = linear_with(torch.ones(2, 32))
    assert prune_magnitude(layer, 0.5).tolist() == [[True] * 32, [False] * 32]
