"""Subtask discovery (paper process 1): explore each app's UI graph and abstract what changed state.

The paper's explorer is an MLLM clicking through a Windows VM, guided by app documentation; ours is a
random walker over the simulator's screens that fills Edit controls guided by their text (an input
hint "(image)" -> an existing desktop file of that type, "Save as" -> a fresh path) and records every
episode whose last click created a file. The literal values it typed become parameter slots, the types
of the files read and written its input and output resources, and the app's documentation (the
effect's instruction in apps.yml) the instruction template.
"""

from __future__ import annotations

import re
from itertools import product

import numpy as np

from .simulator import LAUNCH, OmniSim

EXTENSIONS = {
    "image": "png",
    "document": "docx",
    "pdf": "pdf",
    "spreadsheet": "xlsx",
    "text": "txt",
    "audio": "mp3",
    "video": "mp4",
    "code": "py",
    "archive": "zip",
    "message": "eml",
}
_HINT = re.compile(r"\((\w+)\)")


def template_slots(template: str) -> list[str]:
    """The {slot} placeholders of an instruction template, in order of appearance."""
    return re.findall(r"\{(\w+)\}", template)


def fresh_path(tag: str, kind: str) -> str:
    """A new file name on the desktop for an output resource of ``kind``."""
    return f"Desktop/out/{tag}.{EXTENSIONS.get(kind, 'dat')}"


def explore_app(
    desktop: dict, app: str, episodes: int, max_depth: int, rng: np.random.Generator
) -> dict[str, dict]:
    """Random-walk episodes from the app's home; {effect: first observed (trigger, literals, path)}."""
    found: dict[str, dict] = {}
    by_type: dict[str, list[str]] = {}
    for f in desktop["files"]:
        by_type.setdefault(f["type"], []).append(f["path"])
    for episode in range(episodes):
        sim = OmniSim(desktop)
        path = [{"api": "click_input", "label": LAUNCH + app}]
        sim.act(path[0])
        for _ in range(max_depth):
            screen = desktop["apps"][app]["screens"][sim.screen]
            form = sim.forms.get(app, {})
            empty = [c for c in screen if c["type"] == "Edit" and c["slot"] not in form]
            if empty:
                control = empty[int(rng.integers(len(empty)))]
                hint = _HINT.search(control["text"])
                kind = hint.group(1) if hint else "text"
                if control["text"].startswith("Save as") or kind not in by_type:
                    literal = fresh_path(f"explore_{app}_{episode}", kind)
                else:
                    literal = by_type[kind][int(rng.integers(len(by_type[kind])))]
                action = {"api": "set_edit_text", "label": control["label"], "text": literal}
            else:
                clickable = [c for c in screen if c["type"] != "Edit"]
                control = clickable[int(rng.integers(len(clickable)))]
                action = {"api": "click_input", "label": control["label"]}
            before = set(sim.files)
            sim.act(action)
            path.append(action)
            new = set(sim.files) - before
            if new and "effect" in control and control["effect"] not in found:
                literals = {c["slot"]: form[c["slot"]] for c in screen if c["type"] == "Edit"}
                found[control["effect"]] = {
                    "trigger": control["label"],
                    "literals": literals,
                    "created": sim.files[next(iter(new))]["type"],
                    "path": path,
                }
            if new:
                break
    return found


def abstract_subtask(desktop: dict, app: str, effect: str, observed: dict | None) -> dict:
    """A candidate subtask: literals -> slots, file types -> input/output resources, docs -> template."""
    spec = desktop["apps"][app]["effects"][effect]
    files = {f["path"]: f["type"] for f in desktop["files"]}
    if observed is not None:  # explored: resources are what the episode read and wrote
        inputs = {s: files[v] for s, v in observed["literals"].items() if s != "dst" and v in files}
        output = observed["created"]
    else:  # enumerated from the documentation
        inputs, output = dict(spec["inputs"]), spec["output"]
    return {
        "id": f"{app}.{effect}",
        "app": app,
        "category": desktop["apps"][app]["category"],
        "effect": effect,
        "instruction_template": spec["instruction"],
        "phrasings": list(spec.get("phrasings", [])),
        "slots": template_slots(spec["instruction"]),
        "input_resources": inputs,
        "output_resources": {"dst": output},
        "observed_path": observed["path"] if observed else None,
    }


def available_parameters(desktop: dict, candidate: dict, max_bindings: int) -> list[dict]:
    """Bindings of the slots that give similar trajectories: desktop files of each input's type."""
    by_type: dict[str, list[str]] = {}
    for f in desktop["files"]:
        by_type.setdefault(f["type"], []).append(f["path"])
    slots = list(candidate["input_resources"])
    choices = [by_type.get(candidate["input_resources"][s], []) for s in slots]
    bindings = []
    for k, values in enumerate(product(*choices)):
        if k >= max_bindings:
            break
        binding = dict(zip(slots, values, strict=True))
        binding["dst"] = fresh_path(
            f"{candidate['id'].replace('.', '_')}_{k}", candidate["output_resources"]["dst"]
        )
        bindings.append(binding)
    return bindings


def discover_subtasks(
    desktop: dict, mode: str, episodes: int, max_depth: int, max_bindings: int, rng
) -> list[dict]:
    """Every candidate subtask of every app, by exploration or by enumerating the documentation."""
    candidates = []
    for app in desktop["apps"]:
        if mode == "explore":
            found = explore_app(desktop, app, episodes, max_depth, rng)
            pairs = [(effect, found[effect]) for effect in sorted(found)]
        else:
            pairs = [(effect, None) for effect in desktop["apps"][app]["effects"]]
        for effect, observed in pairs:
            candidate = abstract_subtask(desktop, app, effect, observed)
            candidate["available_parameters"] = available_parameters(
                desktop, candidate, max_bindings
            )
            candidates.append(candidate)
    return candidates
