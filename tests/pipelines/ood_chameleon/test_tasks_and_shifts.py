"""Task records and their arrays, the validity boundaries of a shift, the grid's rows, the heads' start
and the tree's rules against scikit-learn's own text export."""

import numpy as np
import pandas as pd
import pytest
import torch
from sklearn.tree import export_text

from paper_pipelines.pipelines.ood_chameleon import data, selector, shifts, tasks, zoo
from paper_pipelines.pipelines.ood_chameleon.selector import SelectorSettings

ALGS = ["ERM", "GroupDRO", "oversample", "remax-margin", "undersample"]


def test_a_synthetic_record_keeps_only_its_seed_and_embeds_back_to_the_same_arrays():
    row = {"task_id": 4, "source": "synth", "n": 80, "sc": 0.7, "ci": 0.5, "ai": 0.5,
           "var_causal": 1.0, "d_feat": 2}  # fmt: skip
    record = tasks.task_record(row, None, None, seed=9)
    assert record == {**row, "data_seed": int(np.random.default_rng([9, 4]).integers(2**31))}
    task = tasks.embed_task(record, None, None, None, 0.0)
    expected = data.synthetic_task(record, np.random.default_rng(record["data_seed"]))
    assert set(task) == {"task_id", "source", "n", "sc", "ci", "ai", *expected}
    for key, value in expected.items():
        np.testing.assert_array_equal(task[key], value)


def test_a_digits_record_holds_pool_indices_and_a_noise_seed_drawn_after_them():
    pool = data.load_digits_pool(1100, np.random.default_rng(0))
    row = {"task_id": 2, "source": "digits:parity", "n": 60, "sc": 0.7, "ci": 0.5, "ai": 0.5}
    record = tasks.task_record(row, pool, None, seed=1)
    rng = np.random.default_rng([1, 2])
    counts = shifts.group_counts(0.7, 0.5, 0.5, 60)
    index = data.digits_task_index(pool, "parity", counts, rng)
    assert record["noise_seed"] == int(rng.integers(2**31))
    for key, value in index.items():
        np.testing.assert_array_equal(record[key], value)
    fmap = data.fit_digit_features(pool, "pca", 8, 0.3, np.random.default_rng(0))
    task = tasks.embed_task(record, pool, fmap, None, 0.3)
    raw = data.digits_task(pool, record, 0.3, np.random.default_rng(record["noise_seed"]))
    for split in ("tr", "te"):
        np.testing.assert_allclose(
            task[f"x_{split}"], data.apply_digit_features(raw[f"x_{split}"], fmap)
        )
        np.testing.assert_array_equal(task[f"y_{split}"], raw[f"y_{split}"])
    assert task["x_tr"].shape == (60, 8)


def test_a_real_source_without_a_pool_names_the_catalog_entries_to_supply():
    row = {"task_id": 0, "source": "real", "n": 40, "sc": 0.5, "ci": 0.5, "ai": 0.5}
    with pytest.raises(ValueError) as err:
        tasks.task_record(row, None, None, seed=0)
    assert "supply ood_chameleon.real_metadata, real_images and backbone in the catalog" in str(
        err.value
    )


@pytest.mark.parametrize(
    "triple",
    [(0.25, 0.75, 0.5), (0.75, 0.25, 0.5), (0.75, 0.5, 0.25), (0.25, 0.375, 0.375)],
)
def test_a_share_of_exactly_zero_is_invalid(triple):
    # each triple sits on one boundary (sc = ci+ai-1, ci = sc+ai-1, ai = sc+ci-1, sc+ci+ai = 1)
    assert not shifts.is_valid_shift(*triple)
    assert np.isclose(shifts.group_fractions(*triple).min(), 0)
    with pytest.raises(ValueError, match=r"\(need sc\+ci\+ai > 1, sc > ci\+ai-1"):
        shifts.check_shift(*triple, 100)


def test_two_samples_per_group_is_enough_and_one_is_not():
    assert shifts.check_shift(0.5, 0.5, 0.5, 8).tolist() == [2, 2, 2, 2]
    with pytest.raises(
        ValueError,
        match="leaves a group with 1 < 2 samples at n=4.*use a milder shift or a larger n",
    ):
        shifts.check_shift(0.5, 0.5, 0.5, 4)


def test_group_counts_give_leftovers_to_the_largest_remainders_in_group_order():
    # exact shares 0.25 each at n = 6: 1.5 per group, two leftovers go to the first two groups
    assert shifts.group_counts(0.5, 0.5, 0.5, 6).tolist() == [2, 2, 1, 1]


def test_task_grid_rows():
    rows = shifts.task_grid(
        ["synth", "digits:ge5"], [(0.5, 0.5, 0.5)], {"synth": [40], "digits": [60]}, [2.0], [3],
        np.random.default_rng(0),
    )  # fmt: skip
    assert rows == [
        {"source": "synth", "n": 40, "sc": 0.5, "ci": 0.5, "ai": 0.5, "var_causal": 2.0, "d_feat": 3, "task_id": 0},
        {"source": "digits:ge5", "n": 60, "sc": 0.5, "ci": 0.5, "ai": 0.5, "task_id": 1},
    ]  # fmt: skip


