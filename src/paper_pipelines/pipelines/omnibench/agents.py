"""Agents and the episode loop: scripted stand-ins for the paper's MLLM agents, behind one protocol.

An agent gets the task instruction (and, for the privileged oracles, the task graph) at ``reset`` and
then one observation dict per step (the app, the a11y control list, the file listing), answering an
action dict in the official API names or ``{"api": "FINISH"}``. A Hugging Face model plugs in by
implementing the same two methods (:class:`LMAgent` renders the observation as a prompt and parses the
reply).
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import numpy as np

from .omnieval import OmniEvaluator, max_run_order
from .simulator import OmniSim
from .synthesis import bind
from .taskgraph import PREVIOUS

FINISH = {"api": "FINISH"}
MENTION = re.compile(r"Desktop/[\w/\-]+\.\w+|the previous result|the \w+ from an earlier step")


class Agent(Protocol):
    name: str

    def reset(self, instruction: str, task: dict | None) -> None: ...

    def act(self, observation: dict[str, Any]) -> dict[str, Any]: ...


def random_action(observation: dict, rng: np.random.Generator) -> dict:
    """A uniformly random valid UI action on what is on screen (typing a visible file name or junk)."""
    controls = observation["a11y"]
    control = controls[int(rng.integers(len(controls)))]
    if control["type"] == "Edit":
        files = observation["files"]
        text = (
            files[int(rng.integers(len(files)))]
            if rng.random() < 0.5
            else f"Desktop/out/r{int(rng.integers(100))}.txt"
        )
        return {"api": "set_edit_text", "label": control["label"], "text": text}
    if rng.random() < 0.05:
        return {"api": "keyboard_input", "keys": "{ESC}"}
    return {"api": "click_input", "label": control["label"]}


class RandomAgent:
    """The floor: a random valid action every step, never FINISH (the stop rules end it)."""

    name = "random"

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def reset(self, instruction: str, task: dict | None) -> None:
        pass

    def act(self, observation: dict) -> dict:
        return random_action(observation, self.rng)


class ScriptedAgent:
    """Executes a plan (a list of actions) open loop, then FINISH; each action is replaced by a random
    one with probability ``noise_p`` (the noisy oracle's skill knob)."""

    def __init__(self, name: str, noise_p: float, rng: np.random.Generator):
        self.name, self.noise_p, self.rng = name, noise_p, rng
        self.plan: list[dict] = []

    def act(self, observation: dict) -> dict:
        if not self.plan:
            return FINISH
        action = self.plan.pop(0)
        if self.noise_p and self.rng.random() < self.noise_p:
            return random_action(observation, self.rng)
        return action


def plan_actions(task: dict, order: list[str], gold_by_id: dict[str, dict]) -> list[dict]:
    """The gold trajectories of the nodes in ``order``, each bound to its parameters."""
    by_id = {n["id"]: n for n in task["nodes"]}
    actions = []
    for node_id in order:
        node = by_id[node_id]
        actions += bind(gold_by_id[node["subtask"]]["trajectory"], node["params"])
    return actions


def contiguous_order(task: dict) -> list[str]:
    """A topological order whose longest same-app run is L_max (the oracle's ceiling: coherence 1)."""
    ids = [n["id"] for n in task["nodes"]]
    return max_run_order(ids, task["edges"], {n["id"]: n["app"] for n in task["nodes"]})[1]


def random_topological_order(task: dict, rng: np.random.Generator) -> list[str]:
    """Kahn's algorithm with a uniformly random ready node at each step."""
    ids = [n["id"] for n in task["nodes"]]
    preds = {i: {u for u, v in task["edges"] if v == i} for i in ids}
    placed: list[str] = []
    while len(placed) < len(ids):
        ready = [i for i in ids if i not in placed and preds[i] <= set(placed)]
        placed.append(ready[int(rng.integers(len(ready)))])
    return placed


class OracleAgent(ScriptedAgent):
    """Knows the graph and the gold trajectories; ``order`` = contiguous (L_max) or random topological."""

    def __init__(self, name: str, gold_by_id: dict, order: str, noise_p: float, rng):
        super().__init__(name, noise_p, rng)
        self.gold_by_id, self.order = gold_by_id, order

    def reset(self, instruction: str, task: dict | None) -> None:
        order = (
            contiguous_order(task)
            if self.order == "contiguous"
            else random_topological_order(task, self.rng)
        )
        self.plan = plan_actions(task, order, self.gold_by_id)


# ---------------------------------------------------------------- instruction-only planners
def split_clauses(instruction: str) -> list[str]:
    return [c.strip().rstrip(".") for c in instruction.split(". Then ") if c.strip()]


def mentions(clause: str) -> list[str]:
    """File paths and references to intermediate results, in order of appearance."""
    return MENTION.findall(clause)


def strip_mentions(clause: str) -> str:
    return MENTION.sub(" ", clause)


class Retriever:
    """Subtask retrieval from the gold library by text similarity (TF-IDF, or MiniLM embeddings).

    A clause is compared with the library's instructions with its file mentions removed; scores are
    cached per stripped clause, which repeats across tasks.
    """

    def __init__(self, library: list[dict], kind: str = "tfidf"):
        self.library, self.kind = library, kind
        texts = [
            strip_mentions(bind(g["instruction_template"], {s: "" for s in g["slots"]}))
            for g in library
        ]
        self.cache: dict[str, int] = {}
        if kind == "tfidf":
            from sklearn.feature_extraction.text import TfidfVectorizer

            self.vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True)
            self.matrix = self.vectorizer.fit_transform(texts)
        else:
            from paper_pipelines.common.offline_models import load_minilm

            self.encoder = load_minilm()
            self.matrix = self._embed(texts)

    def _embed(self, texts: list[str]) -> np.ndarray:
        """all-MiniLM-L6-v2 sentence vectors (mask-weighted mean of token states, L2-normalised)."""
        import torch

        from paper_pipelines.common.offline_models import mean_pool

        model, tokenizer = self.encoder
        with torch.no_grad():
            batch = tokenizer(texts, padding=True, truncation=True, return_tensors="pt")
            out = model(**batch)
        return mean_pool(out.last_hidden_state, batch["attention_mask"]).numpy()

    def __call__(self, clause: str) -> dict:
        text = strip_mentions(clause)
        if text not in self.cache:
            if self.kind == "tfidf":
                scores = (self.vectorizer.transform([text]) @ self.matrix.T).toarray()[0]
            else:
                scores = self.matrix @ self._embed([text])[0]
            self.cache[text] = int(np.argmax(scores))
        return self.library[self.cache[text]]


