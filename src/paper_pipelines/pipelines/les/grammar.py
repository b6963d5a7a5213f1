"""The arithmetic-expression grammar of the benchmark (Kusner et al. 2017, as in OmerRonen/les).

S -> S '+' T | S '*' T | S '/' T | T ;  T -> '(' S ')' | 'sin(' S ')' | 'exp(' S ')' | 'x' | '1' | '2' | '3'

Expressions are sampled by leftmost derivation (uniform choice among a non-terminal's rules, at most
``max_productions`` rules and ``max_len`` characters), tokenised one character per token over the
official 15-token vocabulary (space = padding) and parsed back by recursive descent: a decoding is
*valid* when the grammar derives it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

# the official vocabulary, in its order (les/utils/datasets/expressions.py); " " pads to L = 19
VOCAB: tuple[str, ...] = ("x", "+", "(", ")", "1", "2", "3", "*", "/", "s", "i", "n", "e", "p", " ")
PAD = " "
MAX_LEN = 19
TOKEN_INDEX = {token: i for i, token in enumerate(VOCAB)}

# right-hand sides per non-terminal; upper-case strings are non-terminals
RULES: dict[str, tuple[tuple[str, ...], ...]] = {
    "S": (("S", "+", "T"), ("S", "*", "T"), ("S", "/", "T"), ("T",)),
    "T": (("(", "S", ")"), ("sin(", "S", ")"), ("exp(", "S", ")"), ("x",), ("1",), ("2",), ("3",)),
}
FUNCTIONS = ("sin(", "exp(")
LEAVES = ("x", "1", "2", "3")


def derive(rng: np.random.Generator, max_productions: int, max_len: int = 10**9) -> str | None:
    """One leftmost derivation from S with uniform rule choice; None when it needs more than
    ``max_productions`` rules or its string grows past ``max_len`` characters.

    Expanding the leftmost non-terminal first is a pre-order walk: a stack of pending symbols.
    """
    draws = rng.random(max_productions)  # one call per derivation: scalar draws dominate the cost
    pending, out, used, length = ["S"], [], 0, 0
    while pending:
        symbol = pending.pop()
        if symbol not in RULES:
            out.append(symbol)
            length += len(symbol)
            if length > max_len:
                return None
            continue
        if used == max_productions:
            return None
        options = RULES[symbol]
        pending.extend(reversed(options[int(draws[used] * len(options))]))
        used += 1
    return "".join(out)


def sample_expressions(
    n: int, max_productions: int, max_len: int, rng: np.random.Generator, max_tries: int = 200
) -> list[str]:
    """``n`` distinct expressions of at most ``max_len`` characters, in the order first drawn."""
    seen: dict[str, None] = {}
    tries = 0
    while len(seen) < n:
        tries += 1
        if tries > max_tries * n:
            raise ValueError(
                f"only {len(seen)} distinct expressions after {tries - 1} draws; lower les.data.n "
                f"(got {n}) or raise les.data.max_productions / max_len"
            )
        expression = derive(rng, max_productions, max_len)
        if expression is not None and len(expression) <= max_len:
            seen.setdefault(expression)
    return list(seen)


def tokenize(expressions: Sequence[str], length: int = MAX_LEN) -> np.ndarray:
    """Token ids (n, length), one character per token, padded with the space token."""
    out = np.full((len(expressions), length), TOKEN_INDEX[PAD], dtype=np.int64)
    for row, expression in enumerate(expressions):
        if len(expression) > length:
            raise ValueError(
                f"expression {expression!r} has {len(expression)} characters, more than the "
                f"sequence length {length}"
            )
        for col, char in enumerate(expression):
            if char not in TOKEN_INDEX:
                raise ValueError(
                    f"expression {expression!r} has the character {char!r} at position {col}, "
                    f"which is not in the grammar's vocabulary {''.join(VOCAB[:-1])!r}; remove the "
                    "expression or fix the input"
                )
            out[row, col] = TOKEN_INDEX[char]
    return out


def detokenize(tokens: Iterable[int]) -> str:
    """Token ids back to a string; padding is dropped wherever it is (as the official one_hot_to_eq)."""
    return "".join(VOCAB[int(t)] for t in tokens).replace(PAD, "")


@dataclass(frozen=True)
class Node:
    """A parse tree: an operator with two children, a function with one, or a leaf."""

    op: str
    children: tuple[Node, ...] = ()


class _Parser:
    """Recursive descent for S -> T (op T)*, the language of the left-recursive S rules.

    The grammar has no precedence, but the official objective evaluates the string with numexpr, i.e.
    with the usual one (* and / before +): the tree is built that way (sums of products).
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def parse(self) -> Node:
        tree = self.expression()
        if self.pos != len(self.text):
            raise SyntaxError(f"unexpected {self.text[self.pos]!r} at {self.pos}")
        return tree

    def _next_in(self, ops: str) -> bool:
        return self.pos < len(self.text) and self.text[self.pos] in ops

    def expression(self) -> Node:
        tree = self.product()
        while self._next_in("+"):
            self.pos += 1
            tree = Node("+", (tree, self.product()))
        return tree

    def product(self) -> Node:
        tree = self.term()
        while self._next_in("*/"):
            op = self.text[self.pos]
            self.pos += 1
            tree = Node(op, (tree, self.term()))
        return tree

    def term(self) -> Node:
        rest = self.text[self.pos :]
        for function in FUNCTIONS:
            if rest.startswith(function):
                self.pos += len(function)
                return Node(function[:-1], (self.closed(),))
        if rest.startswith("("):
            self.pos += 1
            return self.closed()
        if rest[:1] in LEAVES and rest:
            self.pos += 1
            return Node(rest[0])
        raise SyntaxError(f"expected a term at {self.pos} in {self.text!r}")

    def closed(self) -> Node:
        inner = self.expression()
        if self.text[self.pos : self.pos + 1] != ")":
            raise SyntaxError(f"expected ')' at {self.pos} in {self.text!r}")
        self.pos += 1
        return inner


def parse(expression: str) -> Node:
    """The parse tree of an expression; SyntaxError when the grammar does not derive it."""
    return _Parser(expression).parse()


def is_valid(expression: str) -> bool:
    """Validity of a decoding: the grammar derives the (padding-free) string."""
    try:
        parse(expression)
    except SyntaxError:
        return False
    return True
