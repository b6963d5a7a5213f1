"""Differential feature merging and the pooling ablations on hand-checkable cases."""

import math

import torch

from paper_pipelines.pipelines.vilamp.merging import (
    DifferentialFeatureMerging,
    distinctiveness_pool,
    mean_pool,
    reference_keyframes,
)


def test_reference_keyframe_paper_and_official_code():
    # N = 8, keyframes 2 and 5: frames 0, 1 use themselves; 2..4 use 2; 5..7 use 5
    assert reference_keyframes([2, 5], 8, "paper").tolist() == [0, 1, 2, 2, 2, 5, 5, 5]
    # the released loop: segment i is compared with frame i (not keyframe i)
    assert reference_keyframes([2, 5], 8, "official_code").tolist() == [0, 1, 0, 0, 0, 1, 1, 1]
    assert reference_keyframes([0], 3, "paper").tolist() == [0, 0, 0]


def _identity_dfm(tau: float = 1.0) -> DifferentialFeatureMerging:
    dfm = DifferentialFeatureMerging(2, 2, temperature_init=tau)
    with torch.no_grad():
        for layer in (dfm.linear_iq, dfm.linear_ik, dfm.linear_q, dfm.linear_k):
            layer.weight.copy_(torch.eye(2))
            layer.bias.zero_()
    return dfm


def test_two_patch_merge_by_hand():
    dfm = _identity_dfm(tau=1.0)
    patches = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])  # one frame, two patches
    query = torch.tensor([1.0, 0.0])
    # reference patches orthogonal to each patch: redundancy 0, relevance (1, 0)
    reference = torch.tensor([[[0.0, 1.0], [1.0, 0.0]]])
    r = dfm.patch_relevance(patches, query)
    t = dfm.patch_redundancy(patches, reference)
    assert torch.allclose(r, torch.tensor([[1.0, 0.0]]))
    assert torch.allclose(t, torch.tensor([[0.0, 0.0]]))
    a = math.e / (1 + math.e)
    assert torch.allclose(dfm(patches, reference, query), torch.tensor([[a, 1 - a]]))
    # a patch identical to the keyframe's is redundant: s = (1 - 1, 0 - 0) -> equal weights
    same = torch.tensor([[[1.0, 0.0], [1.0, 0.0]]])
    assert torch.allclose(dfm.differential_scores(patches, same, query), torch.tensor([[0.0, 0.0]]))
    assert torch.allclose(dfm(patches, same, query), torch.tensor([[0.5, 0.5]]))


def test_temperature_divides_the_scores():
    patches = torch.tensor([[[1.0, 0.0], [0.0, 1.0]]])
    reference = torch.tensor([[[0.0, 1.0], [1.0, 0.0]]])
    query = torch.tensor([1.0, 0.0])
    scores = _identity_dfm(tau=0.5).differential_scores(patches, reference, query)
    assert torch.allclose(scores, torch.tensor([[2.0, 0.0]]))
    a = 1 / (1 + math.exp(-2.0))
    assert torch.allclose(_identity_dfm(0.5)(patches, reference, query), torch.tensor([[a, 1 - a]]))


def test_merged_token_is_a_convex_combination_of_unprojected_patches():
    torch.manual_seed(0)
    dfm = DifferentialFeatureMerging(6, 4)
    p, k, q = torch.randn(5, 3, 6), torch.randn(5, 3, 6), torch.randn(4)
    alpha = torch.softmax(dfm.differential_scores(p, k, q), dim=-1)
    assert torch.allclose(alpha.sum(-1), torch.ones(5))
    assert torch.allclose(dfm(p, k, q), (alpha[..., None] * p).sum(1), atol=1e-6)


def test_chunked_scoring_equals_the_dense_path():
    torch.manual_seed(1)
    dfm = DifferentialFeatureMerging(8, 4)
    p, k, q = torch.randn(130, 16, 8), torch.randn(130, 16, 8), torch.randn(4)
    assert torch.allclose(dfm(p, k, q, max_dense_length=60), dfm(p, k, q), atol=1e-6)
    assert dfm(p[:0], k[:0], q).shape == (0, 8)


def test_initialisation_follows_the_released_model():
    dfm = DifferentialFeatureMerging(64, 32)
    assert math.isclose(dfm.tau.item(), 0.01, rel_tol=1e-6)
    assert dfm.linear_q.weight.shape == (64, 32)
    assert 0.015 < dfm.linear_iq.weight.std().item() < 0.025
    assert torch.count_nonzero(dfm.linear_k.bias) == 0


def test_pooling_ablations():
    p = torch.tensor([[[1.0, 0.0], [0.0, 3.0]]])
    assert torch.allclose(mean_pool(p), torch.tensor([[0.5, 1.5]]))
    # identical to the reference: every weight 1 - (0.5 + 0.5) = 0 -> plain mean
    assert torch.allclose(distinctiveness_pool(p, p.clone()), torch.tensor([[0.5, 1.5]]))
    # patch 0 identical (weight 0), patch 1 opposite (weight 1): softmax(0, 1)
    ref = torch.tensor([[[1.0, 0.0], [0.0, -1.0]]])
    b = math.e / (1 + math.e)
    assert torch.allclose(distinctiveness_pool(p, ref), torch.tensor([[1 - b, 3 * b]]))
