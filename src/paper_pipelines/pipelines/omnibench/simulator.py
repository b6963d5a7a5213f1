"""OmniSim: the deterministic symbolic desktop that stands in for the paper's Windows 11 VM.

State: a file system {path: {type, content}}, the current app and screen, each app's dialog form, a
clipboard and an event log of clicks, typed text and key presses, which is what the released
evaluation functions read. Actions use the official API names (``click_input``, ``set_edit_text``,
``keyboard_input``, ``wheel_mouse_input``); the check functions mirror the official ones
(``check_mouse_clicks``, ``check_keyboard_types``, ``check_file_exists``, ``check_text_exists``).
Evaluations are declarative lists of checks, never executed code.
"""

from __future__ import annotations

from typing import Any

LAUNCH = "launch:"
CHECK_KINDS = (
    "check_mouse_clicks",
    "check_keyboard_types",
    "check_file_exists",
    "check_text_exists",
)


def effect_content(effect: str, inputs: list[str]) -> str:
    """What an effect writes: its name and the paths it read, so a check can tell a mis-bound run."""
    return f"{effect}<{','.join(inputs)}>"


class OmniSim:
    """One episode of the desktop; ``act`` applies an action dict and returns whether it was valid."""

    def __init__(self, desktop: dict):
        self.apps: dict = desktop["apps"]
        self.files: dict[str, dict] = {
            f["path"]: {"type": f["type"], "content": f"original<{f['path']}>"}
            for f in desktop["files"]
        }
        self.app: str | None = None
        self.screen: str | None = None
        self.forms: dict[str, dict[str, str]] = {}
        self.focus: str | None = None
        self.clipboard = ""
        self.events: list[tuple[str, str | None, str]] = []  # (kind, app, text)
        self.clicks: set[tuple[str | None, str]] = set()
        self.typed: set[str] = set()
        self.steps = 0

    # ------------------------------------------------------------------ observation
    def controls(self) -> list[dict]:
        """The a11y list: taskbar launchers, then the current screen's controls (label, text, type)."""
        taskbar = [
            {"label": LAUNCH + name, "text": spec["title"], "type": "TaskbarButton"}
            for name, spec in self.apps.items()
        ]
        if self.app is None:
            return taskbar
        screen = self.apps[self.app]["screens"][self.screen]
        return taskbar + [{k: c[k] for k in ("label", "text", "type") if k in c} for c in screen]

    def observation(self) -> dict[str, Any]:
        """What an agent sees: the app, the screen, the a11y control list and the file listing."""
        return {
            "app": self.app,
            "screen": self.screen,
            "a11y": self.controls(),
            "files": sorted(self.files),
            "form": dict(self.forms.get(self.app, {})) if self.app else {},
        }

    def _control(self, label: str) -> dict | None:
        if self.app is None:
            return None
        return next(
            (c for c in self.apps[self.app]["screens"][self.screen] if c["label"] == label), None
        )

    # ------------------------------------------------------------------ actions
    def act(self, action: dict) -> bool:
        """Apply one action; an action on a control that is not on screen is logged and ignored."""
        self.steps += 1
        api = action.get("api")
        if api == "click_input":
            return self._click(action["label"])
        if api == "set_edit_text":
            return self._type(action["label"], str(action.get("text", "")))
        if api == "keyboard_input":
            return self._keys(str(action.get("keys", "")))
        if api == "wheel_mouse_input":
            self.events.append(("scroll", self.app, str(action.get("label", ""))))
            return self._control(action.get("label", "")) is not None
        self.events.append(("invalid", self.app, str(api)))
        return False

    def _click(self, label: str) -> bool:
        if label.startswith(LAUNCH) and label[len(LAUNCH) :] in self.apps:
            self.app = label[len(LAUNCH) :]
            self.screen = self.apps[self.app]["home"]
            self.focus = None
            self._log_click(self.apps[self.app]["title"])
            return True
        control = self._control(label)
        if control is None:
            self.events.append(("invalid", self.app, label))
            return False
        self._log_click(control["text"])
        if control.get("type") == "Edit":
            self.focus = control["slot"]
        if "goto" in control:
            self.screen = control["goto"]
            self.focus = None
        if "effect" in control:
            return self._apply(control["effect"])
        return True

    def _log_click(self, text: str) -> None:
        self.events.append(("click", self.app, text))
        self.clicks.add((self.app, text))

    def _type(self, label: str, text: str) -> bool:
        control = self._control(label)
        if control is None or control.get("type") != "Edit":
            self.events.append(("invalid", self.app, label))
            return False
        self.forms.setdefault(self.app, {})[control["slot"]] = text
        self.focus = control["slot"]
        self.events.append(("type", self.app, text))
        self.typed.add(text)
        return True

    def _keys(self, keys: str) -> bool:
        self.events.append(("keys", self.app, keys))
        self.typed.add(keys)
        if self.app is None:
            return False
        form = self.forms.setdefault(self.app, {})
        if keys == "{ESC}":
            self.screen, self.focus = self.apps[self.app]["home"], None
        elif keys == "^c" and self.focus:
            self.clipboard = form.get(self.focus, "")
        elif keys == "^v" and self.focus:
            form[self.focus] = self.clipboard
        return True

    def _apply(self, effect: str) -> bool:
        """Run an effect with the form's values: typed inputs must exist, dst must be given."""
        spec = self.apps[self.app]["effects"][effect]
        form = self.forms.get(self.app, {})
        inputs = [form.get(slot, "") for slot in spec["inputs"]]
        ok = all(
            path in self.files and self.files[path]["type"] == kind
            for path, kind in zip(inputs, spec["inputs"].values(), strict=True)
        )
        dst = form.get("dst", "")
        if not ok or not dst:
            self.events.append(("error", self.app, effect))
            return False
        self.files[dst] = {"type": spec["output"], "content": effect_content(effect, inputs)}
        self.forms[self.app] = {}
        self.screen, self.focus = self.apps[self.app]["home"], None
        return True

    # ------------------------------------------------------------------ official check functions
    def check_mouse_clicks(self, text: str, app: str | None = None) -> bool:
        """A control with this text was clicked (in ``app`` when given)."""
        if app is None:
            return any(t == text for _, t in self.clicks)
        return (app, text) in self.clicks

    def check_keyboard_types(self, text: str) -> bool:
        return text in self.typed

    def check_file_exists(self, file_path: str) -> bool:
        return file_path in self.files

    def check_text_exists(self, text: str) -> bool:
        """The text is in a document on the desktop or on a control on screen (OCR / a11y analogue)."""
        if any(text in f["content"] for f in self.files.values()):
            return True
        return any(text in c.get("text", "") for c in self.controls())


def run_evaluation(sim: OmniSim, checks: list[dict]) -> tuple[bool, str]:
    """An evaluation function: every check must hold; returns (success, message) like the official ones."""
    if not checks:
        return False, "empty evaluation"
    for check in checks:
        kind = check["check"]
        if kind not in CHECK_KINDS:
            return False, f"unknown check {kind}"
        if not getattr(sim, kind)(**check["args"]):
            return False, f"{kind}({check['args']}) failed"
    return True, "all checks passed"


def replay(desktop: dict, actions: list[dict], sim: OmniSim | None = None) -> OmniSim:
    """A fresh desktop (or ``sim``) after ``actions``."""
    sim = sim or OmniSim(desktop)
    for action in actions:
        sim.act(action)
    return sim
