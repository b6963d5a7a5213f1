"""Rendered domains and client pools: disjoint, the right shapes, label skew, size checks."""

import numpy as np
import pytest

from paper_pipelines.pipelines.fedda import data


@pytest.fixture(scope="module")
def raw():
    rng = np.random.default_rng(0)
    glyphs = np.zeros((40, 8, 8), np.float32)
    glyphs[:, 2:6, 3:5] = 1.0  # a bar
    return {
        "glyphs": glyphs,
        "labels": np.arange(40) % 10,
        "photos": {n: rng.random((40, 50, 3)).astype(np.float32) for n in data.PHOTOS},
        "textures": {n: rng.random((40, 40)).astype(np.float32) for n in data.TEXTURES},
    }


def test_source_and_client_pools_are_disjoint_and_equal():
    source, rest = data.source_split(30, 10, np.random.default_rng(0))
    assert len(source) == 10 and len(rest) == 20
    assert sorted([*source, *rest]) == list(range(30))
    pools = data.client_pools(rest, 3, np.random.default_rng(1))
    assert [len(p) for p in pools] == [6, 6, 6]
    flat = np.concatenate(pools)
    assert len(set(flat)) == 18 and set(flat) <= set(rest)


def test_label_skew_zero_keeps_the_pool_and_positive_beta_subsamples():
    labels = np.repeat(np.arange(5), 10)
    pool = np.arange(50)
    assert np.array_equal(data.label_skew(pool, labels, 0.0, np.random.default_rng(0)), pool)
    kept = data.label_skew(pool, labels, 0.1, np.random.default_rng(0))
    counts = np.bincount(labels[kept], minlength=5)
    assert counts.max() == 10  # the class with the largest share keeps all its digits
    assert counts.min() < 5 and set(kept) <= set(pool)
    p = np.random.default_rng(0).dirichlet(np.full(5, 0.1))
    assert np.array_equal(counts, np.round(p / p.max() * 10).astype(int))


def test_train_test_split_by_digit():
    train, test = data.train_test_split(np.arange(10, 20), 0.8, np.random.default_rng(0))
    assert len(train) == 8 and len(test) == 2 and not set(train) & set(test)
    assert sorted([*train, *test]) == list(range(10, 20))


@pytest.mark.parametrize("domain", ["photo", "sketch", "texture", "negative"])
def test_every_domain_renders_an_rgb_image_in_range(raw, domain):
    img = data.RENDERERS[domain](raw["glyphs"][0], 12, np.random.default_rng(0), raw)
    assert img.shape == (12, 12, 3)
    stored = data.to_uint8_chw([img])
    assert stored.shape == (1, 3, 12, 12) and stored.dtype == np.uint8
    assert data.as_float(stored).min() >= 0.0 and data.as_float(stored).max() <= 1.0


def test_domains_look_different(raw):
    g = raw["glyphs"][0]
    sketch = data.render_sketch(g, 12, np.random.default_rng(0), raw)
    negative = data.render_negative(g, 12, np.random.default_rng(0), raw)
    source = data.render_source(g, 12, np.random.default_rng(0))
    assert sketch[0, 0].min() >= 0.9 and sketch.min() < 0.5  # dark strokes on white paper
    assert source.mean() < 0.5  # a bright digit on a dark background
    assert negative.mean() > 0.5  # inverted


def test_upscale_and_blend():
    glyph = np.zeros((8, 8))
    glyph[:, 4:] = 1.0
    up = data.upscale(glyph, 16)
    assert up.shape == (16, 16) and up[:, -1].min() == 1.0 and up[:, 0].max() == 0.0
    out = data.blend(np.zeros((2, 2, 3)), np.array([[1.0, 0.0], [0.5, 0.0]]), np.ones(3), 0.5)
    assert np.allclose(out[..., 0], [[0.5, 0.0], [0.25, 0.0]])


def test_render_clients_gives_one_client_per_domain(raw):
    pools = [np.arange(0, 20), np.arange(20, 40)]
    plan = data.plan_clients(
        raw["labels"], pools, ["photo", "sketch"], 0.75, 0.0, np.random.default_rng(0)
    )
    assert [len(plan["photo"][0]), len(plan["photo"][1])] == [15, 5]
    assert set(plan["sketch"][0]) | set(plan["sketch"][1]) == set(range(20, 40))
    clients = data.render_clients(raw, plan, 8, 2, np.random.default_rng(0))
    assert list(clients) == ["photo", "sketch"]
    assert clients["photo"]["train_images"].shape == (30, 3, 8, 8)
    assert clients["photo"]["test_images"].shape == (10, 3, 8, 8)
    assert np.array_equal(
        clients["photo"]["train_labels"], np.repeat(raw["labels"][plan["photo"][0]], 2)
    )
    stats = data.partition_stats({"main_0": clients})
    assert stats["count"].sum() == 80
    assert set(stats["split"]) == {"train", "test"} and set(stats["client"]) == {"photo", "sketch"}


def test_a_client_too_small_is_refused_naming_the_keys():
    plan = {"photo": (np.arange(1), np.arange(1, 2)), "sketch": (np.arange(5), np.arange(5, 7))}
    with pytest.raises(
        ValueError, match=r"client 'photo' would get 1 training and 1 test.*fedda\.data\.beta"
    ):
        data.check_plan(plan, 1, 0.0)
    data.check_plan(plan, 2, 0.0)  # two renders of one digit are two training images
    plan = {"photo": (np.arange(4), np.arange(0))}
    with pytest.raises(ValueError, match="would get 4 training and 0 test"):
        data.check_plan(plan, 1, 0.0)


