"""A paper's claims as data: each claim, the metric condition that says "reproduced", the paper's number.

Each paper declares ``CLAIMS`` in its report.py beside ``METRICS``; its evaluate stage writes the versioned
``<slug>.claims`` table from the run's metrics with :func:`evaluate_claims`, and the scoreboard
(``make report``) and the pages are written from those tables, never typed.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

_COMPARE = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}
_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_FUNCTIONS = {"abs": abs, "min": min, "max": max, "log": math.log}


@dataclass(frozen=True)
class Claim:
    """One claim of a paper, checked on every run.

    ``condition`` is an expression over metric keys (``ppl_dlp < ppl_owl``, ``abs(x - 0.5) < 0.02``;
    comparisons, arithmetic, ``and``/``or``/``not``, ``abs``/``min``/``max``/``log``). ``paper`` holds the
    paper's own number(s) by metric key where one exists, ``source`` the table or figure they come from.
    ``gates`` marks a spec acceptance check; other claims are reported only.
    """

    id: str
    statement: str
    condition: str
    paper: Mapping[str, float | str] = field(default_factory=dict)
    source: str = ""
    gates: bool = True

    def __post_init__(self) -> None:
        _check_syntax(self.condition, self.id)

    @property
    def metric_keys(self) -> tuple[str, ...]:
        """The metric names the condition reads, in order of appearance."""
        names = [
            n.id
            for n in ast.walk(ast.parse(self.condition, mode="eval"))
            if isinstance(n, ast.Name) and n.id not in _FUNCTIONS
        ]
        return tuple(dict.fromkeys(names))


_ALLOWED = (
    ast.Expression, ast.Compare, ast.BoolOp, ast.And, ast.Or, ast.UnaryOp, ast.Not, ast.USub,
    ast.BinOp, ast.Constant, ast.Name, ast.Load, ast.Call, *_COMPARE, *_BINARY,
)  # fmt: skip


def _check_syntax(condition: str, claim_id: str) -> None:
    """A condition is arithmetic and comparisons over metric names: nothing else can run."""
    for node in ast.walk(ast.parse(condition, mode="eval")):
        call_ok = not isinstance(node, ast.Call) or (
            isinstance(node.func, ast.Name) and node.func.id in _FUNCTIONS
        )
        if not isinstance(node, _ALLOWED) or not call_ok:
            raise ValueError(
                f"unsupported expression {ast.unparse(node)!r} in the condition of claim {claim_id}: "
                "use metric names, numbers, comparisons, + - * / **, and/or/not, abs/min/max/log"
            )


def _evaluate(node: ast.AST, values: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, values)
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | bool):
        return node.value
    if isinstance(node, ast.Name):
        return values[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_evaluate(node.operand, values)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return not _evaluate(node.operand, values)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return _BINARY[type(node.op)](_evaluate(node.left, values), _evaluate(node.right, values))
    if isinstance(node, ast.BoolOp):
        results = [_evaluate(v, values) for v in node.values]
        return all(results) if isinstance(node.op, ast.And) else any(results)
    if isinstance(node, ast.Compare):
        left = _evaluate(node.left, values)
        for op, right_node in zip(node.ops, node.comparators, strict=True):
            right = _evaluate(right_node, values)
            if type(op) not in _COMPARE or not _COMPARE[type(op)](left, right):
                return False
            left = right
        return True
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
    ):
        return _FUNCTIONS[node.func.id](*(_evaluate(a, values) for a in node.args))
    raise ValueError(f"unsupported expression {ast.unparse(node)!r} in a claim condition")


def claim_holds(claim: Claim, metrics: Mapping[str, Any], slug: str = "") -> bool:
    """Whether ``claim.condition`` is true for ``metrics``; a metric the run lacks is an error."""
    missing = [k for k in claim.metric_keys if k not in metrics]
    if missing:
        raise KeyError(
            f"claim {slug}:{claim.id} reads {missing}, which {slug}.metrics does not contain; add them "
            f"to the metrics (and METRICS) or fix the claim in paper_pipelines/pipelines/{slug}/report.py"
        )
    values = {k: metrics[k] for k in claim.metric_keys}
    if any(
        v is None for v in values.values()
    ):  # a NaN metric (None in JSON) cannot reproduce a claim
        return False
    return bool(_evaluate(ast.parse(claim.condition, mode="eval"), values))


def evaluate_claims(claims: Iterable[Claim], metrics: Mapping[str, Any], slug: str) -> pd.DataFrame:
    """The ``<slug>.claims`` table: one row per claim with our values, the paper's, and whether it holds."""
    rows = []
    for claim in claims:
        holds = claim_holds(claim, metrics, slug)
        rows.append(
            {
                "claim": claim.id,
                "statement": claim.statement,
                "condition": claim.condition,
                "ours": ", ".join(f"{k} = {_fmt(metrics[k])}" for k in claim.metric_keys),
                "paper": ", ".join(f"{k} = {_fmt(v)}" for k, v in claim.paper.items()),
                "source": claim.source,
                "gates": claim.gates,
                "holds": holds,
            }
        )
    columns = ["claim", "statement", "condition", "ours", "paper", "source", "gates", "holds"]
    return pd.DataFrame(rows, columns=columns)


def _fmt(value: Any) -> str:
    """Four significant digits for floats, as the pages print them."""
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
