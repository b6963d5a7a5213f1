"""Crops, splits, the folder loader's column handling and the parameters' cross-block rules."""

import numpy as np
import pandas as pd
import pytest

from paper_pipelines.pipelines.cpl_iqa import data
from paper_pipelines.pipelines.cpl_iqa.parameters import (
    DataParams,
    EvaluationParams,
    SplitParams,
    Stage2Params,
    check_across_blocks,
)


def test_as_rgb_repeats_grey_and_drops_alpha():
    assert data.as_rgb(np.zeros((4, 5), np.uint8)).shape == (4, 5, 3)
    assert data.as_rgb(np.zeros((4, 5, 4), np.uint8)).shape == (4, 5, 3)


def test_random_crop_has_the_patch_size_and_respects_the_minimum_scale():
    img = (np.random.default_rng(0).random((100, 80, 3)) * 255).astype(np.uint8)
    crop, scale, top, left = data.random_crop(img, 40, (0.25, 0.3), np.random.default_rng(0))
    assert crop.shape == (40, 40, 3)
    assert scale == pytest.approx(0.5)  # 40 / 80 is the smallest scale that fits
    assert top == 0 or top <= 100 - 80
    with pytest.raises(ValueError, match="smaller than the patch"):
        data.random_crop(img, 90, (0.5, 0.6), np.random.default_rng(0))


def test_synthetic_set_logs_what_it_applied():
    refs = {"a": (np.random.default_rng(0).random((64, 64, 3)) * 255).astype(np.uint8)}
    pristine, distorted, log = data.make_synthetic_set(
        refs, 6, 32, (0.5, 1.0), ["blur", "noise"], (1, 2), np.random.default_rng(0)
    )
    assert pristine.shape == distorted.shape == (6, 32, 32, 3)
    assert list(log["image_id"]) == list(range(6))
    assert set(log["n_distortions"]) <= {1, 2}
    assert all(set(s.split("+")) <= {"blur", "noise"} for s in log["distortions"])
    assert (log["distortions"].str.count(r"\+") + 1 == log["n_distortions"]).all()
    with pytest.raises(ValueError, match="no reference image is at least 128"):
        data.make_synthetic_set(refs, 1, 128, (0.5, 1), ["blur"], (1, 1), np.random.default_rng(0))


def test_splits_are_disjoint_in_the_ratio_and_differ_by_seed():
    streams = [np.random.default_rng(k) for k in range(2)]
    splits = data.make_splits(50, [1.0, 3.0, 1.0], 2, streams)
    for s in splits:
        assert (len(s["labeled"]), len(s["unlabeled"]), len(s["test"])) == (10, 30, 10)
        union = np.concatenate([s["labeled"], s["unlabeled"], s["test"]])
        assert sorted(union.tolist()) == list(range(50))
    assert not np.array_equal(splits[0]["labeled"], splits[1]["labeled"])


def test_folder_loader_matches_names_and_reports_missing_columns():
    images = {f"img{i}.jpg": np.full((10, 12, 3), i, np.uint8) for i in range(25)}
    labels = pd.DataFrame({"Image_Name": [f"img{i}.jpg" for i in range(25)] + ["gone.jpg"],
                           "MOS": np.arange(26.0)})  # fmt: skip
    arr, table = data.load_folder_set(images, labels, 100, 8)
    assert arr.shape == (25, 8, 8, 3) and list(table["mos"]) == list(np.arange(25.0))
    with pytest.raises(ValueError, match="no MOS column"):
        data.load_folder_set(images, labels.rename(columns={"MOS": "q"}), 100, 8)
    with pytest.raises(ValueError, match="only 3 of the images"):
        data.load_folder_set(dict(list(images.items())[:3]), labels, 100, 8)


