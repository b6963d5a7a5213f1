"""Contracts of the small pieces on hand-made inputs: captions and the caption corpus, background crops,
the digit glyphs, the KV-cache projection table and the naive walk's tie order (milliseconds each)."""

from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import torch

from paper_pipelines.pipelines.vilamp import data as synth
from paper_pipelines.pipelines.vilamp.metrics import OOM, accuracy_table
from paper_pipelines.pipelines.vilamp.models import minilm_embeddings
from paper_pipelines.pipelines.vilamp.scaling import projection_table
from paper_pipelines.pipelines.vilamp.selection import greedy_keyframes, naive_greedy_keyframes


def test_caption_names_the_visible_card_or_none():
    assert synth.caption(None, None) == synth.NO_CARD == "a textured scene with no card"
    assert synth.caption("red", 3) == "a red card with the digit 3"


def _tiny_assets():
    # 3 backgrounds of 6 x 6 px (a 4 px frame drifts in a 2 px margin), 3 glyphs of 2 x 2 px
    rng = np.random.default_rng(0)
    return {
        "backgrounds": rng.uniform(0.2, 0.8, (3, 3, 6, 6)).astype(np.float32),
        "glyphs": {
            "images": rng.uniform(0, 1, (3, 2, 2)).astype(np.float32),
            "labels": np.array([7, 1, 4]),
        },
        "noise": np.zeros((5, 3, 4, 4), np.float32),
    }


TINY = SimpleNamespace(frame_size=4, patch_size=2, grid=2, colours=["red", "blue"], noise=0.0)


def test_caption_corpus_rows_are_consistent_and_cover_every_window():
    assets = _tiny_assets()
    rows = synth.caption_corpus(80, TINY, assets, 0.5, np.random.default_rng(1))
    assert len(rows) == 80
    labels = assets["glyphs"]["labels"]
    cards = [r for r in rows if r["colour"] >= 0]
    blanks = [r for r in rows if r["colour"] < 0]
    assert cards and blanks
    for r in blanks:  # no card: -1 in colour, glyph and digit, and the no-card caption
        assert (r["colour"], r["glyph"], r["digit"]) == (-1, -1, -1)
        assert r["caption"] == synth.NO_CARD
    for r in cards:
        assert r["colour"] in (0, 1) and 0 <= r["glyph"] < 3
        assert r["digit"] == labels[r["glyph"]]
        assert r["caption"] == f"a {TINY.colours[r['colour']]} card with the digit {r['digit']}"
    # every window offset of the 2 px margin (both ends included), background, cell and noise frame
    assert {r["oy"] for r in rows} == {r["ox"] for r in rows} == {0, 1, 2}
    assert {r["background"] for r in rows} == {0, 1, 2}
    assert {r["cell"] for r in rows} == {0, 1, 2, 3}
    assert {r["noise"] for r in rows} == set(range(5))
    assert {r["colour"] for r in cards} == {0, 1}