def test_heads_start_from_nn_linear_uniform_bounds():
    settings = zoo.HeadSettings(classifier="mlp", hidden=64)
    params = zoo.init_heads(3, 16, settings, torch.Generator().manual_seed(0))
    assert [tuple(p.shape) for p in params] == [(3, 16, 64), (3, 64), (3, 64), (3,)]
    for p, fan_in in zip(params[:3], (16, 16, 64), strict=True):
        bound = 1 / np.sqrt(fan_in)
        assert p.abs().max() <= bound and p.max() > 0.9 * bound and p.min() < -0.9 * bound


def test_standardisation_uses_each_features_spread_and_leaves_constant_ones_alone():
    rng = np.random.default_rng(0)
    meta = pd.DataFrame({"task_id": range(40), "small": 0.3 * rng.normal(size=40), "const": 1.0})
    for a in ALGS:
        meta[f"err_{a}"], meta[f"win_{a}"] = 0.5, 0
    meta["win_ERM"] = (meta.small > 0).astype(int)
    fitted = selector.fit_selector(
        meta, ["small", "const"], ALGS, "linear", SelectorSettings(epochs=2), 0.05, 0
    )
    assert fitted.scale[0] == pytest.approx(meta.small.std(ddof=0)) and fitted.scale[1] == 1.0
    assert np.all(np.isfinite(fitted.standardise(meta[["small", "const"]].to_numpy())))


def test_tree_rules_split_lines_match_sklearns_export_text():
    rng = np.random.default_rng(0)
    meta = pd.DataFrame(
        {"task_id": range(120), "sc": rng.uniform(size=120), "n": rng.uniform(size=120)}
    )
    for a in ALGS:
        meta[f"err_{a}"] = 0.5
    meta["err_ERM"] = np.where((meta.sc > 0.5) & (meta.n > 0.3), 0.1, 0.5)
    meta["err_undersample"] = np.where(meta.sc <= 0.5, 0.1, 0.5)
    errs = meta[[f"err_{a}" for a in ALGS]].to_numpy()
    for j, a in enumerate(ALGS):
        meta[f"win_{a}"] = selector.multi_hot_winners(errs, 0.05)[:, j]
    fitted = selector.fit_selector(meta, ["sc", "n"], ALGS, "tree", SelectorSettings(), 0.05, 0)
    ours = [x for x in selector.tree_rules(fitted, ALGS).splitlines()[1:] if "winners:" not in x]
    theirs = [
        x
        for x in export_text(fitted.model, feature_names=["sc", "n"], decimals=3).splitlines()
        if "class:" not in x and "truncated" not in x
    ]
    assert ours == theirs and len(ours) >= 4  # at least two levels of splits


def test_synthetic_spurious_block_sits_at_plus_or_minus_one_with_unit_spread():
    row = {"n": 400, "sc": 0.5, "ci": 0.5, "ai": 0.5, "var_causal": 1.0, "d_feat": 4}
    task = data.synthetic_task(row, np.random.default_rng(0))
    x, a = task["x_tr"], task["a_tr"]
    assert x[a == 1, 4:].mean() == pytest.approx(1, abs=0.1)
    assert x[a == 1, 4:].std() == pytest.approx(1, abs=0.1)


def test_the_identity_feature_map_passes_images_through():
    pool = data.load_digits_pool(1100, np.random.default_rng(0))
    fmap = data.fit_digit_features(pool, "identity", 0, 0.0, np.random.default_rng(0))
    x = np.arange(6.0).reshape(2, 3)
    assert data.apply_digit_features(x, fmap) is x


def test_descriptors_are_the_spreads_of_the_2d_reduction():
    from paper_pipelines.pipelines.ood_chameleon import descriptors

    rng = np.random.default_rng(0)
    x = rng.normal(size=(60, 5))
    y, a = rng.integers(0, 2, 60), rng.integers(0, 2, 60)
    x[:, 0] += 3 * y
    x[:, 1] += 2 * a
    out = descriptors.describe_task(x, y, a, {"sc": 0.5, "ci": 0.4, "ai": 0.6}, "pca", 3)
    z = descriptors.reduce_2d(x, "pca", 3)
    assert z.shape == (60, 2)
    assert (out["c_intra"], out["c_inter"]) == pytest.approx(descriptors.spread(z, y))
    assert (out["a_intra"], out["a_inter"]) == pytest.approx(descriptors.spread(z, a))
    for key, value in descriptors.inferred_shift(z, y, a, 3).items():
        assert out[key] == pytest.approx(value)


def test_the_mlp_selector_has_a_hidden_layer_and_predicts_integer_sets():
    net = selector._network("mlp", 3, 5, 7)
    assert [tuple(p.shape) for p in net.parameters()] == [(7, 3), (7,), (5, 7), (5,)]
    assert [tuple(p.shape) for p in selector._network("linear", 3, 5, 7).parameters()] == [
        (5, 3),
        (5,),
    ]
