"""OmniEval (paper Sec. 4 and the released evaluator): subtask-level evaluation and graph metrics.

The state machine: a subtask is Waiting, Evaluating or Completed; sources start Evaluating; after every
agent action each Evaluating subtask's evaluation runs (in node order) and on success it is Completed,
appended to the executed order, and each successor whose predecessors are all Completed becomes
Evaluating (so a successor later in the node order can complete in the same step, as in the released
code). The episode stops on FINISH ("Success" iff every subtask is Completed), after ``max_steps``
actions, or after ``wait_limit`` actions without a new Completed subtask.

The graph metrics live in :mod:`.metrics` (re-exported here).
"""

from __future__ import annotations

from .metrics import (
    coherence,
    completed_levels,
    completed_levels_code_compat,
    completion,
    completion_code_compat,
    longest_same_app_run,
    max_run_order,
    max_same_app_run,
    score_episode,
)
from .simulator import OmniSim, run_evaluation

__all__ = [
    "COMPLETED",
    "EVALUATING",
    "WAITING",
    "OmniEvaluator",
    "coherence",
    "completed_levels",
    "completed_levels_code_compat",
    "completion",
    "completion_code_compat",
    "longest_same_app_run",
    "max_run_order",
    "max_same_app_run",
    "score_episode",
]

WAITING, EVALUATING, COMPLETED = "Waiting", "Evaluating", "Completed"


class OmniEvaluator:
    """The released Evaluator's loop for one task: call :meth:`step` after every agent action."""

    def __init__(
        self,
        nodes: list[str],
        edges: list,
        checks: dict[str, list[dict]],
        max_steps: int,
        wait_limit: int,
    ):
        self.nodes = list(nodes)
        self.edges = [tuple(e) for e in edges]
        self.checks = checks
        self.max_steps, self.wait_limit = max_steps, wait_limit
        self.predecessors = {n: [u for u, v in self.edges if v == n] for n in self.nodes}
        self.successors = {n: [v for u, v in self.edges if u == n] for n in self.nodes}
        self.status = {n: EVALUATING if not self.predecessors[n] else WAITING for n in self.nodes}
        self.executed: list[str] = []
        self.step_count = 0
        self.wait_step = 0
        self.outcome = "running"

    def _complete(self, node: str) -> None:
        self.status[node] = COMPLETED
        self.executed.append(node)
        for succ in self.successors[node]:
            if all(self.status[p] == COMPLETED for p in self.predecessors[succ]):
                self.status[succ] = EVALUATING

    def step(self, sim: OmniSim, finished: bool) -> str:
        """One evaluation step after an action; returns the outcome ("running" until it stops)."""
        self.step_count += 1
        self.wait_step += 1
        if self.step_count > self.max_steps:
            self.outcome = "Fail (exceeded max steps)"
            return self.outcome
        if self.wait_step > self.wait_limit:
            self.outcome = "Fail (waited too long)"
            return self.outcome
        for node in self.nodes:  # node order; a successor released here is checked in this pass
            if self.status[node] == EVALUATING and run_evaluation(sim, self.checks[node])[0]:
                self._complete(node)
                self.wait_step = 0
        if finished:
            self.outcome = "Success" if self.all_completed() else "Fail (finished early)"
        return self.outcome

    def all_completed(self) -> bool:
        return all(s == COMPLETED for s in self.status.values())