def resolve_rule(mention: str, kind: str, earlier: list[tuple[str, str]]) -> str | None:
    """Rule resolver: "the previous result" -> the last output; "the T from ..." -> the last output of T."""
    if not earlier:
        return None
    if mention == PREVIOUS:
        return earlier[-1][0]
    typed = [p for p, t in earlier if t == kind]
    return typed[-1] if typed else None


def parse_plan(instruction: str, retrieve, resolver) -> list[tuple[dict, dict[str, str]]]:
    """Instruction -> [(subtask, params)]: retrieve each clause's subtask, map mentions to its slots in
    order, resolve references to earlier results with ``resolver(mention, slot_type, earlier, clause)``."""
    plan = []
    earlier: list[tuple[str, str]] = []  # (output path, type) of the clauses so far
    for clause in split_clauses(instruction):
        subtask = retrieve(clause)
        found = mentions(clause)
        if len(found) != len(subtask["slots"]):
            continue  # the retrieved subtask does not fit the clause: skip it
        params = {}
        for slot, mention in zip(subtask["slots"], found, strict=True):
            if mention.startswith("Desktop/"):
                params[slot] = mention
            else:
                kind = subtask["input_resources"].get(slot, "")
                params[slot] = resolver(mention, kind, earlier) or ""
        plan.append((subtask, params))
        earlier.append((params.get("dst", ""), subtask["output_resources"]["dst"]))
    return plan


