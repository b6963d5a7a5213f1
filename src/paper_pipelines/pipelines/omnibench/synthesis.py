"""Iterative subtask synthesis with cross-verification (paper process 2).

For each candidate the synthesiser writes a trajectory (the shortest path through the app's UI graph to
the effect, with the slots typed) and an evaluation function built from the official check kinds; the
two verify each other: the evaluation must pass on the gold replay and fail on negatives (the trajectory
truncated, an input mis-bound, the output mis-bound, the same job done in another app). The paper's
synthesiser is an MLLM that errs; ours injects faults at ``fault_rate`` (a dropped check, a wrong target
path, a dropped step) so the verification has something to catch, and regenerates up to ``max_iters``
times before discarding the candidate.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import numpy as np

from .simulator import LAUNCH, OmniSim, effect_content, replay, run_evaluation

FAULTS = ("drop_check", "wrong_path", "drop_step")


def bind(template: Any, params: dict[str, str]) -> Any:
    """Fill ``{slot}`` placeholders in every string of a trajectory or evaluation template."""
    if isinstance(template, str):
        for slot, value in params.items():
            template = template.replace("{" + slot + "}", value)
        return template
    if isinstance(template, list):
        return [bind(t, params) for t in template]
    if isinstance(template, dict):
        return {k: bind(v, params) for k, v in template.items()}
    return template


def shortest_screen_path(app_spec: dict, target: str) -> list[str]:
    """Labels of the goto controls on a shortest path home -> ``target`` screen (breadth first)."""
    home = app_spec["home"]
    parent: dict[str, tuple[str, str] | None] = {home: None}
    queue = deque([home])
    while queue:
        screen = queue.popleft()
        if screen == target:
            break
        for control in app_spec["screens"][screen]:
            nxt = control.get("goto")
            if nxt and nxt not in parent:
                parent[nxt] = (screen, control["label"])
                queue.append(nxt)
    if target not in parent:
        raise ValueError(f"screen {target!r} is unreachable from {home!r}")
    labels, node = [], target
    while parent[node] is not None:
        node, label = parent[node]
        labels.append(label)
    return labels[::-1]


def trigger_of(app_spec: dict, effect: str) -> tuple[str, dict]:
    """(screen, control) of the button that fires ``effect``."""
    for screen, controls in app_spec["screens"].items():
        for control in controls:
            if control.get("effect") == effect:
                return screen, control
    raise ValueError(f"no control fires effect {effect!r}")


def gold_trajectory(app_spec: dict, app: str, effect: str) -> list[dict]:
    """Launch, the shortest menu path to the effect's dialog, type every slot, fire the effect."""
    screen, trigger = trigger_of(app_spec, effect)
    actions = [{"api": "click_input", "label": LAUNCH + app}]
    actions += [
        {"api": "click_input", "label": label} for label in shortest_screen_path(app_spec, screen)
    ]
    for control in app_spec["screens"][screen]:
        if control["type"] == "Edit":
            text = "{" + control["slot"] + "}"
            actions.append({"api": "set_edit_text", "label": control["label"], "text": text})
    actions.append({"api": "click_input", "label": trigger["label"]})
    return actions


def evaluation_function(app_spec: dict, app: str, effect: str) -> list[dict]:
    """Postconditions from the official check kinds: the output exists, holds the effect of the
    bound inputs, and the effect's button was clicked in this app."""
    _, trigger = trigger_of(app_spec, effect)
    inputs = ["{" + s + "}" for s in app_spec["effects"][effect]["inputs"]]
    return [
        {"check": "check_file_exists", "args": {"file_path": "{dst}"}},
        {"check": "check_text_exists", "args": {"text": effect_content(effect, inputs)}},
        {"check": "check_mouse_clicks", "args": {"text": trigger["text"], "app": app}},
    ]


def inject_fault(
    trajectory: list[dict], checks: list[dict], rng: np.random.Generator
) -> tuple[str, list[dict], list[dict]]:
    """One synthesis error, as an MLLM makes them: a check dropped, a wrong path, a step dropped."""
    kind = FAULTS[int(rng.integers(len(FAULTS)))]
    trajectory, checks = [dict(a) for a in trajectory], [dict(c) for c in checks]
    if kind == "drop_check":
        del checks[int(rng.integers(len(checks)))]
    elif kind == "wrong_path":
        checks[0] = {"check": "check_file_exists", "args": {"file_path": "{dst}.tmp"}}
    else:
        del trajectory[int(rng.integers(len(trajectory)))]
    return kind, trajectory, checks


