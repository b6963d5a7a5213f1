"""The grammar: sampler, tokens, parser and the black-box objective on hand-checkable expressions."""

import numpy as np
import pytest

from paper_pipelines.pipelines.les import grammar, objective
from paper_pipelines.pipelines.les.grammar import Node


class FixedDraws:
    """An rng whose uniform draws are given: rule index = int(u * number of rules)."""

    def __init__(self, draws):
        self.draws = np.asarray(draws, dtype=float)

    def random(self, n):
        out = np.zeros(n)
        out[: min(n, len(self.draws))] = self.draws[:n]
        return out


def test_derive_follows_the_leftmost_rules():
    # S -> T (3 of 4), T -> 'x' (3 of 7)
    assert grammar.derive(FixedDraws([0.99, 0.5]), 5) == "x"
    # S -> S '+' T, S -> T, T -> '1', T -> 'sin(' S ')', S -> T, T -> '3'
    draws = [0.0, 0.99, 4 / 7 + 0.01, 1 / 7 + 0.01, 0.99, 6 / 7 + 0.01]
    assert grammar.derive(FixedDraws(draws), 6) == "1+sin(3)"
    # the same derivation with one production too few, or a string that grows past max_len
    assert grammar.derive(FixedDraws(draws), 5) is None
    assert grammar.derive(FixedDraws(draws), 6, max_len=7) is None
    assert grammar.derive(FixedDraws(draws), 6, max_len=8) == "1+sin(3)"


def test_sampled_expressions_are_distinct_short_and_valid():
    expressions = grammar.sample_expressions(200, 15, 19, np.random.default_rng(0))
    assert len(expressions) == len(set(expressions)) == 200
    assert max(len(e) for e in expressions) <= 19
    assert all(grammar.is_valid(e) for e in expressions)
    assert expressions == grammar.sample_expressions(200, 15, 19, np.random.default_rng(0))


def test_sampler_stops_when_too_few_expressions_exist():
    # with one production only x, 1, 2, 3 can be derived
    with pytest.raises(
        ValueError, match=r"only 4 distinct expressions after 100 draws.*les\.data\.n"
    ):
        grammar.sample_expressions(5, 2, 19, np.random.default_rng(0), max_tries=20)
    assert sorted(grammar.sample_expressions(4, 2, 19, np.random.default_rng(0))) == list("123x")


def test_tokens_round_trip_with_padding():
    tokens = grammar.tokenize(["sin(x)", "3"], length=8)
    assert tokens.shape == (2, 8)
    assert list(tokens[0]) == [9, 10, 11, 2, 0, 3, 14, 14]
    assert list(tokens[1]) == [6] + [14] * 7
    assert grammar.detokenize(tokens[0]) == "sin(x)"
    assert grammar.detokenize([0, 14, 1, 14, 4]) == "x+1"  # padding dropped anywhere


def test_a_character_outside_the_vocabulary_is_named():
    with pytest.raises(
        ValueError, match=r"character '-' at position 1.*vocabulary 'x\+\(\)123\*/sinep'"
    ):
        grammar.tokenize(["x-1"])
    with pytest.raises(ValueError, match="more than the sequence length 3"):
        grammar.tokenize(["x+1+2"], length=3)


@pytest.mark.parametrize(
    "text", ["x", "sin(x)", "exp((x))", "x/3", "1+2*3", "sin(exp(x))*2", "((1))"]
)
def test_valid_expressions_parse(text):
    assert grammar.is_valid(text)


@pytest.mark.parametrize(
    "text", ["", "x+", "+x", "sin(x", "()", "s", "xx", "sin(x))", "exp()", "x**2", "(x)3", "sinx"]
)
def test_invalid_expressions_do_not(text):
    assert not grammar.is_valid(text)


def test_parse_trees_use_the_usual_precedence():
    one, two, three, x = Node("1"), Node("2"), Node("3"), Node("x")
    assert grammar.parse("1+2*3") == Node("+", (one, Node("*", (two, three))))
    assert grammar.parse("1*2+3") == Node("+", (Node("*", (one, two)), three))
    assert grammar.parse("1/2/3") == Node("/", (Node("/", (one, two)), three))
    assert grammar.parse("1+2+3") == Node("+", (Node("+", (one, two)), three))
    assert grammar.parse("sin(x)") == Node("sin", (x,))
    assert grammar.parse("exp(1+x)") == Node("exp", (Node("+", (one, x)),))


