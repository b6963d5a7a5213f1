"""`make mutate`: scoring rules on hand-made verdicts, and one real mutmut run on a toy paper."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from paper_pipelines.ops import mutate


def test_a_mutant_no_test_reaches_counts_as_survived_and_untested_ones_are_left_out():
    statuses = {
        "m.x_f__mutmut_1": "killed",
        "m.x_f__mutmut_2": "timeout",
        "m.x_f__mutmut_3": "survived",
        "m.x_g__mutmut_1": "no tests",
        "m.x_g__mutmut_2": "not checked",
        "m.x_h__mutmut_1": "survived",
    }
    result = mutate.score(statuses, {"m.x_h__mutmut_1": "log text only"})
    assert (result["killed"], result["survived"], result["equivalent"]) == (2, 2, 1)
    assert (result["tested"], result["untested"], result["complete"]) == (5, 1, False)
    assert result["no_tests"] == 1
    assert result["score"] == 0.5
    assert result["survivors"] == ["m.x_f__mutmut_3", "m.x_g__mutmut_1"]
    # while mutants remain untested the score is a sample's and carries its interval
    low, high = result["score_ci95"]
    assert low < 0.5 < high


def test_a_complete_run_has_no_interval_and_stale_equivalents_are_listed():
    result = mutate.score({"a": "killed", "b": "survived"}, {"gone": "was a log line"})
    assert result["complete"] and "score_ci95" not in result
    assert result["stale_equivalent_entries"] == ["gone"]


def test_an_unknown_mutmut_status_stops_the_run_rather_than_being_guessed():
    with pytest.raises(SystemExit, match="does not know"):
        mutate.score({"a": "exploded"}, {})


def test_wilson_interval_matches_the_textbook_values():
    # 8 of 10: Wilson 95 % interval (0.490, 0.943), e.g. Agresti & Coull (1998), table 1 method
    low, high = mutate.wilson(8, 10)
    assert low == pytest.approx(0.4902, abs=1e-4) and high == pytest.approx(0.9433, abs=1e-4)
    assert mutate.wilson(0, 0) == (0.0, 1.0)


def test_the_draw_order_is_a_seeded_shuffle_independent_of_input_order():
    names = [f"m{i}" for i in range(50)]
    first = mutate.draw_order(names, seed=3)
    assert sorted(first) == sorted(names) and first != sorted(names)
    assert mutate.draw_order(list(reversed(names)), seed=3) == first
    assert mutate.draw_order(names, seed=4) != first


def test_an_equivalent_mutant_needs_a_reason(tmp_path):
    listed = tmp_path / "mutants_equivalent.txt"
    listed.write_text("# header\nm.x_f__mutmut_1  # only the log text changes\n")
    assert mutate.read_equivalent(listed) == {"m.x_f__mutmut_1": "only the log text changes"}
    listed.write_text("m.x_f__mutmut_1\n")
    with pytest.raises(SystemExit, match="needs a reason"):
        mutate.read_equivalent(listed)


def test_parse_results_reads_mutmut_listing():
    text = "    a.x_f__mutmut_1: killed\n    a.x_f__mutmut_2: no tests\nnoise\n"
    assert mutate.parse_results(text) == {
        "a.x_f__mutmut_1": "killed",
        "a.x_f__mutmut_2": "no tests",
    }


TOY_MATHS = """
def mean_gap(xs, ys):
    return sum(xs) / len(xs) - sum(ys) / len(ys)


