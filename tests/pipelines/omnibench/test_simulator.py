"""OmniSim: actions in the official API names, the file system, the event log and the check functions."""

import copy

import pytest

from paper_pipelines.pipelines.omnibench.simulator import (
    LAUNCH,
    OmniSim,
    effect_content,
    replay,
    run_evaluation,
)

PATH = [
    {"api": "click_input", "label": LAUNCH + "photo_lab"},
    {"api": "click_input", "label": "filters"},
    {"api": "click_input", "label": "open_grayscale"},
    {"api": "set_edit_text", "label": "src_box", "text": "Desktop/photo1.png"},
    {"api": "set_edit_text", "label": "dst_box", "text": "Desktop/out/g.png"},
    {"api": "click_input", "label": "apply_grayscale"},
]


def test_the_gold_path_writes_the_effect_of_its_inputs(desktop):
    sim = replay(desktop, PATH)
    assert sim.files["Desktop/out/g.png"] == {
        "type": "image",
        "content": "grayscale<Desktop/photo1.png>",
    }
    assert sim.screen == "home" and sim.forms["photo_lab"] == {}
    assert sim.check_file_exists("Desktop/out/g.png")
    assert sim.check_text_exists(effect_content("grayscale", ["Desktop/photo1.png"]))
    assert sim.check_mouse_clicks("Apply grayscale", "photo_lab")
    assert not sim.check_mouse_clicks("Apply grayscale", "paint_pro")
    assert sim.check_mouse_clicks("Apply grayscale")
    assert sim.check_keyboard_types("Desktop/out/g.png") and not sim.check_keyboard_types("x")
    assert sim.steps == 6


def test_an_effect_with_a_missing_or_mistyped_input_changes_nothing(desktop):
    wrong = [dict(a) for a in PATH]
    wrong[3]["text"] = "Desktop/report.docx"  # a document where an image is expected
    sim = replay(desktop, wrong)
    assert "Desktop/out/g.png" not in sim.files and sim.events[-1] == (
        "error",
        "photo_lab",
        "grayscale",
    )
    no_dst = PATH[:4] + PATH[5:]
    assert "Desktop/out/g.png" not in replay(desktop, no_dst).files


def test_controls_off_screen_are_invalid_and_logged(desktop):
    sim = OmniSim(desktop)
    assert [c["type"] for c in sim.controls()] == ["TaskbarButton"] * 16
    assert sim.act({"api": "click_input", "label": "filters"}) is False
    assert sim.events[-1] == ("invalid", None, "filters")
    assert sim.act({"api": "set_edit_text", "label": "src_box", "text": "x"}) is False
    assert sim.act({"api": "nonsense"}) is False
    assert sim.act({"api": "keyboard_input", "keys": "{ESC}"}) is False  # no app open
    sim.act(PATH[0])
    assert (
        sim.act({"api": "set_edit_text", "label": "filters", "text": "x"}) is False
    )  # not an Edit
    assert sim.act({"api": "wheel_mouse_input", "label": "filters", "dist": -3}) is True
    assert sim.act({"api": "wheel_mouse_input", "label": "nope"}) is False


def test_observation_and_keys(desktop):
    sim = replay(desktop, PATH[:4])
    obs = sim.observation()
    assert obs["app"] == "photo_lab" and obs["screen"] == "grayscale_dialog"
    assert obs["form"] == {"src": "Desktop/photo1.png"}
    assert [c["label"] for c in obs["a11y"][16:]] == [
        "src_box",
        "dst_box",
        "apply_grayscale",
        "cancel",
    ]
    assert "Desktop/photo1.png" in obs["files"]
    sim.act({"api": "keyboard_input", "keys": "^c"})
    assert sim.clipboard == "Desktop/photo1.png"
    sim.act({"api": "click_input", "label": "dst_box"})
    assert sim.focus == "dst"
    sim.act({"api": "keyboard_input", "keys": "^v"})
    assert sim.forms["photo_lab"]["dst"] == "Desktop/photo1.png"
    sim.act({"api": "keyboard_input", "keys": "{ESC}"})
    assert sim.screen == "home" and sim.focus is None
    assert sim.check_text_exists("Filters")  # a control on screen
    assert not sim.check_text_exists("no such text")
    assert OmniSim(desktop).observation()["form"] == {}