def test_evaluation_matches_numpy_on_the_grid():
    x = objective.GRID
    assert x.shape == (1000,) and x[0] == -10 and x[-1] == 10
    assert np.allclose(objective.evaluate(grammar.parse("1+2*3")), 7.0)
    assert np.allclose(objective.evaluate(grammar.parse("3/2")), 1.5)
    assert np.allclose(objective.evaluate(grammar.parse("x*x+1")), x * x + 1)
    assert np.allclose(objective.evaluate(grammar.parse("exp(x)/2")), np.exp(x) / 2)
    assert np.allclose(objective.evaluate(grammar.parse("sin(x)+x")), np.sin(x) + x)
    assert np.allclose(objective.target(), 1 / 3 + x + np.sin(x * x))


def test_objective_is_minus_log_one_plus_capped_mse():
    assert objective.objective("1/3+x+sin(x*x)") == pytest.approx(0.0, abs=1e-12)
    x = objective.GRID
    mse = np.mean((x - (1 / 3 + x + np.sin(x * x))) ** 2)
    assert objective.objective("x") == pytest.approx(-np.log1p(mse))
    # exp(exp(exp(x))) overflows to inf: the MSE is capped at 1000
    assert objective.objective("exp(exp(exp(x)))") == pytest.approx(-np.log(1001.0))
    assert objective.WORST == pytest.approx(-np.log(1001.0))  # noqa: SIM300
    # inf / inf is NaN: counted as the cap too
    assert objective.objective("exp(exp(exp(x)))/exp(exp(exp(x)))") == objective.WORST
    mse_big = np.mean((3 * np.exp(x) - objective.target()) ** 2)
    assert mse_big > 1000 and objective.objective("3*exp(x)") == objective.WORST
    assert np.allclose(
        objective.objectives(["x", "1/3+x+sin(x*x)"]), [np.log1p(-0) - np.log1p(mse), 0]
    )
    with pytest.raises(SyntaxError):
        objective.objective("x+")


class CountingRng:
    """A generator that counts its calls (one per derivation)."""

    def __init__(self, seed):
        self.rng, self.calls = np.random.default_rng(seed), 0

    def random(self, n):
        self.calls += 1
        return self.rng.random(n)


def test_the_sampler_gives_up_after_max_tries_draws_per_expression():
    rng = CountingRng(0)
    with pytest.raises(ValueError, match=r"only 4 distinct expressions after 100 draws"):
        grammar.sample_expressions(5, 2, 19, rng, max_tries=20)
    assert rng.calls == 100
    # by default 200 draws per wanted expression
    rng = CountingRng(0)
    with pytest.raises(ValueError, match=r"after 1000 draws; lower les\.data\.n \(got 5\)"):
        grammar.sample_expressions(5, 2, 19, rng)
    assert rng.calls == 1000


def test_expressions_of_exactly_max_len_are_kept():
    assert sorted(grammar.sample_expressions(4, 2, 1, np.random.default_rng(0))) == list("123x")
    three = grammar.sample_expressions(30, 8, 3, np.random.default_rng(0))
    assert max(len(e) for e in three) == 3


def test_refusals_say_how_to_fix_the_input():
    with pytest.raises(ValueError, match="; remove the expression or fix the input$"):
        grammar.tokenize(["x-1"])
    with pytest.raises(SyntaxError, match=r"^expected '\)' at 5 in 'sin\(x'$"):
        grammar.parse("sin(x")
    with pytest.raises(SyntaxError, match=r"^expected a term at 2 in 'x\+'$"):
        grammar.parse("x+")


def test_an_unknown_operator_is_refused():
    for op in ("X", "pow"):
        with pytest.raises(ValueError, match=f"unknown operator '{op}'"):
            objective.evaluate(Node(op))