def test_cross_block_rules_name_the_keys():
    d, s = DataParams(n_images=100), SplitParams()
    check_across_blocks({"data": d, "split": s, "stage2": Stage2Params(knn_k=79)})
    with pytest.raises(ValueError, match=r"cpl_iqa.stage2.knn_k=80 must be below the 80"):
        check_across_blocks({"data": d, "split": s, "stage2": Stage2Params(knn_k=80)})
    with pytest.raises(ValueError, match=r"leaves 1 labelled"):
        check_across_blocks({"data": d, "split": SplitParams(ratio=[1.0, 98.0, 1.0])})
    with pytest.raises(ValueError, match="scatter_seed=3"):
        check_across_blocks({"data": d, "split": s, "evaluation": EvaluationParams(scatter_seed=3)})
    with pytest.raises(ValueError, match="no labelled image"):
        SplitParams(ratio=[0.0, 3.0, 1.0])
    with pytest.raises(ValueError, match="rescale_min"):
        DataParams(rescale_min=0.7, rescale_max=0.5)
    with pytest.raises(ValueError, match="max_distortions=3 exceeds the 2"):
        DataParams(distortions=["blur", "noise"])


def test_crop_windows_stay_inside_the_image_and_are_resized_with_lanczos():
    from PIL import Image

    img = (np.random.default_rng(0).random((90, 70, 3)) * 255).astype(np.uint8)
    for s in range(60):
        crop, scale, top, left = data.random_crop(img, 20, (0.3, 0.6), np.random.default_rng(s))
        side = min(70, int(round(20 / scale)))
        assert top + side <= 90 and left + side <= 70
    window = Image.fromarray(img[top : top + side, left : left + side])
    assert np.array_equal(crop, np.asarray(window.resize((20, 20), Image.Resampling.LANCZOS)))


def test_synthetic_images_are_the_logged_distortions_of_the_pristine_crops():
    from paper_pipelines.pipelines.cpl_iqa.distortions import apply_mixture, to_uint8

    refs = {"a": (np.random.default_rng(1).random((64, 64, 3)) * 255).astype(np.uint8)}
    pristine, distorted, log = data.make_synthetic_set(
        refs, 8, 32, (0.5, 1.0), ["contrast", "saturation"], (1, 2), np.random.default_rng(0)
    )
    levels = [[float(v) for v in s.split("+")] for s in log["levels"]]
    assert all(0.0 <= v < 1.0 for lv in levels for v in lv)
    assert len({v for lv in levels for v in lv}) > 4
    for i, row in log.iterrows():
        names = row["distortions"].split("+")
        # contrast and saturation use no randomness: the log reproduces the image to rounding
        again = to_uint8(apply_mixture(pristine[i] / 255.0, names, levels[i], None))
        assert np.abs(again.astype(int) - distorted[i].astype(int)).max() <= 2


def test_split_sizes_follow_an_unequal_ratio():
    splits = data.make_splits(50, [2.0, 2.0, 1.0], 1, [np.random.default_rng(0)])
    assert (len(splits[0]["labeled"]), len(splits[0]["unlabeled"]), len(splits[0]["test"])) == (
        20, 20, 10,
    )  # fmt: skip


def test_folder_loader_skips_missing_images_and_loads_partitions_lazily():
    images = {f"dir/img.v{i}": (lambda i=i: np.full((6, 6, 3), i, np.uint8)) for i in range(22)}
    names = ["gone.jpg"] + [f"img.v{i}.jpg" for i in range(22)]
    labels = pd.DataFrame({"filename": names, "score": np.arange(23.0)})
    arr, table = data.load_folder_set(images, labels, 21, 4)
    assert arr.shape == (21, 4, 4, 3) and arr[0, 0, 0, 0] == 0 and arr[20, 0, 0, 0] == 20
    assert list(table["image_id"]) == list(range(21))
    assert list(table["mos"]) == list(np.arange(1.0, 22.0))
    with pytest.raises(ValueError, match="no image name column"):
        data.load_folder_set(images, labels.rename(columns={"filename": "x"}), 21, 4)


def test_shipped_images_are_the_22_rgb_scenes():
    images = data.load_shipped_images()
    assert len(images) == 22 and {"china", "flower", "astronaut", "camera"} <= set(images)
    assert all(im.dtype == np.uint8 and im.ndim == 3 and im.shape[2] == 3 for im in images.values())
    assert images["stereo_motorcycle"].shape == (500, 741, 3)
    assert images["camera"].shape == (512, 512, 3)
    assert np.array_equal(images["camera"][..., 0], images["camera"][..., 2])
    import skimage.data

    assert np.array_equal(images["stereo_motorcycle"], skimage.data.stereo_motorcycle()[0])