def negatives(
    desktop: dict, candidate: dict, binding: dict[str, str], trajectory: list[dict]
) -> dict[str, list[dict]]:
    """Near-miss executions the evaluation must reject (spec step 3), as bound action lists."""
    bound = bind(trajectory, binding)
    out = {"truncated": bound[:-1]}
    same_type = {
        f["path"]
        for f in desktop["files"]
        if f["type"] == next(iter(candidate["input_resources"].values()), None)
    }
    slot = next(iter(candidate["input_resources"]), None)
    if slot is not None:
        others = sorted(same_type - {binding[slot]})
        if others:
            out["wrong_input"] = bind(trajectory, {**binding, slot: others[0]})
    out["wrong_output"] = bind(trajectory, {**binding, "dst": binding["dst"] + ".other"})
    twins = [
        a
        for a, spec in desktop["apps"].items()
        if a != candidate["app"] and candidate["effect"] in spec["effects"]
    ]
    if twins:  # the same job in another app: only an app-aware check rejects it
        twin = twins[0]
        out["wrong_app"] = bind(
            gold_trajectory(desktop["apps"][twin], twin, candidate["effect"]), binding
        )
    else:  # the same clicks in another app's window: nothing there to click
        other = next(a for a in desktop["apps"] if a != candidate["app"])
        out["wrong_app"] = [{"api": "click_input", "label": LAUNCH + other}, *bound[1:]]
    return out


def cross_verify(
    desktop: dict, candidate: dict, trajectory: list[dict], checks: list[dict], bindings: list[dict]
) -> tuple[bool, str]:
    """The evaluation passes on the gold replay and fails on every negative, for each binding."""
    for binding in bindings:
        sim = replay(desktop, bind(trajectory, binding))
        ok, message = run_evaluation(sim, bind(checks, binding))
        if not ok:
            return False, f"gold replay rejected: {message}"
        for name, actions in negatives(desktop, candidate, binding, trajectory).items():
            if run_evaluation(replay(desktop, actions), bind(checks, binding))[0]:
                return False, f"negative {name} accepted"
    return True, "verified"


def synthesize(
    desktop: dict,
    candidate: dict,
    max_iters: int,
    fault_rate: float,
    rng: np.random.Generator,
    n_bindings: int = 2,
) -> dict[str, Any]:
    """Generate, cross-verify, regenerate (at most ``max_iters`` tries); the record says what happened."""
    app_spec = desktop["apps"][candidate["app"]]
    bindings = candidate["available_parameters"][:n_bindings]
    log = []
    for iteration in range(max_iters):
        trajectory = gold_trajectory(app_spec, candidate["app"], candidate["effect"])
        checks = evaluation_function(app_spec, candidate["app"], candidate["effect"])
        fault = None
        if rng.random() < fault_rate:
            fault, trajectory, checks = inject_fault(trajectory, checks, rng)
        ok, reason = cross_verify(desktop, candidate, trajectory, checks, bindings)
        log.append({"iteration": iteration, "fault": fault, "verified": ok, "reason": reason})
        if ok:
            status = "verified" if iteration == 0 else "fixed"
            return {
                **candidate,
                "status": status,
                "trajectory": trajectory,
                "evaluation": checks,
                "log": log,
            }
    return {**candidate, "status": "discarded", "trajectory": None, "evaluation": None, "log": log}


def synthesis_report(records: list[dict]) -> dict[str, Any]:
    """Counts of kept / fixed / discarded candidates and of injected faults caught (spec check 1)."""
    attempts = [entry for r in records for entry in r["log"]]
    injected = [a for a in attempts if a["fault"]]
    caught = [a for a in injected if not a["verified"]]
    clean_rejected = [a for a in attempts if not a["fault"] and not a["verified"]]
    n = len(records)
    status = [r["status"] for r in records]
    return {
        "n_candidates": n,
        "n_verified_first_try": status.count("verified"),
        "n_fixed": status.count("fixed"),
        "n_discarded": status.count("discarded"),
        "verified_subtask_rate": (n - status.count("discarded")) / n if n else float("nan"),
        "faults_injected": len(injected),
        "faults_caught": len(caught),
        "fault_catch_rate": len(caught) / len(injected) if injected else float("nan"),
        "uncaught_faults": [a["fault"] for a in injected if a["verified"]],
        "clean_attempts_rejected": len(clean_rejected),
    }


def gold_check_rates(desktop: dict, gold: list[dict]) -> dict[str, float]:
    """Re-check every kept subtask on all its bindings: gold replay passes, every negative fails."""
    passes = rejects = total_neg = 0
    n = 0
    for subtask in gold:
        for binding in subtask["available_parameters"]:
            n += 1
            sim = replay(desktop, bind(subtask["trajectory"], binding))
            passes += run_evaluation(sim, bind(subtask["evaluation"], binding))[0]
            for actions in negatives(desktop, subtask, binding, subtask["trajectory"]).values():
                total_neg += 1
                rejects += not run_evaluation(
                    replay(desktop, actions), bind(subtask["evaluation"], binding)
                )[0]
    return {
        "gold_replay_pass_rate": passes / n if n else float("nan"),
        "negative_rejection_rate": rejects / total_neg if total_neg else float("nan"),
    }


def fresh_sim(desktop: dict) -> OmniSim:
    return OmniSim(desktop)
