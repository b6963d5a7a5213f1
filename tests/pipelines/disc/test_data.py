"""Rendering and pools on small hand-checkable cases."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.common.params import validate_params
from paper_pipelines.common.runtime import substream
from paper_pipelines.pipelines.disc import data
from paper_pipelines.pipelines.disc.parameters import DataParams


def test_digits_table_is_the_shipped_set():
    table = data.digits_table()
    assert table.shape == (1797, 65) and list(table.columns[:2]) == ["p0", "p1"]
    assert table["label"].nunique() == 10 and table.drop(columns="label").to_numpy().max() == 16
    assert np.array_equal(table["label"].to_numpy(), data.digit_labels())


def test_pools_are_disjoint_sized_and_downstream_takes_the_rest():
    labels = np.arange(100) % 10
    pools = data.replicate_pools(
        labels, {"expert_c": 20, "expert_d": 30, "social": 10, "downstream": None}, 3
    )
    assert [len(pools[k]) for k in data.POOLS] == [20, 30, 10, 40]
    joined = np.concatenate([pools[k] for k in data.POOLS])
    assert sorted(joined.tolist()) == list(range(100))
    fixed = data.replicate_pools(
        labels, {"expert_c": 20, "expert_d": 30, "social": 10, "downstream": 25}, 3
    )
    assert len(fixed["downstream"]) == 25 and np.array_equal(fixed["expert_c"], pools["expert_c"])
    other = data.replicate_pools(
        labels, {"expert_c": 20, "expert_d": 30, "social": 10, "downstream": None}, 4
    )
    assert not np.array_equal(other["expert_c"], pools["expert_c"])
    with pytest.raises(ValueError, match="disc.data.pools"):
        data.replicate_pools(
            labels, {"expert_c": 60, "expert_d": 30, "social": 20, "downstream": None}, 0
        )


def test_labelled_counts_and_split_take_floor_of_frac_per_class():
    labels = np.array([0] * 20 + [1] * 9 + [2] * 31)
    assert data.labelled_counts(labels, 1, 0.1) == {
        0: 2,
        1: 0,
        2: 3,
        **{c: 0 for c in range(3, 10)},
    }
    assert data.labelled_counts(labels, 2, 0.1)[1] == 1
    mask = data.labelled_split(
        np.array([0] * 20 + [1] * 10 + [2] * 31), 0.1, np.random.default_rng(0)
    )
    assert mask[:20].sum() == 2 and mask[20:30].sum() == 1 and mask[30:].sum() == 3
    with pytest.raises(ValueError, match="leaves class 1"):
        data.labelled_split(labels, 0.1, np.random.default_rng(0))


def test_scaled_digits_keep_range_and_size():
    pixels = np.zeros((2, 64))
    pixels[0, :] = 16
    out = data.scaled_digits(pixels, [8, 12])
    assert out[8].shape == (2, 8, 8) and out[12].shape == (2, 12, 12)
    assert np.allclose(out[12][0], 1.0) and np.allclose(out[12][1], 0.0)
    ramp = np.tile(np.arange(8) * 2.0, 8)[None]
    assert np.allclose(data.scaled_digits(ramp, [8])[8][0], ramp.reshape(8, 8) / 16)


@pytest.mark.parametrize("seed", range(6))
def test_strokes_are_straight_and_inside_the_canvas(seed):
    rng = np.random.default_rng(seed)
    for _ in range(30):
        rows, cols = data.stroke_pixels(10, 4, rng)
        assert len(rows) == 4
        assert rows.min() >= 0 and rows.max() <= 9 and cols.min() >= 0 and cols.max() <= 9
        dr, dc = np.diff(rows), np.diff(cols)
        assert (
            len(set(dr)) == 1
            and len(set(dc)) == 1
            and (dr[0], dc[0]) in {(0, 1), (1, 0), (1, 1), (1, -1)}
        )


def test_every_stroke_direction_and_position_occurs():
    rng = np.random.default_rng(0)
    seen, starts = set(), set()
    for _ in range(400):
        rows, cols = data.stroke_pixels(6, 3, rng)
        seen.add((rows[1] - rows[0], cols[1] - cols[0]))
        starts.add((rows[0], cols[0]))
    assert seen == {(0, 1), (1, 0), (1, 1), (1, -1)}
    # every start in range is reachable: rows 0..5 (horizontal), columns 0..5 (vertical)
    assert {r for r, _ in starts} == set(range(6)) and {c for _, c in starts} == set(range(6))


def test_canvas_holds_the_digit_inside_its_box():
    digit = {10: np.ones((1, 10, 10), dtype=np.float32)}
    image, box = data.render_canvas(digit, 0, 24, 0, 4, 0.6, 0.0, np.random.default_rng(1))
    ys, xs = np.nonzero(image)
    s = 10
    assert image.sum() == 100 and ys.max() - ys.min() == s - 1 and xs.max() - xs.min() == s - 1
    assert np.allclose(box, [(xs.min() + s / 2) / 24, (ys.min() + s / 2) / 24, s / 24, s / 24])


def test_canvas_positions_and_scales_cover_their_range():
    digits = {s: np.ones((1, s, s), dtype=np.float32) for s in (8, 12)}
    rng = np.random.default_rng(0)
    corners, sizes = set(), set()
    for _ in range(300):
        image, box = data.render_canvas(digits, 0, 12, 0, 4, 0.6, 0.0, rng)
        ys, xs = np.nonzero(image)
        corners.add((ys.min(), xs.min()))
        sizes.add(round(box[2] * 12))
    assert sizes == {8, 12}
    assert (4, 4) in corners and (0, 0) in corners and all(max(c) <= 4 for c in corners)


def test_clutter_and_noise_are_added():
    digit = {8: np.zeros((1, 8, 8), dtype=np.float32)}
    image, _ = data.render_canvas(digit, 0, 16, 3, 4, 0.6, 0.0, np.random.default_rng(2))
    assert set(np.unique(image).tolist()) == {0.0, float(np.float32(0.6))}
    assert 4 <= (image == np.float32(0.6)).sum() <= 12
    noisy, _ = data.render_canvas(digit, 0, 16, 0, 4, 0.6, 0.5, np.random.default_rng(2))
    assert 0.4 < noisy.std() < 0.6 and noisy.dtype == np.float32


def test_stroke_keeps_the_brighter_digit_pixel():
    digit = {16: np.ones((1, 16, 16), dtype=np.float32)}
    image, _ = data.render_canvas(digit, 0, 16, 5, 4, 0.6, 0.0, np.random.default_rng(0))
    assert np.all(image == 1.0)


def test_render_pool_repeats_each_digit_per_render():
    digits = {8: np.arange(3 * 64, dtype=np.float32).reshape(3, 8, 8)}
    pool = data.render_pool(digits, np.array([4, 5, 6]), np.array([2, 0]), 2, 10, 0, 4, 0.6, 0.0,
                            np.random.default_rng(0))  # fmt: skip
    assert pool["images"].shape == (4, 1, 10, 10) and pool["boxes"].shape == (4, 4)
    assert pool["labels"].tolist() == [6, 4, 6, 4]
    assert pool["images"][0].max() == digits[8][2].max()


def test_render_society_gives_clean_expert_c_and_cluttered_others():
    params = validate_params(
        DataParams,
        {"pools": {"expert_c": 20, "expert_d": 20, "social": 20, "downstream": 200},
         "renders": {"expert": 2, "social": 1, "downstream": 1}, "clean_noise": 0.0, "noise": 0.0},
        "disc.data",
    )  # fmt: skip
    society = data.render_society(data.digits_table(), params, 0.1, 0)
    assert len(society["expert_c"]["labels"]) == 40 and len(society["downstream"]["labels"]) == 200
    # strokes of intensity 0.6 appear only on cluttered canvases (with zero noise)
    frac = lambda pool: np.mean([np.any(np.isclose(im, 0.6)) for im in pool["images"]])  # noqa: E731
    assert frac(society["expert_d"]) > frac(society["expert_c"])
    labelled = society["downstream"]["labelled"]
    assert labelled.dtype == bool and 10 <= labelled.sum() <= 20
    assert set(society["downstream"]["labels"][labelled]) == set(range(10))
    assert set(society["digits"]) == set(data.POOLS)
    assert isinstance(data.digits_table(), pd.DataFrame)


def test_digit_labels_are_integer_classes():
    labels = data.digit_labels()
    assert labels.dtype.kind == "i" and labels.shape == (1797,)


def test_scaled_digits_are_float32_images():
    out = data.scaled_digits(np.full((1, 64), 8.0), [8, 10])
    assert out[8].dtype == np.float32 and out[10].dtype == np.float32
    assert np.allclose(out[10], 0.5)


def test_canvas_and_box_are_float32():
    digit = {8: np.ones((1, 8, 8), dtype=np.float32)}
    image, box = data.render_canvas(digit, 0, 12, 1, 3, 0.6, 0.1, np.random.default_rng(0))
    assert image.dtype == np.float32 and box.dtype == np.float32 and box.shape == (4,)


def test_render_pool_labels_are_int64_whatever_the_input_integer_type():
    # int64 class indices, as cross_entropy needs, even from int32 labels
    digits = {8: np.zeros((2, 8, 8), dtype=np.float32)}
    labels = np.array([3, 7], dtype=np.int32)
    pool = data.render_pool(digits, labels, np.array([1, 0]), 1, 8, 0, 4, 0.6, 0.0,
                            np.random.default_rng(0))  # fmt: skip
    assert pool["labels"].dtype == np.int64 and pool["labels"].tolist() == [7, 3]


def test_render_society_draws_each_part_from_its_named_stream():
    # each pool's canvases come from substream(seed, "render", pool) and the labelled mask from
    # substream(seed, "labelled"), so one part can be rebuilt alone from the replicate's seed
    params = validate_params(
        DataParams,
        {"pools": {"expert_c": 10, "expert_d": 10, "social": 10, "downstream": 40},
         "renders": {"expert": 1, "social": 1, "downstream": 1}},
        "disc.data",
    )  # fmt: skip
    table = data.digits_table()
    society = data.render_society(table, params, 0.5, 5)
    labels = table["label"].to_numpy()
    pools = data.replicate_pools(labels, params.pools.model_dump(), 5)
    by_scale = data.scaled_digits(table.drop(columns="label").to_numpy(float), list(params.scales))
    down = data.render_pool(
        by_scale, labels, pools["downstream"], 1, params.canvas, params.clutter_strokes,
        params.stroke_length, params.stroke_intensity, params.noise,
        substream(5, "render", "downstream"),
    )  # fmt: skip
    for key in ("images", "labels", "boxes"):
        assert np.array_equal(society["downstream"][key], down[key])
    mask = data.labelled_split(down["labels"], 0.5, substream(5, "labelled"))
    assert np.array_equal(society["downstream"]["labelled"], mask)


def test_digits_table_labels_are_integers():
    assert data.digits_table()["label"].dtype.kind == "i"


def test_render_pool_gives_float32_images_and_boxes():
    digits = {8: np.ones((1, 8, 8), dtype=np.float64)}
    pool = data.render_pool(digits, np.array([2]), np.array([0]), 2, 10, 1, 3, 0.6, 0.1,
                            np.random.default_rng(0))  # fmt: skip
    assert pool["images"].dtype == np.float32 and pool["boxes"].dtype == np.float32


def test_every_start_of_each_stroke_direction_occurs():
    # a stroke of length 3 on a 6-px canvas may start anywhere its last pixel stays inside
    rng = np.random.default_rng(1)
    starts = {d: set() for d in [(0, 1), (1, 0), (1, 1), (1, -1)]}
    for _ in range(2000):
        rows, cols = data.stroke_pixels(6, 3, rng)
        starts[(rows[1] - rows[0], cols[1] - cols[0])].add((rows[0], cols[0]))
    grid = lambda rs, cs: {(r, c) for r in rs for c in cs}  # noqa: E731
    assert starts[(0, 1)] == grid(range(6), range(4))
    assert starts[(1, 0)] == grid(range(4), range(6))
    assert starts[(1, 1)] == grid(range(4), range(4))
    assert starts[(1, -1)] == grid(range(4), range(2, 6))


def test_labelled_split_draws_distinct_canvases():
    # floor(0.9 * 10) = 9 of each class's 10 canvases, all different (drawn without replacement)
    labels = np.repeat(np.arange(3), 10)
    for seed in range(3):
        mask = data.labelled_split(labels, 0.9, np.random.default_rng(seed))
        assert [int(mask[labels == c].sum()) for c in range(3)] == [9, 9, 9]


def test_scaled_digits_resample_at_pixel_centres():
    # 2x bilinear upscaling of a column ramp (value 2c / 16 in column c): output column j samples the
    # input at x = (j + 0.5) / 2 - 0.5, clamped to the border columns 0 and 7
    ramp = np.tile(np.arange(8) * 2.0, 8)[None]
    out = data.scaled_digits(ramp, [16])[16][0]
    x = np.clip(np.arange(16) / 2 - 0.25, 0, 7)
    assert np.allclose(out, np.tile(2 * x / 16, (16, 1)), atol=1e-6)


def test_render_society_records_its_seed_and_keeps_expert_c_free_of_clutter():
    params = validate_params(
        DataParams,
        {"pools": {"expert_c": 30, "expert_d": 10, "social": 10, "downstream": 40},
         "renders": {"expert": 1, "social": 1, "downstream": 1}, "clean_noise": 0.0},
        "disc.data",
    )  # fmt: skip
    society = data.render_society(data.digits_table(), params, 0.5, 7)
    assert society["seed"] == 7
    # without clutter and noise, every lit pixel of a clean canvas lies inside the digit's box
    c = params.canvas
    for image, (cx, cy, w, h) in zip(
        society["expert_c"]["images"][:, 0], society["expert_c"]["boxes"], strict=True
    ):
        x0, y0 = round((cx - w / 2) * c), round((cy - h / 2) * c)
        x1, y1 = round((cx + w / 2) * c), round((cy + h / 2) * c)
        outside = image.copy()
        outside[y0:y1, x0:x1] = 0
        assert not outside.any()


def test_render_society_clutters_expert_c_when_asked():
    # data.expert_c_clutter: expert_c's canvases get the same strokes (intensity 0.6) as the others
    params = validate_params(
        DataParams,
        {"pools": {"expert_c": 20, "expert_d": 20, "social": 20, "downstream": 40},
         "renders": {"expert": 1, "social": 1, "downstream": 1}, "clean_noise": 0.0, "noise": 0.0,
         "expert_c_clutter": True},
        "disc.data",
    )  # fmt: skip
    society = data.render_society(data.digits_table(), params, 0.5, 0)
    frac = lambda pool: np.mean([np.any(np.isclose(im, 0.6)) for im in pool["images"]])  # noqa: E731
    assert frac(society["expert_c"]) > 0.5
