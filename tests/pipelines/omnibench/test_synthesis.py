"""Synthesis with cross-verification: shortest-path trajectories, evaluations, negatives, faults."""

import numpy as np
import pytest

from paper_pipelines.pipelines.omnibench import synthesis as sy
from paper_pipelines.pipelines.omnibench.simulator import LAUNCH, replay, run_evaluation


def _candidate(gold_by_id, sid):
    g = gold_by_id[sid]
    return {
        k: g[k]
        for k in (
            "id",
            "app",
            "category",
            "effect",
            "input_resources",
            "output_resources",
            "available_parameters",
            "slots",
            "instruction_template",
            "phrasings",
        )
    }


def test_bind_fills_slots_everywhere_and_leaves_other_braces():
    template = [{"text": "{src} to {dst}", "keys": "{ESC}"}, "{src}", 3]
    assert sy.bind(template, {"src": "a", "dst": "b"}) == [
        {"text": "a to b", "keys": "{ESC}"},
        "a",
        3,
    ]


def test_shortest_path_and_gold_trajectory(desktop):
    app = desktop["apps"]["photo_lab"]
    assert sy.shortest_screen_path(app, "home") == []
    assert sy.shortest_screen_path(app, "rotate_left_dialog") == ["image_menu", "open_rotate_left"]
    with pytest.raises(ValueError, match="unreachable"):
        sy.shortest_screen_path({"home": "home", "screens": {"home": [], "x": []}}, "x")
    assert sy.gold_trajectory(app, "photo_lab", "rotate_left") == [
        {"api": "click_input", "label": LAUNCH + "photo_lab"},
        {"api": "click_input", "label": "image_menu"},
        {"api": "click_input", "label": "open_rotate_left"},
        {"api": "set_edit_text", "label": "src_box", "text": "{src}"},
        {"api": "set_edit_text", "label": "dst_box", "text": "{dst}"},
        {"api": "click_input", "label": "apply_rotate_left"},
    ]
    with pytest.raises(ValueError, match="no control"):
        sy.trigger_of(app, "nothing")


def test_evaluation_function_uses_the_official_check_kinds(desktop):
    checks = sy.evaluation_function(desktop["apps"]["word_writer"], "word_writer", "insert_image")
    assert checks == [
        {"check": "check_file_exists", "args": {"file_path": "{dst}"}},
        {"check": "check_text_exists", "args": {"text": "insert_image<{src},{picture}>"}},
        {
            "check": "check_mouse_clicks",
            "args": {"text": "Apply insert image", "app": "word_writer"},
        },
    ]


def test_negatives_are_near_misses(desktop, gold_by_id):
    cand = _candidate(gold_by_id, "photo_lab.grayscale")
    binding = cand["available_parameters"][0]
    traj = sy.gold_trajectory(desktop["apps"]["photo_lab"], "photo_lab", "grayscale")
    neg = sy.negatives(desktop, cand, binding, traj)
    assert set(neg) == {"truncated", "wrong_input", "wrong_output", "wrong_app"}
    assert neg["truncated"] == sy.bind(traj, binding)[:-1]
    assert neg["wrong_app"][0]["label"] == LAUNCH + "paint_pro"  # the twin app with the same effect
    checks = sy.bind(
        sy.evaluation_function(desktop["apps"]["photo_lab"], "photo_lab", "grayscale"), binding
    )
    for actions in neg.values():
        assert not run_evaluation(replay(desktop, actions), checks)[0]
    # an effect no other app has: the clicks are replayed in another app's window
    solo = _candidate(gold_by_id, "photo_lab.crop_center")
    traj = sy.gold_trajectory(desktop["apps"]["photo_lab"], "photo_lab", "crop_center")
    wrong_app = sy.negatives(desktop, solo, solo["available_parameters"][0], traj)["wrong_app"]
    assert (
        wrong_app[0]["label"] == LAUNCH + "file_explorer"
        and wrong_app[1:] == sy.bind(traj, solo["available_parameters"][0])[1:]
    )


@pytest.mark.parametrize(
    ("drop", "caught_by"), [(0, "wrong_output"), (1, "wrong_input"), (2, "wrong_app")]
)
def test_each_dropped_check_is_caught_by_a_negative(desktop, gold_by_id, drop, caught_by):
    cand = _candidate(gold_by_id, "photo_lab.grayscale")
    app = desktop["apps"]["photo_lab"]
    traj = sy.gold_trajectory(app, "photo_lab", "grayscale")
    checks = sy.evaluation_function(app, "photo_lab", "grayscale")
    weak = checks[:drop] + checks[drop + 1 :]
    ok, reason = sy.cross_verify(desktop, cand, traj, weak, cand["available_parameters"][:1])
    assert not ok and reason == f"negative {caught_by} accepted"
    assert sy.cross_verify(desktop, cand, traj, checks, cand["available_parameters"][:2]) == (
        True,
        "verified",
    )


