"""The real-pool sampler at its edges (tiny tasks, thin groups, missing groups) and the exact wording of
the errors that tell a user how to fix a configuration."""

import importlib.util

import numpy as np
import pytest

from paper_pipelines.pipelines.ood_chameleon import data, descriptors, shifts


def _pool(per_group_split: int):
    """Four groups (y, a) in group order, each with ``per_group_split`` rows in either split."""
    y = np.repeat([0, 0, 1, 1], 2 * per_group_split)
    a = np.repeat([0, 1, 0, 1], 2 * per_group_split)
    split = np.tile([0, 1], 4 * per_group_split)
    return y, a, split


def test_a_task_under_16_samples_still_tests_one_sample_per_group():
    y, a, split = _pool(10)
    index = data.real_task_index(y, a, split, np.array([3, 3, 3, 3]), np.random.default_rng(0))
    assert len(index["idx_tr"]) == 12
    # n // 16 = 0, so the balanced test split falls back to one sample of every group
    te = index["idx_te"]
    assert len(te) == 4 and np.bincount(2 * y[te] + a[te]).tolist() == [1, 1, 1, 1]
    assert (split[te] == 1).all()


def test_a_group_drawn_in_full_is_each_member_once_and_a_thin_group_is_drawn_with_replacement():
    y, a, split = _pool(4)  # 4 training rows per group
    rng = np.random.default_rng(0)
    index = data.real_task_index(y, a, split, np.array([4, 4, 6, 2]), rng)
    tr = index["idx_tr"]
    assert tr.shape == (16,) and tr.dtype.kind == "i"
    g = 2 * y[tr] + a[tr]
    assert np.bincount(g).tolist() == [4, 4, 6, 2]
    members = lambda k: set(np.flatnonzero((split == 0) & (2 * y + a == k)).tolist())  # noqa: E731
    # asking for exactly as many as a group holds takes each of them once
    assert set(tr[g == 0].tolist()) == members(0) and len(set(tr[g == 0].tolist())) == 4
    assert set(tr[g == 1].tolist()) == members(1) and len(set(tr[g == 1].tolist())) == 4
    # asking for more than a group holds repeats some of them
    assert set(tr[g == 2].tolist()) <= members(2) and len(tr[g == 2]) == 6
    assert len(set(tr[g == 3].tolist())) == 2  # fewer than it holds: distinct


@pytest.mark.parametrize(("missing_split", "word"), [(0, "training"), (1, "test")])
def test_a_group_missing_from_a_split_is_named(missing_split, word):
    y, a, split = _pool(5)
    keep = ~((y == 1) & (a == 0) & (split == missing_split))
    with pytest.raises(ValueError) as err:
        data.real_task_index(
            y[keep], a[keep], split[keep], np.array([2, 2, 2, 2]), np.random.default_rng(0)
        )
    assert str(err.value) == (
        f"the real pool has no sample of group (y=1, a=0) in its {word} split"
    )


def test_an_invalid_shift_error_states_every_condition():
    with pytest.raises(ValueError) as err:
        shifts.check_shift(0.25, 0.75, 0.5, 100)
    assert str(err.value) == (
        "shift (sc=0.25, ci=0.75, ai=0.5) is invalid: some group would have a share <= 0 "
        "(need sc+ci+ai > 1, sc > ci+ai-1, ci > sc+ai-1, ai > sc+ci-1)"
    )


def test_a_too_small_group_error_suggests_the_fix():
    with pytest.raises(ValueError) as err:
        shifts.check_shift(0.5, 0.5, 0.5, 4)
    assert str(err.value) == (
        "shift (sc=0.5, ci=0.5, ai=0.5) leaves a group with 1 < 2 samples at n=4 "
        "(counts n00,n01,n10,n11 = [1, 1, 1, 1]); use a milder shift or a larger n"
    )


@pytest.mark.skipif(importlib.util.find_spec("umap") is not None, reason="umap-learn is installed")
def test_umap_without_umap_learn_says_how_to_get_it():
    x = np.random.default_rng(0).normal(size=(20, 4))
    with pytest.raises(ImportError) as err:
        descriptors.reduce_2d(x, "umap", 0)
    assert str(err.value) == (
        "ood_chameleon.descriptors.reducer = umap needs umap-learn (pip install umap-learn); "
        "or use reducer: pca"
    )