def clip(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x


def untested(x):
    return x * 2 + 1
"""

TOY_TESTS = """
from paper_pipelines.pipelines.toy.maths import clip, mean_gap


def test_mean_gap():
    assert mean_gap([1.0, 3.0], [1.0]) == 1.0
    assert mean_gap([2.0], [1.0, 5.0]) == -1.0


def test_clip_low():
    assert clip(-1, 0, 10) == 0
    assert clip(5, 0, 10) == 5
"""


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    """A project with one paper `toy`: two method functions partly tested, one untested, wiring excluded."""
    pkg = tmp_path / "src" / "paper_pipelines" / "pipelines" / "toy"
    pkg.mkdir(parents=True)
    for init in (pkg.parent.parent, pkg.parent, pkg):
        (init / "__init__.py").write_text("")
    (pkg / "maths.py").write_text(TOY_MATHS)
    (pkg / "nodes.py").write_text("def node(x):\n    return x + 1\n")
    (pkg / "study.py").write_text("def grid(n):\n    return list(range(n))\n")
    tests = tmp_path / "tests" / "pipelines" / "toy"
    tests.mkdir(parents=True)
    (tests / "test_maths.py").write_text(TOY_TESTS)
    (tests / "mutation.toml").write_text('exclude = ["study.py"]  # the experiment grid: wiring\n')
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "toy"\nversion = "0"\n')
    return tmp_path


def test_method_modules_leave_out_wiring_and_the_papers_exclusions(toy):
    assert [p.name for p in mutate.method_modules(toy, "toy")] == ["maths.py"]
    (toy / "tests/pipelines/toy/mutation.toml").write_text('exclude = ["studdy.py"]\n')
    with pytest.raises(SystemExit, match="not modules of"):
        mutate.method_modules(toy, "toy")
    (toy / "tests/pipelines/toy/mutation.toml").write_text('excluded = ["study.py"]\n')
    with pytest.raises(SystemExit, match="unknown key"):
        mutate.method_modules(toy, "toy")
    with pytest.raises(SystemExit, match="unknown paper 'nope'; known: toy"):
        mutate.method_modules(toy, "nope")


@pytest.mark.timeout(300)
def test_a_real_mutmut_run_scores_resumes_and_rescores_survivors_after_new_tests(toy):
    first = mutate.run(toy, "toy", max_children=1, budget=240, chunk=100)
    assert (
        first["complete"] and first["modules"] == ["maths.py"] and first["excluded"] == ["study.py"]
    )
    survivors = first["survivors"]
    # `untested` is reached by no test; the high side of `clip` is never exercised
    assert any(".x_untested__mutmut_" in s for s in survivors)
    assert first["no_tests"] == sum(".x_untested__mutmut_" in s for s in survivors)
    assert any(".x_clip__mutmut_" in s for s in survivors)
    assert not any(".x_mean_gap__mutmut_" in s for s in survivors)
    assert first["killed"] > 0 and first["score"] == round(
        first["killed"] / (first["killed"] + first["survived"]), 4
    )
    on_disk = json.loads((toy / "docs/mutation/toy.json").read_text())
    assert on_disk["survivors"] == survivors

    # new tests for clip's high side and for `untested`; survivors re-tested, nothing else
    (toy / "tests/pipelines/toy/test_more.py").write_text(
        textwrap.dedent(
            """
            from paper_pipelines.pipelines.toy.maths import clip, untested

            def test_clip_high():
                assert clip(11, 0, 10) == 10
                assert clip(10, 0, 10) == 10

            def test_untested():
                assert untested(3) == 7
                assert untested(0) == 1
            """
        )
    )
    equivalent = next(s for s in survivors if ".x_clip__mutmut_" in s)
    (toy / "tests/pipelines/toy/mutants_equivalent.txt").write_text(
        f"{equivalent}  # for the test\n"
    )
    second = mutate.run(toy, "toy", max_children=1, budget=240, chunk=100, rerun_survivors=True)
    assert second["equivalent"] == 1
    assert second["survived"] < first["survived"] - 1
    assert second["killed"] > first["killed"]
    assert second["no_tests"] == 0
    assert second["seconds"] >= first["seconds"]


def test_a_rerun_tests_the_earlier_survivors_first_then_untested_ones_in_their_seeded_order():
    statuses = {f"m{i}": "not checked" for i in range(20)}
    statuses.update({"s1": "survived", "s2": "no tests", "k1": "killed", "e1": "survived"})
    equivalent = {"e1": "a log message"}
    order = mutate.sitting_order(statuses, equivalent, rerun_survivors=True, seed=3)
    assert sorted(order[:2]) == ["s1", "s2"]
    assert order[2:] == mutate.draw_order([f"m{i}" for i in range(20)], seed=3)
    assert "k1" not in order and "e1" not in order
    plain = mutate.sitting_order(statuses, equivalent, rerun_survivors=False, seed=3)
    assert plain == order[2:]
