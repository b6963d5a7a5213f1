"""The expressions black box: -log(1 + min(MSE, 1000)) against 1/3 + x + sin(x * x) on 1000 points.

Evaluated from the parse tree with NumPy (never ``eval``): the official code uses numexpr on the string.
"""

from __future__ import annotations

import numpy as np

from .grammar import Node, parse

GRID = np.linspace(-10.0, 10.0, 1000)
MSE_CAP = 1000.0
WORST = -float(np.log1p(MSE_CAP))  # the objective of anything at or beyond the cap


def evaluate(tree: Node, x: np.ndarray = GRID) -> np.ndarray:
    """Values of a parse tree on the grid (float64; overflow gives inf, as numexpr does)."""
    op = tree.op
    if op == "x":
        return x
    if op in "123":
        return np.full_like(x, float(op))
    args = [evaluate(child, x) for child in tree.children]
    with np.errstate(all="ignore"):
        if op == "sin":
            return np.sin(args[0])
        if op == "exp":
            return np.exp(args[0])
        if op == "+":
            return args[0] + args[1]
        if op == "*":
            return args[0] * args[1]
        if op == "/":
            return args[0] / args[1]
    raise ValueError(f"unknown operator {op!r}")


def target(x: np.ndarray = GRID) -> np.ndarray:
    """The target function 1/3 + x + sin(x * x)."""
    return 1.0 / 3.0 + x + np.sin(x * x)


def objective(expression: str) -> float:
    """-log(1 + min(MSE, 1000)); a non-finite MSE (inf - inf, 0/0) counts as the cap.

    Raises SyntaxError for an expression the grammar does not derive (callers check validity first).
    """
    values = evaluate(parse(expression))
    with np.errstate(all="ignore"):
        mse = float(np.mean((values - target()) ** 2))
    if not np.isfinite(mse):
        mse = MSE_CAP
    return -float(np.log1p(min(mse, MSE_CAP)))


def objectives(expressions: list[str]) -> np.ndarray:
    """The objective of each expression (all must be valid)."""
    return np.array([objective(e) for e in expressions], dtype=np.float64)