def test_wrong_path_and_dropped_step_fail_the_gold_replay(desktop, gold_by_id):
    cand = _candidate(gold_by_id, "photo_lab.grayscale")
    app = desktop["apps"]["photo_lab"]
    traj = sy.gold_trajectory(app, "photo_lab", "grayscale")
    checks = sy.evaluation_function(app, "photo_lab", "grayscale")
    rng = np.random.default_rng(3)
    seen = set()
    for _ in range(30):
        kind, t2, c2 = sy.inject_fault(traj, checks, rng)
        seen.add(kind)
        if kind == "wrong_path":
            assert c2[0]["args"]["file_path"] == "{dst}.tmp" and t2 == traj
        if kind == "drop_step":
            assert len(t2) == len(traj) - 1 and c2 == checks
        if kind == "drop_check":
            assert len(c2) == 2 and t2 == traj
        if kind != "drop_check":
            ok, reason = sy.cross_verify(desktop, cand, t2, c2, cand["available_parameters"][:1])
            assert not ok and reason.startswith("gold replay rejected")
    assert seen == set(sy.FAULTS)
    assert len(checks) == 3 and len(traj) == 6  # the originals are untouched


def test_synthesize_keeps_fixes_or_discards(desktop, gold_by_id):
    cand = _candidate(gold_by_id, "photo_lab.grayscale")
    clean = sy.synthesize(desktop, cand, 3, 0.0, np.random.default_rng(0))
    assert clean["status"] == "verified" and len(clean["log"]) == 1
    always = sy.synthesize(desktop, cand, 2, 1.0, np.random.default_rng(0))
    assert always["status"] in ("discarded", "verified")
    assert all(entry["fault"] for entry in always["log"])
    if always["status"] == "discarded":
        assert always["trajectory"] is None and len(always["log"]) == 2
    fixed = None
    for seed in range(60):
        rec = sy.synthesize(desktop, cand, 3, 0.5, np.random.default_rng(seed))
        first = rec["log"][0]
        if first["fault"] and first["fault"] != "drop_check" and rec["status"] == "fixed":
            fixed = rec
            break
    assert fixed is not None and not fixed["log"][0]["verified"]
    app = desktop["apps"]["photo_lab"]
    if fixed["log"][-1]["fault"] is None:
        assert fixed["evaluation"] == sy.evaluation_function(app, "photo_lab", "grayscale")
        assert fixed["trajectory"] == sy.gold_trajectory(app, "photo_lab", "grayscale")


def test_synthesis_report_counts():
    records = [
        {"status": "verified", "log": [{"fault": None, "verified": True}]},
        {
            "status": "fixed",
            "log": [{"fault": "drop_step", "verified": False}, {"fault": None, "verified": True}],
        },
        {"status": "verified", "log": [{"fault": "drop_check", "verified": True}]},
        {"status": "discarded", "log": [{"fault": None, "verified": False}]},
    ]
    rep = sy.synthesis_report(records)
    assert rep["n_candidates"] == 4 and rep["n_fixed"] == 1 and rep["n_discarded"] == 1
    assert rep["n_verified_first_try"] == 2
    assert rep["verified_subtask_rate"] == 0.75
    assert (
        rep["faults_injected"] == 2 and rep["faults_caught"] == 1 and rep["fault_catch_rate"] == 0.5
    )
    assert rep["uncaught_faults"] == ["drop_check"] and rep["clean_attempts_rejected"] == 1
    assert np.isnan(sy.synthesis_report([])["verified_subtask_rate"])


def test_every_gold_subtask_passes_and_rejects_negatives(desktop, gold):
    rates = sy.gold_check_rates(desktop, gold)
    assert rates == {"gold_replay_pass_rate": 1.0, "negative_rejection_rate": 1.0}
    assert len(gold) == 40 and all(g["status"] == "verified" for g in gold)
    assert np.isnan(sy.gold_check_rates(desktop, [])["gold_replay_pass_rate"])
    assert sy.fresh_sim(desktop).files


def test_wrong_app_negative_launches_another_app(desktop, gold_by_id):
    solo = _candidate(gold_by_id, "photo_lab.crop_center")
    traj = sy.gold_trajectory(desktop["apps"]["photo_lab"], "photo_lab", "crop_center")
    wrong_app = sy.negatives(desktop, solo, solo["available_parameters"][0], traj)["wrong_app"]
    assert wrong_app[0] == {"api": "click_input", "label": LAUNCH + "file_explorer"}
