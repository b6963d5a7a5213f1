"""OmniEval's graph metrics (paper Sec. 4, the released evaluator's completion and coherence), pure.

Completion: fully completed depth levels from the top, over the depth. The released
``get_completed_levels`` checks levels 0..depth-1 while depths start at 1, so the deepest level is never
checked; :func:`completion_code_compat` keeps that value as a separate field. Coherence:
(L_exec - 1) / (L_max - 1), L = the longest run of same-app subtasks, L_max over all topological orders.
"""

from __future__ import annotations

from functools import cache

from .taskgraph import node_depths


def completed_levels(depths: dict[str, int], completed: set[str]) -> int:
    """Fully completed depth levels counted from the top (level 1) up to the first unfinished one."""
    depth = max(depths.values(), default=0)
    for level in range(1, depth + 1):
        if any(d == level and n not in completed for n, d in depths.items()):
            return level - 1
    return depth


def completion(depths: dict[str, int], completed: set[str]) -> float:
    """Coverage rate: completed levels / depth (0 for an empty graph)."""
    depth = max(depths.values(), default=0)
    return completed_levels(depths, completed) / depth if depth else 0.0


def completed_levels_code_compat(depths: dict[str, int], completed: set[str]) -> int:
    """The released get_completed_levels: levels 0..depth-1 (level 0 is empty, the deepest never checked)."""
    depth = max(depths.values(), default=0)
    for level in range(depth):
        if any(d == level and n not in completed for n, d in depths.items()):
            return level - 1
    return depth


def completion_code_compat(depths: dict[str, int], completed: set[str]) -> float:
    depth = max(depths.values(), default=0)
    return completed_levels_code_compat(depths, completed) / depth if depth else 0.0


def longest_same_app_run(apps: list[str]) -> int:
    """L(seq): longest run of consecutive subtasks of one application (0 for an empty sequence)."""
    best = run = 0
    for k, app in enumerate(apps):
        run = run + 1 if k and app == apps[k - 1] else 1
        best = max(best, run)
    return best


def max_same_app_run(nodes: list[str], edges: list, app_of: dict[str, str]) -> int:
    """L_max: the longest same-app run over ALL topological orders (exact, by search over downsets).

    Equal to enumerating every topological order as the released code does, without the factorial
    cost: a state is (placed nodes, the last node, length of the current run).
    """
    return max_run_order(nodes, edges, app_of)[0]


def max_run_order(nodes: list[str], edges: list, app_of: dict[str, str]) -> tuple[int, list[str]]:
    """(L_max, a topological order whose longest same-app run is L_max)."""
    if not nodes:
        return 0, []
    index = {n: i for i, n in enumerate(nodes)}
    pred_mask = [0] * len(nodes)
    for u, v in edges:
        pred_mask[index[v]] |= 1 << index[u]
    full = (1 << len(nodes)) - 1

    def ready(placed: int) -> list[int]:
        return [
            i
            for i in range(len(nodes))
            if not placed >> i & 1 and pred_mask[i] & placed == pred_mask[i]
        ]

    def run_after(last: int, run: int, i: int) -> int:
        return run + 1 if last >= 0 and app_of[nodes[i]] == app_of[nodes[last]] else 1

    @cache
    def best(placed: int, last: int, run: int) -> int:
        if placed == full:
            return run
        return max(
            max(run, best(placed | 1 << i, i, run_after(last, run, i))) for i in ready(placed)
        )

    target = best(0, -1, 0)
    # follow a child that keeps the best run reachable: max(longest so far, best from here) = target
    order, placed, last, run, so_far = [], 0, -1, 0, 0
    while placed != full:
        for i in ready(placed):
            nxt = run_after(last, run, i)
            if max(so_far, best(placed | 1 << i, i, nxt)) == target:
                order.append(nodes[i])
                placed, last, run, so_far = placed | 1 << i, i, nxt, max(so_far, nxt)
                break
    return target, order


def coherence(executed_apps: list[str], lmax: int) -> float:
    """Logical consistency: (L_exec - 1) / (L_max - 1), 0 when L_max <= 1 or nothing was executed."""
    if lmax <= 1:
        return 0.0
    return max(longest_same_app_run(executed_apps) - 1, 0) / (lmax - 1)


def score_episode(
    nodes: list[str],
    edges: list,
    app_of: dict[str, str],
    executed: list[str],
    outcome: str,
    lmax: int | None = None,
) -> dict[str, float]:
    """Completion (ours and the released value), coherence, success and subtask recall of one run."""
    depths = node_depths(nodes, edges)
    done = set(executed)
    lmax = max_same_app_run(nodes, edges, app_of) if lmax is None else lmax
    return {
        "completion": completion(depths, done),
        "completion_code_compat": completion_code_compat(depths, done),
        "coherence": coherence([app_of[n] for n in executed], lmax),
        "success": float(outcome == "Success"),
        "subtask_recall": len(done) / len(nodes) if nodes else 0.0,
        "lmax": lmax,
    }