class PlannerAgent(ScriptedAgent):
    """Sees only the instruction: retrieves subtasks, resolves references, runs their gold trajectories."""

    def __init__(self, name: str, retrieve, resolver, noise_p: float, rng):
        super().__init__(name, noise_p, rng)
        self.retrieve, self.resolver = retrieve, resolver

    def reset(self, instruction: str, task: dict | None) -> None:
        self.plan = []
        for subtask, params in parse_plan(instruction, self.retrieve, self.resolver):
            self.plan += bind(subtask["trajectory"], params)


class LMAgent:
    """A causal LM (Hugging Face) as an agent: the observation rendered as a prompt, the reply parsed."""

    name = "lm_agent"

    def __init__(self, generate):
        self.generate = generate  # callable prompt -> text (a user's model, e.g. via transformers)
        self.instruction = ""

    def reset(self, instruction: str, task: dict | None) -> None:
        self.instruction = instruction

    def act(self, observation: dict) -> dict:
        return parse_action(self.generate(render_prompt(self.instruction, observation)))


def lm_generator(lm, max_new_tokens: int, system_prompt: str | None, device: str):
    """prompt -> reply of a causal LM (``common.lm.CausalLM``): chat template, greedy, one prompt a step."""
    from paper_pipelines.common.generation import (
        generate_batched,
        place_model,
        prepare_for_generation,
    )

    model = place_model(lm.model, device)
    tok = prepare_for_generation(lm.tokenizer)

    def generate(prompt: str) -> str:
        reply = generate_batched(model, tok, [prompt], max_new_tokens, 1, True, system_prompt)
        return reply[0]["response"]

    return generate


def render_prompt(instruction: str, observation: dict) -> str:
    """The screen_a11y prompt's content: the task, the app, the control list, the visible files."""
    lines = [f"Task: {instruction}", f"Current app: {observation['app']}", "Controls:"]
    lines += [f"- [{c['label']}] {c['text']} ({c['type']})" for c in observation["a11y"]]
    lines += [
        "Files: " + ", ".join(observation["files"]),
        "Answer with one action, e.g. click_input(label) or set_edit_text(label, text) or FINISH.",
    ]
    return "\n".join(lines)


_ACTION = re.compile(
    r"(click_input|set_edit_text|keyboard_input)\(\s*([^,)]+)\s*(?:,\s*([^)]*))?\)"
)


def parse_action(text: str) -> dict:
    """``click_input(label)`` / ``set_edit_text(label, text)`` / ``keyboard_input(keys)`` / FINISH."""
    match = _ACTION.search(text)
    if match is None:
        return FINISH
    api, first, second = match.group(1), match.group(2).strip().strip("'\""), match.group(3)
    if api == "click_input":
        return {"api": api, "label": first}
    if api == "keyboard_input":
        return {"api": api, "keys": first}
    return {"api": api, "label": first, "text": (second or "").strip().strip("'\"")}


# ---------------------------------------------------------------- the episode loop
def run_episode(
    agent: Agent,
    task: dict,
    desktop: dict,
    checks: dict[str, list[dict]],
    max_steps: int,
    wait_limit: int,
) -> dict[str, Any]:
    """One task: agent acts, the simulator applies, OmniEval checks after every action."""
    sim = OmniSim(desktop)
    evaluator = OmniEvaluator(
        [n["id"] for n in task["nodes"]], task["edges"], checks, max_steps, wait_limit
    )
    agent.reset(task["instruction"], task)
    actions = []
    while True:
        action = agent.act(sim.observation())
        finished = action.get("api") == "FINISH"
        if not finished:
            sim.act(action)
        actions.append(action)
        if evaluator.step(sim, finished) != "running":
            break
    return {
        "task_id": task["task_id"],
        "agent": agent.name,
        "outcome": evaluator.outcome,
        "executed": evaluator.executed,
        "steps": len(actions),
        "actions": actions,
    }