def test_caption_frames_show_the_window_and_the_card_in_its_cell():
    assets = _tiny_assets()
    rows = synth.caption_corpus(12, TINY, assets, 0.5, np.random.default_rng(2))
    frames = synth.render_caption_frames(rows, assets, TINY)
    assert frames.shape == (12, 3, 4, 4) and frames.dtype == np.float32
    for frame, r in zip(frames, rows, strict=True):
        expected = assets["backgrounds"][
            r["background"], :, r["oy"] : r["oy"] + 4, r["ox"] : r["ox"] + 4
        ].copy()
        if r["colour"] >= 0:
            y, x = (r["cell"] // 2) * 2, (r["cell"] % 2) * 2  # 2 x 2 grid of 2 px cells
            glyph = assets["glyphs"]["images"][r["glyph"]]
            expected[:, y : y + 2, x : x + 2] = synth.card_patch(
                glyph, TINY.colours[r["colour"]], 2
            )
        np.testing.assert_allclose(frame, expected, atol=1e-6)


def _coordinates(h, w):
    """An RGB image whose red channel is the pixel's row and green its column."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float32)
    return np.stack([y, x, np.zeros_like(y)], axis=-1)


def test_background_crops_can_start_anywhere_in_the_image():
    # a 7 x 7 image and size 4: crops of side 6 (= 4 + 2), unscaled, start at row / column 0 or 1
    image = _coordinates(7, 7)
    out = synth.crop_backgrounds([image], 30, 4, np.random.default_rng(0))
    assert out.shape == (30, 3, 6, 6) and out.dtype == np.float32
    starts = set()
    for crop in out:
        y, x = int(round(crop[0, 0, 0])), int(round(crop[1, 0, 0]))
        starts.add((y, x))
        np.testing.assert_allclose(crop, image[y : y + 6, x : x + 6].transpose(2, 0, 1), atol=1e-4)
    assert starts == {(0, 0), (0, 1), (1, 0), (1, 1)}


def test_background_crops_of_a_tall_image_are_square_in_its_pixels():
    # 240 x 120: a crop must span as many of the image's rows as of its columns (no stretching)
    out = synth.crop_backgrounds([_coordinates(240, 120)], 6, 8, np.random.default_rng(0))
    assert out.shape == (6, 3, 12, 12)
    for crop in out:
        rows = crop[0, -2, 6] - crop[0, 1, 6]  # rows spanned down the middle column
        cols = crop[1, 6, -2] - crop[1, 6, 1]  # columns spanned along the middle row
        assert rows > 0 and abs(rows / cols - 1) < 0.05


def test_glyphs_are_sklearn_digits_scaled_to_the_unit_interval():
    glyphs = synth.load_glyphs()
    images, labels = glyphs["images"], glyphs["labels"]
    assert images.shape == (1797, 8, 8) and images.dtype == np.float32
    assert images.min() == 0.0 and images.max() == 1.0  # sklearn's ink levels run 0..16
    assert sorted(set(labels.tolist())) == list(range(10))


def test_rendering_an_empty_video_says_why():
    with pytest.raises(ValueError, match=r"^a video with no frames cannot be rendered"):
        synth.render_video({"n_frames": 0}, {}, None)


def test_projection_table_by_hand():
    # 2 layers x 1 KV head x 4 dims x 2 bytes x (K and V) = 32 bytes per token; 3 tokens per frame
    p = SimpleNamespace(
        max_frames=10, points=4, layers=2, kv_heads=1, head_dim=4, bytes=2,
        tokens_per_frame=3, keyframes=2,
    )  # fmt: skip
    table = projection_table(p)
    # N = linspace(1, 10, 4) = 1, 4, 7, 10; dense 3 N + 1; ViLAMP 3 min(2, N) + (N - min(2, N)) + 1
    dense, vilamp = [4, 13, 22, 31], [4, 9, 12, 15]
    expected = [
        {"method": m, "n_frames": n, "tokens": t, "gb": t * 32 / 1e9}
        for m, tokens in (("dense", dense), ("vilamp", vilamp))
        for n, t in zip([1, 4, 7, 10], tokens, strict=True)
    ]
    assert list(table.columns) == ["method", "n_frames", "tokens", "gb"]
    records = table.to_dict("records")
    assert [{k: v for k, v in r.items() if k != "gb"} for r in records] == [
        {k: v for k, v in r.items() if k != "gb"} for r in expected
    ]
    for got, want in zip(records, expected, strict=True):
        assert got["gb"] == pytest.approx(want["gb"], rel=1e-12, abs=0)


def test_naive_walk_breaks_relevance_ties_by_frame_order_like_ours():
    # 17 orthogonal frames (nothing suppressed) with tied relevances: the walk takes ties in frame
    # order, 0 then 9 then 11 (the three frames of relevance 2)
    rel = np.array([2, 1, 1, 0, 0, 0, 0, 0, 0, 2, 1, 2, 1, 1, 2, 2, 1], np.float32)
    emb = np.eye(17, dtype=np.float32)
    assert naive_greedy_keyframes(emb, rel, 3, 0.5) == [0, 9, 11]
    assert greedy_keyframes(torch.from_numpy(emb), torch.from_numpy(rel), 3, 0.5) == [0, 9, 11]


def test_an_empty_text_is_refused_before_any_model_is_loaded():
    with pytest.raises(ValueError, match=r"^an empty question or caption has no text embedding"):
        minilm_embeddings(["a red card", " "])


def test_accuracy_table_has_one_row_per_cell_and_only_its_own_columns():
    def row(method, status, question, **kw):
        return dict(task="counting", n_frames=16, method=method, status=status, question=question,
                    answer="count 1", visual_tokens=40, **kw)  # fmt: skip

    ok = dict(correct=0.0, needle_recall=1.0, needles_hit=0.5)
    predictions = pd.DataFrame(
        [row("vilamp", "ok", "How many red cards appear?", **ok),
         # two videos (different questions) of one OOM cell: still one row
         row("dense", OOM, "How many red cards appear?"),
         row("dense", OOM, "How many blue cards appear?")]
    )  # fmt: skip
    table = accuracy_table(predictions)
    assert list(table.columns) == [
        "task", "n_frames", "method", "accuracy", "needle_recall", "needles_hit",
        "visual_tokens", "videos", "status",
    ]  # fmt: skip
    assert table.method.tolist() == ["dense", "vilamp"] and table.index.tolist() == [0, 1]
    assert table.status.tolist() == [OOM, "ok"]
    only_ok = accuracy_table(predictions.iloc[:1])
    assert list(only_ok.columns) == list(table.columns) and only_ok.status.tolist() == ["ok"]