def test_synthetic_set_uses_images_exactly_the_patch_size_and_every_distortion_count():
    refs = {"a": (np.random.default_rng(1).random((32, 40, 3)) * 255).astype(np.uint8)}
    _, _, log = data.make_synthetic_set(
        refs, 16, 32, (0.5, 1.0), ["blur", "noise", "contrast"], (1, 3), np.random.default_rng(0)
    )
    assert set(log["n_distortions"]) == {1, 2, 3}
    assert list(log.columns) == [
        "image_id", "source", "scale", "top", "left", "distortions", "levels", "n_distortions",
    ]  # fmt: skip
    assert set(log["source"]) == {"a"} and (log["top"] == 0).all() and (log["left"] >= 0).all()
    assert log["left"].max() <= 8 and (log["scale"] == 1.0).all()


def test_crops_start_at_the_image_border_sometimes():
    img = (np.random.default_rng(0).random((40, 40, 3)) * 255).astype(np.uint8)
    tops = {data.random_crop(img, 30, (0.9, 1.0), np.random.default_rng(s))[2] for s in range(40)}
    assert 0 in tops


def test_folder_loader_matches_label_paths_by_file_name_and_logs_the_source_name():
    # folder partitions may be nested; the label CSV may hold paths: both match by file name
    images = {f"part/b{i % 2}/img{i}.png": np.full((4, 4, 3), i, np.uint8) for i in range(20)}
    names = [f"koniq/1024x768/img{i}.png" for i in range(20)]
    labels = pd.DataFrame({"image": names, "mos": np.arange(20.0)})
    arr, table = data.load_folder_set(images, labels, 20, 4)
    assert list(table.columns) == ["image_id", "source", "mos"]
    assert list(table["source"]) == [f"img{i}.png" for i in range(20)]
    assert arr.shape == (20, 4, 4, 3) and arr[7, 0, 0, 0] == 7
    with pytest.raises(ValueError, match="were found in the folder; check both catalog entries"):
        data.load_folder_set(images, labels.iloc[:5], 20, 4)


def test_the_test_share_follows_its_own_ratio_entry():
    splits = data.make_splits(40, [1.0, 1.0, 2.0], 1, [np.random.default_rng(0)])
    sizes = [len(splits[0][part]) for part in ("labeled", "unlabeled", "test")]
    assert sizes == [10, 10, 20]


def test_an_image_gets_distinct_distortions():
    refs = {"a": (np.random.default_rng(2).random((40, 40, 3)) * 255).astype(np.uint8)}
    kinds = ["blur", "contrast", "saturation"]
    _, _, log = data.make_synthetic_set(
        refs, 12, 16, (0.5, 1.0), kinds, (3, 3), np.random.default_rng(0)
    )
    assert all(sorted(s.split("+")) == kinds for s in log["distortions"])


def test_an_unchanged_image_comes_back_exactly_as_its_pristine_crop():
    # desaturating a grey image changes nothing: the distorted copy must equal the crop, so the crop
    # reaches the distortions on [0, 1] and comes back on [0, 255]
    grey = np.repeat(np.linspace(0, 255, 48)[None, :, None], 48, axis=0).repeat(3, axis=2)
    refs = {"grey": grey.round().astype(np.uint8)}
    pristine, distorted, _ = data.make_synthetic_set(
        refs, 6, 24, (0.5, 1.0), ["saturation"], (1, 1), np.random.default_rng(0)
    )
    assert pristine.max() >= 200
    assert np.array_equal(distorted, pristine)


def test_an_image_of_exactly_the_patch_size_is_its_own_crop():
    img = (np.random.default_rng(3).random((24, 24, 3)) * 255).astype(np.uint8)
    for s in range(20):
        crop, scale, top, left = data.random_crop(img, 24, (0.5, 1.0), np.random.default_rng(s))
        assert (scale, top, left) == (1.0, 0, 0)
        assert np.array_equal(crop, img)


def test_synthetic_images_are_uint8():
    refs = {"a": (np.random.default_rng(0).random((20, 20, 3)) * 255).astype(np.uint8)}
    pristine, distorted, _ = data.make_synthetic_set(
        refs, 2, 8, (0.5, 1.0), ["blur"], (1, 1), np.random.default_rng(0)
    )
    assert pristine.dtype == distorted.dtype == np.uint8