def test_settings_and_plans_keep_the_source_pool_out():
    assert data.settings(0.0, 2, 0.5, 1) == {"main_0": 0.0, "main_1": 0.0, "label_skew_0": 0.5}
    assert data.settings(0.0, 1, None, 3) == {"main_0": 0.0}
    from paper_pipelines.pipelines.fedda.parameters import DataParams, StudyParams

    labels = np.arange(200) % 10
    params = DataParams(n_source_digits=100, domains=["photo", "sketch"], renders_per_digit=1)
    study = StudyParams(methods=["fedda"], repeats=2, label_skew_repeats=1)
    plans = data.client_plans(labels, params, study, seed=0)
    assert list(plans) == ["main_0", "main_1", "label_skew_0"]
    from paper_pipelines.common.runtime import substream

    source, _ = data.source_split(200, 100, substream(0, "pools"))
    for plan in plans.values():
        used = np.concatenate([np.concatenate(p) for p in plan.values()])
        assert not set(used) & set(source) and len(set(used)) == len(used)
    assert len(plans["main_0"]["photo"][0]) == 40  # 50 digits per client, 80 %
    assert not np.array_equal(plans["main_0"]["photo"][0], plans["main_1"]["photo"][0])


def test_shipped_images_load_scaled_to_unit_range():
    raw_images = data.load_digits_and_backgrounds()
    assert raw_images["glyphs"].shape == (1797, 8, 8) and raw_images["glyphs"].dtype == np.float32
    assert raw_images["glyphs"].max() == 1.0  # 16 / 16
    assert raw_images["labels"].dtype == np.int64 and set(raw_images["labels"]) == set(range(10))
    assert set(raw_images["photos"]) == set(data.PHOTOS)
    assert set(raw_images["textures"]) == set(data.TEXTURES)
    for image in [*raw_images["photos"].values(), *raw_images["textures"].values()]:
        assert image.dtype == np.float32 and 0.5 < image.max() <= 1.0
    assert raw_images["textures"]["brick"].ndim == 2 and raw_images["photos"]["coffee"].ndim == 3


def test_random_crop_of_an_image_two_sizes_wide_is_the_whole_image():
    from skimage.transform import resize

    image = np.random.default_rng(0).random((8, 8, 3)).astype(np.float32)
    crop = data.random_crop(image, 4, np.random.default_rng(1))
    expected = resize(image, (4, 4), order=1, anti_aliasing=True)
    assert crop.dtype == np.float32 and np.allclose(crop, expected)
    gray = data.random_crop(image[..., 0], 4, np.random.default_rng(1))
    assert gray.shape == (4, 4, 1)


def test_as_float_and_empty_renders():
    assert data.as_float(np.array([255, 0], np.uint8)).tolist() == [1.0, 0.0]
    images, labels = data.render_many(np.array([], int), {"labels": np.arange(3)}, None, 6, 2, None)
    assert images.shape == (0, 3, 6, 6) and images.dtype == np.uint8 and len(labels) == 0


def test_negative_is_white_where_no_digit_and_dark_where_digit(raw):
    blank = data.render_negative(np.zeros((8, 8)), 12, np.random.default_rng(0), raw)
    assert abs(blank.mean() - 1.0) < 0.05 and blank.std() > 0.01  # noise varies pixel to pixel
    full = data.render_negative(np.ones((8, 8)), 12, np.random.default_rng(0), raw)
    assert 0.0 <= full.mean() <= 0.5


def test_client_plans_use_the_named_streams_and_report_the_setting_beta():
    from paper_pipelines.common.runtime import substream
    from paper_pipelines.pipelines.fedda.parameters import DataParams, StudyParams

    labels = np.arange(60) % 10
    params = DataParams(n_source_digits=20, domains=["photo", "sketch"], renders_per_digit=1)
    study = StudyParams(methods=["fedda"], repeats=1, label_skew_beta=None)
    plans = data.client_plans(labels, params, study, seed=3)
    _, rest = data.source_split(60, 20, substream(3, "pools"))
    pools = data.client_pools(rest, 2, substream(3, "pools", "main_0"))
    expected = data.plan_clients(
        labels, pools, ["photo", "sketch"], 0.8, 0.0, substream(3, "split", "main_0")
    )
    for domain in ("photo", "sketch"):
        for got, want in zip(plans["main_0"][domain], expected[domain], strict=True):
            assert np.array_equal(got, want)
    tiny = DataParams(
        n_source_digits=50, domains=["photo", "sketch"], renders_per_digit=1, train_frac=0.95
    )
    skewed = StudyParams(methods=["fedda"], repeats=1, label_skew_beta=None)
    with pytest.raises(ValueError, match=r"now 0\.0\)"):
        data.client_plans(labels, tiny, skewed, seed=0)


def test_partition_stats_columns():
    clients = {"photo": {"train_labels": np.array([0, 0, 3]), "test_labels": np.array([1])}}
    stats = data.partition_stats({"main_0": clients})
    assert list(stats.columns) == ["setting", "client", "split", "class", "count"]
    row = stats[(stats["split"] == "train") & (stats["class"] == "zero")].iloc[0]
    assert row["count"] == 2 and row["setting"] == "main_0"
