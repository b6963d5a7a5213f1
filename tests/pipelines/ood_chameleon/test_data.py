"""The base datasets: synthetic Gaussians, coloured digits, the real-pool sampler and metadata checks."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.ood_chameleon import backbone, data, tasks
from paper_pipelines.pipelines.ood_chameleon.shifts import group_counts


def test_synthetic_task_groups_and_means():
    row = {"n": 400, "sc": 0.9, "ci": 0.5, "ai": 0.5, "var_causal": 1.0, "d_feat": 3}
    task = data.synthetic_task(row, np.random.default_rng(0))
    g = 2 * task["y_tr"] + task["a_tr"]
    assert np.bincount(g).tolist() == [180, 20, 20, 180]
    assert np.bincount(2 * task["y_te"] + task["a_te"]).tolist() == [100] * 4  # n/4 per group
    x, y, a = task["x_tr"], task["y_tr"], task["a_tr"]
    assert x.shape == (400, 6)
    assert x[y == 1, :3].mean() == pytest.approx(1, abs=0.15)  # causal block at y' = +1
    assert x[a == 0, 3:].mean() == pytest.approx(-1, abs=0.15)  # spurious block at a' = -1


def test_colour_digits_writes_the_digit_into_one_channel():
    images = np.arange(2 * 64, dtype=np.float32).reshape(2, 64) / 128
    out = data.colour_digits(images, np.array([0, 1]), 0.0, np.random.default_rng(0))
    assert out.shape == (2, 128)
    assert np.array_equal(out[0, :64], images[0]) and not out[0, 64:].any()
    assert np.array_equal(out[1, 64:], images[1]) and not out[1, :64].any()


@pytest.mark.parametrize(
    ("partition", "expected"),
    [
        ("ge5", [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]),
        ("parity", [0, 1] * 5),
        ("loops", [1, 0, 0, 0, 0, 0, 1, 0, 1, 1]),
    ],
)
def test_label_partitions(partition, expected):
    assert data.PARTITIONS[partition](np.arange(10)).tolist() == expected


def test_digits_task_index_has_the_group_counts_and_disjoint_pools():
    pool = data.load_digits_pool(1100, np.random.default_rng(0))
    assert len(pool["digits_tr"]) == 1100 and len(pool["digits_te"]) == 697
    counts = group_counts(0.8, 0.6, 0.5, 320)
    index = data.digits_task_index(pool, "parity", counts, np.random.default_rng(1))
    g_tr = 2 * index["y_tr"] + index["a_tr"]
    assert np.bincount(g_tr, minlength=4).tolist() == counts.tolist()
    assert np.bincount(2 * index["y_te"] + index["a_te"]).tolist() == [20] * 4  # n/16 per group
    assert (pool["digits_tr"][index["idx_tr"]] % 2 == index["y_tr"]).all()
    assert (pool["digits_te"][index["idx_te"]] % 2 == index["y_te"]).all()
    # enough images per class here: no image is drawn twice within a class
    assert len(set(index["idx_tr"].tolist())) == 320


def test_pca_feature_map_is_fixed_and_32d():
    pool = data.load_digits_pool(1100, np.random.default_rng(0))
    fmap = data.fit_digit_features(pool, "pca", 32, 0.3, np.random.default_rng(0))
    x = data.colour_digits(
        pool["images_te"][:5], np.array([0, 1, 0, 1, 0]), 0.3, np.random.default_rng(2)
    )
    z = data.apply_digit_features(x, fmap)
    assert z.shape == (5, 32)
    # the colour is the direction of largest variance: the first component separates the channels
    assert np.sign(z[0, 0]) != np.sign(z[1, 0])
    assert data.apply_digit_features(x, {"kind": "identity"}) is x


def test_real_task_index_samples_fixed_groups():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 0, 1, 1], 50)
    a = np.repeat([0, 1, 0, 1], 50)
    split = np.tile([0, 1], 100)
    index = data.real_task_index(y, a, split, np.array([30, 5, 5, 20]), rng)
    assert np.bincount(2 * y[index["idx_tr"]] + a[index["idx_tr"]]).tolist() == [30, 5, 5, 20]
    assert (split[index["idx_tr"]] == 0).all() and (split[index["idx_te"]] == 1).all()
    assert len(index["idx_te"]) == 4 * (60 // 16)


def test_real_pool_task_record_round_trip():
    pool = {"x": np.arange(400, dtype=float).reshape(200, 2), "y": np.repeat([0, 0, 1, 1], 50),
            "a": np.repeat([0, 1, 0, 1], 50), "split": np.tile([0, 1], 100)}  # fmt: skip
    row = {"task_id": 3, "source": "real", "n": 64, "sc": 0.5, "ci": 0.5, "ai": 0.5}
    record = tasks.task_record(row, None, pool, seed=0)
    task = tasks.embed_task(record, None, None, pool, 0.0)
    assert (
        task["x_tr"].shape == (64, 2)
        and np.bincount(2 * task["y_tr"] + task["a_tr"]).tolist() == [16] * 4
    )
    with pytest.raises(ValueError, match="no real pool was loaded"):
        tasks.task_record(row, None, {}, seed=0)


def test_metadata_without_labels_is_rejected():
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['y', 'a'\]"):
        backbone.check_metadata(pd.DataFrame({"filename": ["x.png"]}))
    with pytest.raises(ValueError, match="column 'a' must hold 0/1"):
        backbone.check_metadata(pd.DataFrame({"filename": ["x.png"], "y": [1], "a": [3]}))
    assert backbone.check_metadata(
        pd.DataFrame({"filename": ["x"], "y": [1], "a": [0]})
    ).split.tolist() == [0]


def test_embed_pool_with_a_stub_backbone():
    meta = pd.DataFrame(
        {"filename": ["a", "b", "c"], "y": [0, 1, 1], "a": [1, 0, 1], "split": [0, 2, 0]}
    )
    items = {f: (lambda f=f: f) for f in "abc"}

    def stub(batch):  # a feature-extraction pipeline: one (1, tokens, dim) output per input
        return [[[[ord(f), 1.0], [ord(f), 3.0]]] for f in batch]

    pool = backbone.embed_pool(meta, items, stub, batch_size=2)
    assert pool["x"].tolist() == [[97.0, 2.0], [98.0, 2.0], [99.0, 2.0]]
    assert pool["split"].tolist() == [0, 1, 0]
    with pytest.raises(FileNotFoundError, match="no file for 1"):
        backbone.embed_pool(meta, {"a": items["a"], "b": items["b"]}, stub, 2)


def test_pooled_features_shapes():
    assert backbone.pooled_features([[[1.0, 2.0], [3.0, 4.0]]]).tolist() == [2.0, 3.0]  # tokens
    cnn = np.arange(8, dtype=float).reshape(1, 2, 2, 2)  # (1, C, H, W)
    assert backbone.pooled_features(cnn).tolist() == [1.5, 5.5]
    assert backbone.pooled_features([[0.5, 1.5]]).tolist() == [0.5, 1.5]  # pooled already