def test_run_evaluation_needs_every_check(desktop):
    sim = replay(desktop, PATH)
    good = [{"check": "check_file_exists", "args": {"file_path": "Desktop/out/g.png"}}]
    assert run_evaluation(sim, good) == (True, "all checks passed")
    bad = [*good, {"check": "check_keyboard_types", "args": {"text": "zzz"}}]
    ok, message = run_evaluation(sim, bad)
    assert not ok and "check_keyboard_types" in message
    assert run_evaluation(sim, []) == (False, "empty evaluation")
    assert run_evaluation(sim, [{"check": "exec", "args": {}}])[0] is False


@pytest.mark.parametrize("label", ["cancel"])
def test_cancel_goes_home(desktop, label):
    sim = replay(desktop, PATH[:3])
    sim.act({"api": "click_input", "label": label})
    assert sim.screen == "home"


def test_invalid_actions_are_logged_with_app_and_what_was_tried(desktop):
    sim = replay(desktop, PATH[:1])
    assert sim.act({"api": "set_edit_text", "label": "filters", "text": "x"}) is False
    assert sim.events[-1] == ("invalid", "photo_lab", "filters")
    assert sim.act({"api": "drag_mouse"}) is False
    assert sim.events[-1] == ("invalid", "photo_lab", "drag_mouse")


def test_missing_text_or_keys_count_as_empty(desktop):
    sim = replay(desktop, PATH[:3])
    assert sim.act({"api": "set_edit_text", "label": "src_box"}) is True
    assert sim.forms["photo_lab"] == {"src": ""} and sim.events[-1] == ("type", "photo_lab", "")
    assert sim.act({"api": "keyboard_input"}) is True
    assert sim.events[-1] == ("keys", "photo_lab", "") and sim.check_keyboard_types("")


def test_check_mouse_clicks_needs_that_text(desktop):
    sim = replay(desktop, PATH)
    assert sim.check_mouse_clicks("Apply grayscale")
    assert not sim.check_mouse_clicks("Apply crop")  # clicks happened, none with this text
    assert not OmniSim(desktop).check_mouse_clicks("Apply grayscale")


def test_scrolls_are_logged_with_their_label(desktop):
    sim = replay(desktop, PATH[:1])
    assert sim.act({"api": "wheel_mouse_input", "label": "filters"}) is True
    assert sim.events[-1] == ("scroll", "photo_lab", "filters")
    assert sim.act({"api": "wheel_mouse_input"}) is False
    assert sim.events[-1] == ("scroll", "photo_lab", "")


def test_copying_an_empty_field_copies_empty_text(desktop):
    sim = replay(desktop, PATH[:3])
    sim.act({"api": "click_input", "label": "src_box"})  # focus the empty Edit
    sim.act({"api": "keyboard_input", "keys": "^c"})
    assert sim.clipboard == ""
    sim.act({"api": "click_input", "label": "dst_box"})
    sim.act({"api": "keyboard_input", "keys": "^v"})
    assert sim.forms["photo_lab"] == {"dst": ""}


def test_text_search_skips_controls_without_text(desktop):
    app = copy.deepcopy(desktop["apps"]["photo_lab"])
    app["screens"]["home"].append({"label": "icon", "type": "Button"})  # a control with no text
    sim = OmniSim({**desktop, "apps": {"photo_lab": app}})
    sim.act({"api": "click_input", "label": LAUNCH + "photo_lab"})
    assert {"label": "icon", "type": "Button"} in sim.controls()
    assert not sim.check_text_exists("no such text")
    assert sim.check_text_exists(app["screens"]["home"][0]["text"])
