"""The learned planner (training analogue of the paper's Sec. 5 study): which earlier result does a
clause's reference point to, i.e. the dependency edge into the next subtask.

A logistic regression scores (reference, earlier clause) pairs from structural features; it is trained
on synthesized graph-structured tasks or on chain-only tasks (width 1) and tested on held-out branched
tasks of held-out app categories, executed in the simulator. The paper fine-tunes an MLLM on graph
trajectories; the question kept is whether graph-structured training data transfers better than chains.
"""

from __future__ import annotations

import numpy as np
from sklearn.linear_model import LogisticRegression

from .taskgraph import PREVIOUS

FEATURES = (
    "is_previous",
    "inverse_distance",
    "type_match",
    "latest_of_type",
    "previous_phrase_x_is_previous",
    "earlier_phrase_x_is_previous",
    "earlier_phrase_x_type_match",
)


def pair_features(mention: str, kind: str, earlier: list[tuple[str, str]]) -> np.ndarray:
    """One row per earlier clause output (path, type): the features of FEATURES, shape (len(earlier), 7)."""
    j = len(earlier)
    previous_phrase = float(mention == PREVIOUS)
    latest = max((i for i, (_, t) in enumerate(earlier) if t == kind), default=-1)
    rows = []
    for i, (_, t) in enumerate(earlier):
        is_prev = float(i == j - 1)
        match = float(t == kind)
        rows.append(
            [
                is_prev,
                1.0 / (j - i),
                match,
                float(i == latest),
                previous_phrase * is_prev,
                (1 - previous_phrase) * is_prev,
                (1 - previous_phrase) * match,
            ]
        )
    return np.array(rows, dtype=float).reshape(-1, len(FEATURES))


def reference_examples(
    tasks: list[dict], gold_by_id: dict[str, dict]
) -> tuple[np.ndarray, np.ndarray]:
    """Supervised pairs from composed tasks: for every input that is an earlier node's output, the
    features of each earlier node as candidate, labelled 1 for the true producer."""
    xs, ys = [], []
    for task in tasks:
        outputs = [n["output"] for n in task["nodes"]]
        kinds = [gold_by_id[n["subtask"]]["output_resources"]["dst"] for n in task["nodes"]]
        for j, node in enumerate(task["nodes"]):
            subtask = gold_by_id[node["subtask"]]
            for slot, kind in subtask["input_resources"].items():
                path = node["params"][slot]
                if path not in outputs[:j]:
                    continue
                i = outputs.index(path)
                mention = PREVIOUS if i == j - 1 else "earlier"
                earlier = list(zip(outputs[:j], kinds[:j], strict=True))
                xs.append(pair_features(mention, kind, earlier))
                ys.append((np.arange(j) == i).astype(int))
    if not xs:
        return np.zeros((0, len(FEATURES))), np.zeros(0, dtype=int)
    return np.vstack(xs), np.concatenate(ys)


def fit_resolver(x: np.ndarray, y: np.ndarray, c: float) -> LogisticRegression | None:
    """Logistic regression on the pairs (None when the data holds a single class)."""
    if len(np.unique(y)) < 2:
        return None
    return LogisticRegression(C=c, max_iter=1000).fit(x, y)


class LearnedResolver:
    """Resolve a reference to the earlier output the model scores highest (untrained: the latest
    output of the needed type, else the latest)."""

    def __init__(self, model: LogisticRegression | None):
        self.model = model

    def __call__(self, mention: str, kind: str, earlier: list[tuple[str, str]]) -> str | None:
        if not earlier:
            return None
        if self.model is None:
            typed = [p for p, t in earlier if t == kind]
            return (typed or [earlier[-1][0]])[-1]
        scores = self.model.decision_function(pair_features(mention, kind, earlier))
        return earlier[int(np.argmax(scores))][0]
