"""SynthNIAH: deterministic specs, needles where the spec says, bad videos refused."""

import numpy as np
import pytest

from paper_pipelines.pipelines.vilamp import data as synth
from paper_pipelines.pipelines.vilamp.parameters import DataParams


@pytest.fixture(scope="module")
def assets():
    return synth.build_assets(DataParams(backgrounds=12), np.random.default_rng(0), noise_bank=8)


def test_specs_are_deterministic_and_answerable(assets):
    data = DataParams(backgrounds=12)
    labels = assets["glyphs"]["labels"]
    for task in ("retrieval", "ordering", "counting"):
        a = synth.make_video_spec(task, 300, data, labels, np.random.default_rng(3))
        b = synth.make_video_spec(task, 300, data, labels, np.random.default_rng(3))
        assert a == b
        assert a["answer"] in a["options"] and len(a["options"]) == (2 if task == "ordering" else 4)
        assert sum(s[1] for s in a["scenes"]) == 300
        assert a["question"] in synth.all_questions(list(data.colours))
        assert a["answer"] in synth.answer_vocabulary(list(data.colours), data.max_count)
    count = synth.make_video_spec("counting", 300, data, labels, np.random.default_rng(4))
    asked = count["question"].split()[2]
    assert count["answer"] == f"count {sum(e[2] == asked for e in count['events'])}"


def test_needle_card_is_rendered_in_its_cell(assets):
    data = DataParams(backgrounds=12, noise=0.0)
    spec = synth.make_video_spec(
        "retrieval", 200, data, assets["glyphs"]["labels"], np.random.default_rng(1)
    )
    frames = synth.render_video(spec, assets, data)
    assert frames.shape == (200, 3, 32, 32) and frames.dtype == np.float32
    start, length, colour, glyph, cell, digit = spec["events"][0]
    y, x = (cell // 4) * 8, (cell % 4) * 8
    card = synth.card_patch(assets["glyphs"]["images"][glyph], colour, 8)
    assert np.allclose(frames[start, :, y : y + 8, x : x + 8], card)
    assert spec["needle_frames"] == list(range(start, start + length))
    assert spec["answer"] == str(digit)


def test_card_face_carries_the_colour():
    blank = np.zeros((8, 8), np.float32)
    assert np.allclose(synth.card_patch(blank, "red", 8)[:, 0, 0], synth.COLOUR_RGB["red"])
    ink = np.ones((8, 8), np.float32)
    assert np.allclose(
        synth.card_patch(ink, "red", 8)[:, 0, 0], 0.2 * np.array(synth.COLOUR_RGB["red"])
    )


def test_drift_is_a_bouncing_walk():
    assert [synth.drift_offset(t, 1, 4) for t in range(7)] == [2, 1, 0, 1, 2, 3, 4]
    assert [synth.drift_offset(t, -1, 4) for t in range(3)] == [2, 3, 4]
    assert synth.drift_offset(5, 0, 4) == 2


def test_bad_videos_and_questions_are_refused(assets):
    data = DataParams(backgrounds=12)
    with pytest.raises(ValueError, match="at least one frame"):
        synth.make_video_spec(
            "retrieval", 0, data, assets["glyphs"]["labels"], np.random.default_rng(0)
        )
    with pytest.raises(ValueError, match="unknown task"):
        synth.question("captioning", ["red"])
    with pytest.raises(ValueError, match="no frames"):
        synth.render_video({"n_frames": 0}, assets, data)
    from paper_pipelines.pipelines.vilamp.models import minilm_embeddings

    with pytest.raises(ValueError, match="empty question"):
        minilm_embeddings(["What digit is on the red card?", "  "])
